//! The pads context: Etherpad's pads, groups, authors and sessions, event-sourced, with
//! Etherpad's HTTP API.
//!
//! - [`pad`], [`author`], [`group`], [`session`], [`mapping`]: one folder per kind of stream,
//!   each with its state (folded from events, with its `StreamState` impl), its pure deciders,
//!   its commands and their given/when/then tests. A command may write several of them at
//!   once: it decides one [`outcome::Outcome`] naming every stream it writes, refused with a
//!   [`error::DomainError`] in Etherpad's words.
//! - [`command`]: running a command on the platform's runner (load → decide → append).
//! - [`changes`]: the easysync operations, on changesets in wire form.
//! - [`store`]: Etherpad's key-value store, keys and value shapes, byte for byte.
//! - [`import`]: `setHTML`, Etherpad's HTML import (its content collector).
//! - [`export`]: text and HTML exports (`getText`, `getHTML`, `createDiffHTML`), and the pool
//!   they run in.
//! - [`streams`]: the context's stream names (the empty mapper's key included).
//! - [`projection`]: the projector building `pads.store` from the log; [`read`] reads it.
//! - [`http`]: Etherpad's HTTP API (`/api/1.3.0/<function>`), plus the endpoint where editing
//!   clients submit changesets against a base revision.
//! - [`audit`]: a stream's state at any point of its history (`state_at`).

pub mod audit;
pub mod author;
pub mod changes;
pub mod command;
pub mod error;
pub mod export;
pub mod group;
pub mod http;
pub mod ids;
pub mod import;
pub mod js_number;
pub mod js_object;
pub mod mapping;
pub mod outcome;
pub mod pad;
pub mod projection;
pub mod read;
pub mod session;
pub mod settings;
pub mod store;
pub mod streams;

#[cfg(test)]
mod given;

pub use audit::state_at;
pub use http::{router, router_with};
pub use projection::projection;
pub use settings::Settings;
