//! The `StreamState` impl of the id counters (`resources/ids/counters`), kept here until it joins
//! `Counters` in `ids.rs`, which the lead is rewriting (the id lease as a runner step); every
//! other stream's state is its aggregate's `state.rs`.

use crate::ids::{self, Counters};
use palimpsest_events::resources::IdsEvent;
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

impl StreamState for Counters {
    fn initial(_: &StreamName) -> Self {
        Counters::default()
    }

    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = ids::evolve(*self, &IdsEvent::decode(event)?);
        Ok(())
    }
}
