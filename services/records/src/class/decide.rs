//! The class decider (pure): a declaration is recorded once and never changes.

use crate::class::declaration::validate;
use crate::class::state::ClassState;
use crate::error::RecordsError;
use palimpsest_events::records::{ClassDeclaration, ClassEvent};

/// The class decider: record a declaration once; the same again changes nothing, another is
/// a conflict (a declaration never changes).
pub fn decide_declaration(
    declaration: &ClassDeclaration,
    state: &ClassState,
) -> Result<Vec<ClassEvent>, RecordsError> {
    validate(declaration)?;
    match &state.0 {
        Some(recorded) if recorded == declaration => Ok(Vec::new()),
        Some(_) => Err(RecordsError::Conflict(format!(
            "class {} is declared otherwise; a declaration never changes",
            declaration.clazz
        ))),
        None => Ok(vec![ClassEvent::ClassDeclared {
            declaration: declaration.clone(),
        }]),
    }
}
