//! The one command path every context writes through.
//!
//! ```text
//! HTTP route ─> parse + validate (4xx, nothing appended)
//!            ─> CommandRunner::run
//!                 ├─ Idempotency-Key seen? answer the stored reply (another body: 422)
//!                 ├─ Attempt: load the streams the command reads (cached states, caught up
//!                 │  from the log, versions recorded)
//!                 ├─ decide (pure, the context's) -> Decision { events per stream, reply }
//!                 ├─ one append, each stream at the version read; the reply stored with the
//!                 │  events under the key, in the same transaction
//!                 ├─ a stream moved meanwhile? decide again from fresh state (bounded) -> 409
//!                 └─ wait until the context's projections show the append (read your writes)
//! ```
//!
//! A call made of several commands ([`CommandRunner::run_call`]) holds its key's turn
//! throughout, runs each command as a keyed step, and keeps its final answer under the key with
//! an append of no event.
//!
//! Contexts own their states ([`StreamState`]), their deciders and their error type; the
//! retry loop, expected versions, idempotency and read-your-writes exist here once.

mod attempt;
mod cache;
mod call;
mod decision;
mod error;
mod openapi;
mod request;
mod runner;

pub use attempt::{Attempt, LoadError, StreamState};
pub use call::{Steps, count_of, count_reply};
pub use decision::{Answer, Decision, Reply};
pub use error::CommandError;
pub use openapi::{document_commands, idempotency_key_parameter, platform_error_schema};
pub use request::{CommandRequest, IDEMPOTENCY_KEY, SEMANTIC_HEADERS, fingerprint_requests};
pub use runner::{Command, CommandRunner};
