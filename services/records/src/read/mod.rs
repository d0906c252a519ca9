//! The queries on the row tables (schema `records`): the SQL of each read, its parameters, and
//! the rows it finds, whole or as a stream. Writing those rows as the API's JSON (opening
//! `data` with the site key) is the routes' job (`http/listing.rs`, `http/stream.rs`).
//!
//! Incremental sync: given `v`, a list finds the rows newer than `v`, one per pk — the newest,
//! and of two at the same version the document's row rather than its `del` row — and the
//! answer gives the version the client stores next, `t - DELTA`, where `t` is the listing's
//! time ([`page::Page::started`]).

pub mod documents;
pub mod index;
pub mod page;
pub mod rows;

use tokio_postgres::types::ToSql;

/// The columns every list selects, in this order: rows are read by position ([`column`]),
/// since finding a column by name costs a search per value, 600,000 of them in a large sync.
pub const COLUMNS: &str = "org, pk, v, x, del, data";

/// The positions of [`COLUMNS`].
pub mod column {
    /// `org`.
    pub const ORG: usize = 0;
    /// `pk`.
    pub const PK: usize = 1;
    /// `v`.
    pub const V: usize = 2;
    /// `x`.
    pub const X: usize = 3;
    /// `del`.
    pub const DEL: usize = 4;
    /// `data`.
    pub const DATA: usize = 5;
}

/// A query's parameter, owned: the queries build their parameter lists as they build their SQL.
pub type Param = Box<dyn ToSql + Sync + Send>;
