//! The resources context: MindTouch Deki "Lyons" files and properties with revisions,
//! event-sourced.
//!
//! - Pure core: a resource's stream ([`resource`]: state, `decide`, `evolve`, ETags), the
//!   integer ids taken from the counter stream ([`ids`]), the name index per parent ([`names`]).
//! - Content ([`content`]): stored once per sha256, inline up to a size, else in a folder.
//! - Edges: the operations that compose those deciders into one append ([`operation`]), the
//!   projector ([`projection()`]) building Deki's three tables in schema `resources`, the read
//!   queries ([`read`]) and Deki's REST API under `/resources/@api/deki` ([`router`]).

pub mod audit;
pub mod content;
pub mod http;
pub mod ids;
pub mod names;
pub mod operation;
pub mod projection;
pub mod read;
pub mod resource;
pub mod states;
pub mod streams;

pub use audit::state_at;
pub use http::router;
pub use projection::projection;
