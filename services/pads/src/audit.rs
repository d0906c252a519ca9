//! A stream's state as of any point of its history, for `audit stream --at`: the events up to
//! that point folded as the write side folds them, shown as JSON.

use crate::author::Author;
use crate::group::Group;
use crate::mapping::Mapping;
use crate::pad::Pad;
use crate::session::Session;
use palimpsest_events::pads;
use palimpsest_events::{RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// Folds `events` of `stream` into its state and shows it as JSON (for `audit stream --at`);
/// `None` for a stream that is not of the pads context.
pub fn state_at(
    stream: &palimpsest_events::StreamName,
    events: &[RecordedEvent],
) -> Option<serde_json::Value> {
    fn fold<T: StreamState + serde::Serialize>(
        stream: &StreamName,
        events: &[RecordedEvent],
    ) -> Option<serde_json::Value> {
        let mut state = T::initial(stream);
        for e in events {
            if let Err(error) = state.fold(e) {
                tracing::error!(%stream, version = e.version, %error, "event does not fold");
                return Some(
                    serde_json::json!({ "error": error.to_string(), "version": e.version }),
                );
            }
        }
        match serde_json::to_value(&state) {
            Ok(value) => Some(value),
            Err(error) => {
                tracing::error!(%stream, %error, "state does not serialise");
                None
            }
        }
    }
    if stream.context != pads::CONTEXT {
        return None;
    }
    match stream.category.as_str() {
        pads::PAD => fold::<Pad>(stream, events),
        pads::AUTHOR => fold::<Author>(stream, events),
        pads::GROUP => fold::<Group>(stream, events),
        pads::SESSION => fold::<Session>(stream, events),
        pads::TOKEN | pads::AUTHOR_MAPPER | pads::GROUP_MAPPER => fold::<Mapping>(stream, events),
        _ => None,
    }
}
