//! The one-value maps: token → author, mapper → author, mapper → group.

use palimpsest_events::pads;
use palimpsest_events::pads::{AuthorMapperEvent, GroupMapperEvent, TokenEvent};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// What a token, author mapper or group mapper stream currently names, if anything.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Mapping {
    /// The author or group id the key maps to.
    pub target: Option<String>,
}

impl Mapping {
    /// Folds a token event.
    pub fn apply_token(&mut self, event: &TokenEvent) {
        let TokenEvent::TokenMapped { author_id } = event;
        self.target = Some(author_id.clone());
    }

    /// Folds an author mapper event.
    pub fn apply_author_mapper(&mut self, event: &AuthorMapperEvent) {
        let AuthorMapperEvent::AuthorMapped { author_id } = event;
        self.target = Some(author_id.clone());
    }

    /// Folds a group mapper event.
    pub fn apply_group_mapper(&mut self, event: &GroupMapperEvent) {
        match event {
            GroupMapperEvent::GroupMapped { group_id } => self.target = Some(group_id.clone()),
            GroupMapperEvent::GroupMappingRemoved { .. } => self.target = None,
        }
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
