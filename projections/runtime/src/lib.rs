//! The projector runtime.
//!
//! A [`Projection`] maps events to read-model writes. The runtime runs it: it keeps the
//! projection's tables and checkpoint in one Postgres schema named after it, applies events in
//! batches with the checkpoint written in the same transaction (so a crash mid-batch applies
//! nothing and a restart applies nothing twice), catches up from the log and then follows it
//! live ([`runner`]), rebuilds it from position 0 into a fresh schema and swaps it in
//! ([`rebuild`]), and lets HTTP handlers wait until their own write is visible ([`watch`]).
//! A projection that cannot apply an event stops there, loudly and visibly, and skips nothing
//! ([`stall`]). The rows and checkpoint live in the log's own database or in one of their own
//! ([`read_database`]). The events come from the log, or from the relay's JetStream stream
//! ([`nats_feed`]). A projection whose writes depend on its events alone plans them as
//! [`statement`]s, and a live batch of it takes one round trip, with the events this process
//! appended taken from memory ([`planned`]); one whose writes depend on rows it reads first plans
//! them after its reads ([`reads`]), and a live batch of it is those reads, then one round trip;
//! any other projection's runner, while busy, takes
//! its next batch's lock before it waits ([`held`]). A read model whose rows each belong to one stream may
//! be split into partitions of its streams, shared out between processes ([`partition`]).

pub mod checkpoint;
mod held;
pub mod nats_feed;
pub mod partition;
mod passed_over;
mod planned;
pub mod projection;
pub mod read_database;
pub mod reads;
pub mod rebuild;
pub mod runner;
pub mod stall;
pub mod statement;
pub mod watch;

pub use nats_feed::{NatsFeed, spawn_nats_runner};
pub use partition::{ensure_partitions, spawn_partitioned_runner};
pub use projection::{Plan, Planner, Projection, ProjectionError, ReadingPlanner};
pub use read_database::ReadDatabase;
pub use reads::Reads;
pub use rebuild::{RebuildReport, rebuild, rebuild_in};
pub use runner::{ensure, ensure_in, spawn_runner, spawn_runner_in};
pub use stall::Stall;
pub use watch::{ProjectionWatch, WaitError};

/// The Postgres channel on which runners announce `name:position` after each batch.
pub const PROJECTION_CHANNEL: &str = "palimpsest_projection";
