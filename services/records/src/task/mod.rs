//! Deferred tasks (`Task`): one stream per task `[org, k0]`, where `k0` is the sha16 of
//! `process/pk…`; the row `Task(org, k0, i0, data)` is due at `i0` (`AAAAMMJJhhmmssmmm`), its
//! `data` sealed like a document's.
//!
//! [`state`] folds a task's stream, [`schedule`] checks what `setTask` gives, [`command`] writes
//! a task through the platform's runner. The runner that carries tasks out is
//! [`crate::tasks`].

pub mod command;
pub mod schedule;
pub mod state;

pub use schedule::{check, is_time_text, time_text};
pub use state::{TaskState, evolve};
