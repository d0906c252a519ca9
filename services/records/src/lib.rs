//! The records context: organisation-scoped documents of declared classes, whose data the
//! database host cannot read, kept in sync incrementally by clients (spec
//! `records-org-store.fr.md`).
//!
//! - Pure core: the spec's hashes ([`hash`]), class declarations ([`class`]), `toRow`
//!   ([`row`]), sealing `data` with the site key ([`seal`]), its msgpack written as JSON
//!   without a `Value` tree ([`transcode`]), the document decider with REGVER,
//!   zombies, `del` rows and unique locks ([`document`]), the session rules of incremental sync
//!   ([`sync`]), the per-class treatments of export / import ([`treatment`]).
//! - Edges: the projector building the row tables in schema `records` ([`projection()`]), the
//!   queries on them ([`read`]) and the generic API `POST /records/api/<function>` ([`router`]).

pub mod audit;
pub mod bulk;
pub mod caller;
pub mod class;
pub mod coded_error;
pub mod command;
pub mod context;
pub mod document;
pub mod error;
pub mod ftp;
pub mod hash;
pub mod http;
pub mod projection;
pub mod purge;
pub mod read;
pub mod retention;
pub mod rotation;
pub mod row;
pub mod seal;
pub mod settings;
pub mod streams;
pub mod sync;
pub mod task;
pub mod tasks;
pub mod token;
pub mod transcode;
pub mod transfer;
pub mod treatment;

pub use audit::{load_schema, state_at};
pub use error::RecordsError;
pub use http::router;
pub use projection::projection;
pub use settings::Settings;
