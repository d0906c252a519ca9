//! What a command decided: the events of every stream it writes, in the order the records must
//! change, and the streams it only read but whose version must still hold.
//!
//! An [`Outcome`] spans every kind of stream of the context (deleting a group writes pads,
//! sessions, authors and mappers), so it lives beside the aggregates rather than in one. The
//! runner's own [`Decision`](palimpsest_web::command::Decision) is made from it, with the reply,
//! in [`crate::command`].

use palimpsest_events::pads::{
    self, AuthorEvent, AuthorMapperEvent, GroupEvent, GroupMapperEvent, PadEvent, SessionEvent,
    TokenEvent,
};
use palimpsest_events::{DecodeError, DomainEvent, NewEvent};

/// The events for one stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// A pad stream.
    Pad(String, Vec<PadEvent>),
    /// A group stream.
    Group(String, Vec<GroupEvent>),
    /// An author stream.
    Author(String, Vec<AuthorEvent>),
    /// A session stream.
    Session(String, Vec<SessionEvent>),
    /// A token stream.
    Token(String, Vec<TokenEvent>),
    /// An author mapper stream.
    AuthorMapper(String, Vec<AuthorMapperEvent>),
    /// A group mapper stream.
    GroupMapper(String, Vec<GroupMapperEvent>),
}

fn encode_all<E: DomainEvent>(events: &[E]) -> Result<Vec<NewEvent>, DecodeError> {
    events.iter().map(DomainEvent::encode).collect()
}

impl Write {
    /// The stream's category and key.
    pub fn stream(&self) -> (&'static str, &str) {
        match self {
            Write::Pad(k, _) => (pads::PAD, k),
            Write::Group(k, _) => (pads::GROUP, k),
            Write::Author(k, _) => (pads::AUTHOR, k),
            Write::Session(k, _) => (pads::SESSION, k),
            Write::Token(k, _) => (pads::TOKEN, k),
            Write::AuthorMapper(k, _) => (pads::AUTHOR_MAPPER, k),
            Write::GroupMapper(k, _) => (pads::GROUP_MAPPER, k),
        }
    }

    /// The events as envelopes ready to append.
    pub fn encode(&self) -> Result<Vec<NewEvent>, DecodeError> {
        match self {
            Write::Pad(_, e) => encode_all(e),
            Write::Group(_, e) => encode_all(e),
            Write::Author(_, e) => encode_all(e),
            Write::Session(_, e) => encode_all(e),
            Write::Token(_, e) => encode_all(e),
            Write::AuthorMapper(_, e) => encode_all(e),
            Write::GroupMapper(_, e) => encode_all(e),
        }
    }
}

/// A command's outcome: writes in order, plus streams read whose version must not have moved.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outcome {
    /// The streams written, in the order their events must be applied.
    pub writes: Vec<Write>,
    /// Streams read but not written (category, key): the append checks they did not move.
    pub checks: Vec<(&'static str, String)>,
}

macro_rules! push_to {
    ($self:ident, $variant:ident, $id:expr, $event:expr) => {{
        let id: &str = $id;
        let event = $event;
        for w in $self.writes.iter_mut() {
            if let Write::$variant(k, events) = w
                && k == id
            {
                events.push(event);
                return;
            }
        }
        $self
            .writes
            .push(Write::$variant(id.to_owned(), vec![event]));
    }};
}

impl Outcome {
    /// A decision that writes nothing.
    pub fn none() -> Self {
        Self::default()
    }

    /// Whether nothing is written.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// Adds an event to pad `id`.
    pub fn pad(&mut self, id: &str, event: PadEvent) {
        push_to!(self, Pad, id, event)
    }

    /// Adds an event to group `id`.
    pub fn group(&mut self, id: &str, event: GroupEvent) {
        push_to!(self, Group, id, event)
    }

    /// Adds an event to author `id`.
    pub fn author(&mut self, id: &str, event: AuthorEvent) {
        push_to!(self, Author, id, event)
    }

    /// Adds an event to session `id`.
    pub fn session(&mut self, id: &str, event: SessionEvent) {
        push_to!(self, Session, id, event)
    }

    /// Adds an event to token `id`.
    pub fn token(&mut self, id: &str, event: TokenEvent) {
        push_to!(self, Token, id, event)
    }

    /// Adds an event to author mapper `id`.
    pub fn author_mapper(&mut self, id: &str, event: AuthorMapperEvent) {
        push_to!(self, AuthorMapper, id, event)
    }

    /// Adds an event to group mapper `id`.
    pub fn group_mapper(&mut self, id: &str, event: GroupMapperEvent) {
        push_to!(self, GroupMapper, id, event)
    }

    /// Requires stream (`category`, `key`) to still be at the version the command read.
    pub fn check(&mut self, category: &'static str, key: &str) {
        if !self.checks.iter().any(|(c, k)| *c == category && k == key) {
            self.checks.push((category, key.to_owned()));
        }
    }

    /// The events written to pad `id` (for tests and replies).
    pub fn pad_events(&self, id: &str) -> Vec<PadEvent> {
        self.writes
            .iter()
            .filter_map(|w| match w {
                Write::Pad(k, e) if k == id => Some(e.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// The events written to author `id`.
    pub fn author_events(&self, id: &str) -> Vec<AuthorEvent> {
        self.writes
            .iter()
            .filter_map(|w| match w {
                Write::Author(k, e) if k == id => Some(e.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// The events written to group `id`.
    pub fn group_events(&self, id: &str) -> Vec<GroupEvent> {
        self.writes
            .iter()
            .filter_map(|w| match w {
                Write::Group(k, e) if k == id => Some(e.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_of_one_stream_stay_together_in_first_touch_order() {
        let mut outcome = Outcome::none();
        outcome.pad("b", PadEvent::PadDeleted { pad_id: "b".into() });
        outcome.group("g", GroupEvent::GroupPadRemoved { pad_id: "b".into() });
        outcome.pad("a", PadEvent::PadDeleted { pad_id: "a".into() });
        outcome.group("g", GroupEvent::GroupPadRemoved { pad_id: "a".into() });
        let streams: Vec<_> = outcome
            .writes
            .iter()
            .map(|w| w.stream().1.to_owned())
            .collect();
        assert_eq!(streams, vec!["b", "g", "a"]);
        assert_eq!(outcome.group_events("g").len(), 2);
    }
}
