//! The atlas context: the Ultimate History Map's published data and section review workflow,
//! event-sourced.
//!
//! - One folder per aggregate: the section workflow ([`section`]), the approval that publishes
//!   a submission across streams ([`review`]), and the users who may call the workflow, with
//!   the caller of a request ([`user`]). Each holds its commands and how they run through the
//!   platform's runner (`command.rs`), its state with its `StreamState` (`state.rs`), its pure
//!   decider (`decide.rs`), its errors and its given/when/then tests. The published entities
//!   and geometries, folded from their own streams, are [`published`]'s.
//! - Pure rooms: [`snapshot`] and [`validation`] (what an editor commits), [`hashing`],
//!   [`bbox`].
//! - Edges: the HTTP routes ([`router`], served under `/atlas`: routes, extraction and answers
//!   only), [`command`] (what every atlas command shares on its way through the platform's
//!   runner), the projector ([`projection()`]) that builds the spec's seven tables and the
//!   history tables in schema `atlas`, and the read queries ([`read`]) both use; [`import`]
//!   carries a History Map SQLite database into the log; [`streams`] names the streams and
//!   [`audit`] folds one as of an event ([`state_at`]).

pub mod audit;
pub mod bbox;
pub mod command;
pub mod hashing;
pub mod http;
pub mod import;
pub mod projection;
pub mod published;
pub mod read;
#[cfg(test)]
mod recorded;
pub mod review;
pub mod section;
pub mod snapshot;
pub mod streams;
pub mod user;
pub mod validation;

pub use audit::state_at;
pub use http::router;
pub use projection::projection;
