//! `palimpsest atlas import <file>`: moving an existing History Map deployment over.
//!
//! [`source`] reads the SQLite database read-only, repairing older shapes in memory as the
//! spec's §7 runtime migration would; [`mod@plan`] turns it into the atlas context's own events
//! (pure); [`run`] appends them to the log, each append at exact expected versions under an
//! idempotency key derived from its content, so a second import of the same file appends
//! nothing. Rows that cannot be carried make the import refuse before anything is appended.

pub mod plan;
pub mod run;
pub mod source;

pub use plan::{ImportPlan, Uncarried, plan};
pub use run::{ImportError, ImportReport, import};
pub use source::{Source, SourceError, read};

/// The actor named in the metadata of every imported event when the source names no file.
pub const ACTOR: &str = "import:unknown";

/// The actor named in the metadata of every event imported from `path`: `import:<file name>`.
/// It holds a `:`, which no user id may, so an import is never mistaken for a user's work.
pub fn actor_for(path: &std::path::Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.is_empty() {
        ACTOR.to_owned()
    } else {
        format!("import:{name}")
    }
}
