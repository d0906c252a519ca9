//! The event log: Postgres is the system of record, NATS JetStream its broadcast.
//!
//! - [`EventStore`] appends events to one or more streams in one transaction, with per-stream
//!   expected versions, idempotency keys and sha256 hash chains, and reads them back by stream
//!   or by global position ([`store`], [`append`]).
//! - Appends are serialised by one global advisory lock and grouped: concurrent commands of a
//!   process share one transaction, each keeping its own version checks and outcome. Because
//!   every writer holds the lock until its commit is visible, global positions are gapless and
//!   commit in order, so a reader by position can never pass over an event that commits later
//!   (`writer/`).
//! - [`relay`] publishes the log to JetStream in position order, once in effect.
//! - [`limits`]: the log accepts only events the relay and every read model can carry.
//! - [`tree`]: the signed Merkle tree over every position, its proofs and heads.
//! - [`audit`] walks the hash chains; [`query`] answers an auditor's reads (filters, streams).

pub mod append;
pub mod audit;
pub mod budget;
pub mod durable;
pub mod error;
pub mod head;
pub mod limits;
pub mod migrations;
pub mod notify;
mod plan;
pub mod query;
pub mod recent;
pub mod relay;
pub mod rows;
pub mod store;
pub mod tree;
mod writer;

pub use append::{AppendError, AppendRequest, Appended, StoredReply, StreamAppend};
pub use error::LogError;
pub use limits::{Limits, Refusal};
pub use store::{AppendOptions, EventStore, KeptCommand};

/// The key of the transaction-level advisory lock every append holds from before it reads
/// stream versions until its commit is visible; `log.events` refuses inserts without it.
pub const APPEND_LOCK_KEY: i64 = 80_455_301;

/// The Postgres channel on which each append announces its last global position.
pub const LOG_CHANNEL: &str = "palimpsest_log";
