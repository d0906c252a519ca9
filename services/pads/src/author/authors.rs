//! Keeping author records in step with the pads they worked on, as Etherpad's `addPad` and
//! `removePad` do, against a scratch copy of the authors so that one command's several changes
//! (unlink on delete, link again on copy) see each other.

use super::Author;
use crate::outcome::Outcome;
use palimpsest_events::pads::AuthorEvent;
use std::collections::HashMap;

/// The authors a command read, changed as the command's events change them.
#[derive(Debug, Clone, Default)]
pub struct Authors(HashMap<String, Author>);

impl Authors {
    /// Authors by id, as loaded (an unknown id is an author that does not exist).
    pub fn new(authors: HashMap<String, Author>) -> Self {
        Authors(authors)
    }

    /// The author `id`, if it exists.
    pub fn get(&self, id: &str) -> Option<&Author> {
        self.0.get(id).filter(|a| a.exists)
    }

    /// Etherpad's `addPad(author, pad)`: links the pad to an existing author not yet linked.
    pub fn link(&mut self, author_id: &str, pad_id: &str, outcome: &mut Outcome) {
        if author_id.is_empty() {
            return;
        }
        if let Some(a) = self.0.get_mut(author_id)
            && a.exists
            && !a.has_pad(pad_id)
        {
            let e = AuthorEvent::AuthorPadLinked {
                pad_id: pad_id.to_owned(),
            };
            a.apply(&e);
            outcome.author(author_id, e);
        }
    }

    /// Etherpad's `removePad(author, pad)`: unlinks the pad from an author linked to it.
    pub fn unlink(&mut self, author_id: &str, pad_id: &str, outcome: &mut Outcome) {
        if let Some(a) = self.0.get_mut(author_id)
            && a.exists
            && a.has_pad(pad_id)
        {
            let e = AuthorEvent::AuthorPadUnlinked {
                pad_id: pad_id.to_owned(),
            };
            a.apply(&e);
            outcome.author(author_id, e);
        }
    }

    /// Records an author event decided elsewhere (e.g. a session change).
    pub fn record(&mut self, author_id: &str, e: AuthorEvent, outcome: &mut Outcome) {
        let a = self.0.entry(author_id.to_owned()).or_default();
        a.apply(&e);
        outcome.author(author_id, e);
    }
}
