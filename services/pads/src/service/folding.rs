//! How each kind of stream folds into its state (the write side commands decide from).

use crate::domain::{Author, Group, Mapping, Pad, Session};
use palimpsest_events::pads::{
    self, AuthorEvent, AuthorMapperEvent, GroupEvent, GroupMapperEvent, PadEvent, SessionEvent,
    TokenEvent,
};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

impl StreamState for Pad {
    fn initial(stream: &StreamName) -> Self {
        Pad::absent(&stream.key)
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.apply(&PadEvent::decode(event)?);
        Ok(())
    }
}

impl StreamState for Author {
    fn initial(_: &StreamName) -> Self {
        Author::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.apply(&AuthorEvent::decode(event)?);
        Ok(())
    }
}

impl StreamState for Group {
    fn initial(_: &StreamName) -> Self {
        Group::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.apply(&GroupEvent::decode(event)?);
        Ok(())
    }
}

impl StreamState for Session {
    fn initial(_: &StreamName) -> Self {
        Session::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.apply(&SessionEvent::decode(event)?);
        Ok(())
    }
}

impl StreamState for Mapping {
    fn initial(_: &StreamName) -> Self {
        Mapping::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        match event.stream.category.as_str() {
            pads::TOKEN => self.apply_token(&TokenEvent::decode(event)?),
            pads::AUTHOR_MAPPER => self.apply_author_mapper(&AuthorMapperEvent::decode(event)?),
            pads::GROUP_MAPPER => self.apply_group_mapper(&GroupMapperEvent::decode(event)?),
            _ => {}
        }
        Ok(())
    }
}

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
