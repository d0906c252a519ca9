//! The resources context: MindTouch Deki "Lyons" files and properties with revisions,
//! event-sourced.
//!
//! - Pure core: a resource's stream ([`resource`]: state, `decide`, `evolve`, ETags), the
//!   integer ids taken from the counter stream ([`ids`], with its state), the
//!   name index per parent ([`name`]).
//! - Content ([`content`]): stored once per sha256, inline up to a size, else in a folder.
//! - Operations ([`operation`]): what one request does, composed from the resource, name,
//!   content and id deciders into one append (a changeset may span several resources: a file
//!   and its description property, a name released by one and claimed by another).
//! - Edges: the projector ([`projection()`]) building Deki's three tables in schema
//!   `resources`, the read queries ([`read`]) and Deki's REST API under
//!   `/resources/@api/deki` ([`router`]).

pub mod audit;
pub mod content;
pub mod http;
pub mod ids;
pub mod name;
pub mod operation;
pub mod projection;
pub mod read;
pub mod resource;
pub mod streams;

pub use audit::state_at;
pub use http::router;
pub use projection::projection;
