//! The state of a task's stream: when it is due and its sealed data.

use palimpsest_events::records::TaskEvent;
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// A task's state: due when, with which sealed data; `None` when finished or never set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskState(pub Option<(String, String)>);

/// The state after `event`.
pub fn evolve(_before: TaskState, event: &TaskEvent) -> TaskState {
    match event {
        TaskEvent::TaskScheduled { i0, data, .. } => TaskState(Some((i0.clone(), data.clone()))),
        TaskEvent::TaskDone { .. } => TaskState(None),
    }
}

impl StreamState for TaskState {
    fn initial(_: &StreamName) -> Self {
        TaskState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = evolve(std::mem::take(self), &TaskEvent::decode(event)?);
        Ok(())
    }
}
