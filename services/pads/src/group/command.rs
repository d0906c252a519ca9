//! What a client can ask of groups (`createGroup`, `createGroupIfNotExistsFor`, `deleteGroup`),
//! and how a command loads the group it reads.

use super::{Group, Groups};
use crate::author::Authors;
use crate::command::Load;
use crate::http::envelope::EnvelopeError;
use crate::ids::group_of_pad;
use crate::pad::Pad;
use crate::session::Session;
use palimpsest_events::pads;
use std::collections::HashMap;

impl Load {
    /// Group `id`.
    pub async fn group(&self, id: &str) -> Result<Group, EnvelopeError> {
        self.state(pads::GROUP, id).await
    }

    /// The groups of the given pad ids (each group once; pads outside groups add none).
    pub async fn groups_of_pads(&self, pad_ids: &[&str]) -> Result<Groups, EnvelopeError> {
        let mut map = HashMap::new();
        for id in pad_ids {
            if let Some(g) = group_of_pad(id)
                && !map.contains_key(g)
            {
                let group = self.group(g).await?;
                map.insert(g.to_owned(), group);
            }
        }
        Ok(Groups::new(map))
    }
}

/// Everything a group deletion touches, as loaded.
#[derive(Debug, Clone)]
pub struct GroupContents {
    /// The group's pads by id.
    pub pads: HashMap<String, Pad>,
    /// The group's sessions by id.
    pub sessions: HashMap<String, Session>,
    /// The authors of those pads and sessions.
    pub authors: Authors,
}
