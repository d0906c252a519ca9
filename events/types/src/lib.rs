//! The published language of Palimpsest.
//!
//! Everything an event consumer needs to read what the log and NATS carry, and nothing that does
//! I/O: stream names, the event envelope, NATS subjects, the canonical JSON form that hashes are
//! computed over (and the one written form of an event's time, [`recorded_at`]), and the payload types of every bounded context. A consumer depends on this
//! crate alone.

pub mod asyncapi;
pub mod canonical;
pub mod domain;
pub mod envelope;
pub mod merkle;
pub mod recorded_at;
pub mod schema;
pub mod stream;
pub mod subject;
pub mod tree_head;

pub mod atlas;
pub mod docs;
pub mod pads;
pub mod records;
pub mod resources;

pub use domain::{DecodeError, DomainEvent};
pub use envelope::{ExpectedVersion, Metadata, NewEvent, RecordedEvent};
pub use stream::{StreamName, StreamNameError};
