//! The docs context: Couchbase Sync Gateway's document model behind CouchDB's replication API,
//! event-sourced.
//!
//! - Pure core: revision ids ([`rev`]), the revision tree ([`tree`]), byte-faithful bodies
//!   ([`body`]), stream names ([`streams`]) and the aggregates, each a folder with its state,
//!   pure `decide`/`evolve` and its command through the platform's runner: a document's stream
//!   ([`document`]), `_local/` documents ([`local`]), databases ([`database`]), users and
//!   roles ([`principal`]). [`command`] is the context's glue to the runner.
//! - Rooms of the context: attachments and their content store ([`attachments`], [`delivery`]),
//!   the sync function ([`sync`]), design documents' views, filters and validation
//!   ([`design`]), who the caller is and what it may read ([`access`]), what a
//!   revoked grant took away ([`revocation`]), the read model's shared queries ([`read`]), where a request's time goes ([`phases`]).
//! - Edges: the projector ([`projection()`]) building Sync Gateway's key-value form in schema
//!   `docs`, and the CouchDB replication API under `/docs` ([`router`]: routes, extraction and
//!   answers only).

pub mod access;
pub mod attachments;
pub mod audit;
pub mod body;
pub mod command;
pub mod counts;
pub mod database;
pub mod delivery;
pub mod design;
pub mod document;
pub mod http;
pub mod local;
pub mod phases;
pub mod principal;
pub mod projection;
pub mod read;
pub mod rev;
pub mod revocation;
pub mod settings;
pub mod stored;
pub mod streams;
pub mod sync;
pub mod tree;

pub use audit::state_at;
pub use http::{router, router_with};
pub use projection::projection;
pub use settings::Settings;
