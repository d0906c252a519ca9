//! The state of an organisation's FTP stream: the listed files and their day of purge.

use palimpsest_events::records::FtpEvent;
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;
use std::collections::BTreeMap;

/// The organisation's listed files: path → day of purge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FtpState(pub BTreeMap<String, i64>);

/// The list after `event`.
pub fn evolve(mut state: FtpState, event: &FtpEvent) -> FtpState {
    match event {
        FtpEvent::FtpSet { path, p, .. } => {
            state.0.insert(path.clone(), *p);
        }
        FtpEvent::FtpPurged { path, .. } => {
            state.0.remove(path);
        }
    }
    state
}

impl StreamState for FtpState {
    fn initial(_: &StreamName) -> Self {
        FtpState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = evolve(std::mem::take(self), &FtpEvent::decode(event)?);
        Ok(())
    }
}
