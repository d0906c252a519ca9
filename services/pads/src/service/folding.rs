//! How each kind of stream folds into its state.

use crate::domain::{Author, Group, Mapping, Pad, Session};
use palimpsest_events::pads::{
    self, AuthorEvent, AuthorMapperEvent, GroupEvent, GroupMapperEvent, PadEvent, SessionEvent,
    TokenEvent,
};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent};

/// A state folded from one stream's events.
pub trait Folded: Clone + Send + Sync + 'static {
    /// The state before the stream's first event.
    fn initial(key: &str) -> Self;
    /// Folds one recorded event of the stream.
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError>;
}

impl Folded for Pad {
    fn initial(key: &str) -> Self {
        Pad::absent(key)
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.apply(&PadEvent::decode(event)?);
        Ok(())
    }
}

impl Folded for Author {
    fn initial(_: &str) -> Self {
        Author::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.apply(&AuthorEvent::decode(event)?);
        Ok(())
    }
}

impl Folded for Group {
    fn initial(_: &str) -> Self {
        Group::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.apply(&GroupEvent::decode(event)?);
        Ok(())
    }
}

impl Folded for Session {
    fn initial(_: &str) -> Self {
        Session::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.apply(&SessionEvent::decode(event)?);
        Ok(())
    }
}

impl Folded for Mapping {
    fn initial(_: &str) -> Self {
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
    fn fold<T: Folded + serde::Serialize>(
        key: &str,
        events: &[RecordedEvent],
    ) -> Option<serde_json::Value> {
        let mut state = T::initial(key);
        for e in events {
            state.fold(e).ok()?;
        }
        serde_json::to_value(&state).ok()
    }
    if stream.context != pads::CONTEXT {
        return None;
    }
    let key = stream.key.as_str();
    match stream.category.as_str() {
        pads::PAD => fold::<Pad>(key, events),
        pads::AUTHOR => fold::<Author>(key, events),
        pads::GROUP => fold::<Group>(key, events),
        pads::SESSION => fold::<Session>(key, events),
        pads::TOKEN | pads::AUTHOR_MAPPER | pads::GROUP_MAPPER => fold::<Mapping>(key, events),
        _ => None,
    }
}
