//! The state of a class stream: its recorded declaration, if any.

use palimpsest_events::records::{ClassDeclaration, ClassEvent};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// State of a class stream: its recorded declaration.
#[derive(Debug, Clone, Default)]
pub struct ClassState(pub Option<ClassDeclaration>);

impl StreamState for ClassState {
    fn initial(_: &StreamName) -> Self {
        ClassState(None)
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        let ClassEvent::ClassDeclared { declaration } = ClassEvent::decode(event)?;
        self.0 = Some(declaration);
        Ok(())
    }
}
