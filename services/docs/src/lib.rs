//! The docs context: Couchbase Sync Gateway's document model behind CouchDB's replication API,
//! event-sourced.
//!
//! - Pure core: revision ids ([`rev`]), the revision tree ([`tree`]), a document's stream
//!   ([`document`]), `_local/` documents ([`local`]), databases ([`database`]), byte-faithful
//!   bodies ([`body`]) and stream names ([`streams`]).
//! - Edges: the projector ([`projection()`]) building Sync Gateway's key-value form in schema
//!   `docs`, and the CouchDB replication API under `/docs` ([`router`]).

pub mod attachments;
pub mod audit;
pub mod body;
pub mod database;
pub mod delivery;
pub mod document;
pub mod local;
pub mod projection;
pub mod rev;
pub mod settings;
pub mod stored;
pub mod streams;
pub mod sync;
pub mod tree;
pub mod users;

pub use projection::projection;
pub mod http;

pub use audit::state_at;
pub use http::{router, router_with};
pub use settings::Settings;
