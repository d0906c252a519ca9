//! The pads context: Etherpad's pads, groups, authors and sessions, event-sourced, with
//! Etherpad's HTTP API.
//!
//! - [`domain`]: the pure core (states folded from events, deciders).
//! - [`changes`]: the easysync operations, on changesets in wire form.
//! - [`store`]: Etherpad's key-value store, keys and value shapes, byte for byte.
//! - [`import`]: `setHTML`, Etherpad's HTML import (its content collector).
//! - [`stream_keys`]: the stream keys of tokens and mappers (the empty mapper included).
//! - [`projection`]: the projector building `pads.store` from the log.
//! - [`api`]: Etherpad's HTTP API (`/api/1.3.0/<function>`), plus the endpoint where editing
//!   clients submit changesets against a base revision.

pub mod api;
pub mod changes;
pub mod domain;
pub mod export;
pub mod ids;
pub mod import;
pub mod js_number;
pub mod js_object;
pub mod projection;
pub mod reads;
pub mod service;
pub mod store;
pub mod stream_keys;

pub use api::router;
pub use projection::projection;
pub use service::folding::state_at;
