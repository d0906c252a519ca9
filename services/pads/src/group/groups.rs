//! The groups a command read, changed as its events change them (see [`super::Authors`]).

use super::Group;
use crate::outcome::Outcome;
use palimpsest_events::pads::GroupEvent;
use std::collections::HashMap;

/// Groups by id, as loaded and then changed by the command's own events.
#[derive(Debug, Clone, Default)]
pub struct Groups(HashMap<String, Group>);

impl Groups {
    /// Groups by id, as loaded (an unknown id is a group that does not exist).
    pub fn new(groups: HashMap<String, Group>) -> Self {
        Groups(groups)
    }

    /// Whether group `id` exists.
    pub fn exists(&self, id: &str) -> bool {
        self.0.get(id).is_some_and(|g| g.exists)
    }

    /// Adds `pad_id` to group `group_id` (Etherpad's `setSub(group, ['pads', pad], 1)`).
    pub fn add_pad(&mut self, group_id: &str, pad_id: &str, outcome: &mut Outcome) {
        if let Some(g) = self.0.get_mut(group_id)
            && g.exists
            && !g.pads.iter().any(|p| p == pad_id)
        {
            let e = GroupEvent::GroupPadAdded {
                pad_id: pad_id.to_owned(),
            };
            g.apply(&e);
            outcome.group(group_id, e);
        }
    }

    /// Removes `pad_id` from group `group_id`.
    pub fn remove_pad(&mut self, group_id: &str, pad_id: &str, outcome: &mut Outcome) {
        if let Some(g) = self.0.get_mut(group_id)
            && g.exists
            && g.pads.iter().any(|p| p == pad_id)
        {
            let e = GroupEvent::GroupPadRemoved {
                pad_id: pad_id.to_owned(),
            };
            g.apply(&e);
            outcome.group(group_id, e);
        }
    }
}
