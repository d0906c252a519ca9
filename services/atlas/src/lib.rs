//! The atlas context: the Ultimate History Map's published data and section review workflow,
//! event-sourced.
//!
//! - Pure core: [`snapshot`] and [`validation`] (what an editor commits), [`hashing`],
//!   [`bbox`], [`binding`], the section workflow ([`section`]), the published rows
//!   ([`published`]) and the approval that joins them ([`review`]); the users who may call
//!   the workflow ([`user`]).
//! - Edges: the HTTP routes ([`router`], served under `/atlas`), the projector
//!   ([`projection()`]) that builds the spec's seven tables and the history tables in schema
//!   `atlas`, and the read queries ([`read`]) both use; [`import`] carries a History Map SQLite
//!   database into the log.

pub mod audit;
pub mod bbox;
pub mod binding;
pub mod hashing;
pub mod http;
pub mod import;
pub mod projection;
pub mod published;
pub mod read;
pub mod review;
pub mod section;
pub mod snapshot;
pub mod streams;
pub mod user;
pub mod validation;

pub use audit::state_at;
pub use http::router;
pub use projection::projection;
