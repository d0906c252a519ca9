//! The log's Merkle tree (decision 0024): one leaf per position, kept off the append path.
//!
//! - [`LogSigner`]: the log's Ed25519 key; the appender signs each batch's leaves with it.
//! - [`leaf`]: an event's leaf, recomputed from its content.
//! - [`maker`]: the tree maker follows the log, checks every batch's signature, stores the
//!   tree's complete nodes and signs heads.
//! - [`nodes`]: what the tree keeps (its nodes from level 4 up, and its size) and how the
//!   nodes below are made again from the events.
//! - [`proof`]: inclusion and consistency proofs from the stored nodes, and the kept heads.
//! - [`since`]: what an auditor's `verify --since` checks against a head it kept.

mod frontier;
pub mod leaf;
pub mod maker;
pub mod nodes;
pub mod proof;
mod signer;
pub mod since;

pub use frontier::Frontier;
pub use signer::{BadSigningKey, LogSigner};

/// The session advisory lock the one tree maker of a log holds.
pub const TREE_LOCK_KEY: i64 = 80_455_302;
