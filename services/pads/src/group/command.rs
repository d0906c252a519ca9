//! What a client can ask of groups (`createGroup`, `createGroupIfNotExistsFor`, `deleteGroup`),
//! how a command loads the group it reads, and the group commands that read streams run as
//! load → decide (one try each; the runner, [`crate::command::Pads::run`], tries again from
//! fresh state when a stream moved).

use super::decide;
use super::{Group, Groups};
use crate::author::Authors;
use crate::command::Load;
use crate::error::DomainError;
use crate::http::envelope::EnvelopeError;
use crate::ids::group_of_pad;
use crate::outcome::Outcome;
use crate::pad::Pad;
use crate::session::Session;
use palimpsest_events::pads::{self, GROUP_MAPPER};
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

/// `createGroupIfNotExistsFor(groupMapper)`: the mapper's group if it still exists, else the
/// new group `candidate`. Returns the outcome and the group id.
pub async fn group_for_mapper(
    load: &Load,
    mapper: &str,
    candidate: &str,
) -> Result<(Outcome, String), EnvelopeError> {
    let mapping = load.mapping(GROUP_MAPPER, mapper).await?;
    let group = match &mapping.target {
        Some(g) => Some(load.group(g).await?),
        None => None,
    };
    Ok(decide::create_group_for_mapper(
        mapper,
        &mapping,
        group.as_ref(),
        candidate,
    ))
}

/// `deleteGroup(groupID)`: the group, its pads, sessions and mappings, in one append.
pub async fn delete_group(load: &Load, group_id: &str) -> Result<Outcome, EnvelopeError> {
    let group = load.group(group_id).await?;
    if !group.exists {
        return Err(DomainError::GroupMissing.into());
    }
    let contents = contents_of(load, &group).await?;
    Ok(decide::delete_group(group_id, &group, contents)?)
}

/// Loads everything deleting `group` touches: its pads, its sessions, its mappers (read so a
/// concurrent change to them is noticed) and the authors of those pads and sessions.
async fn contents_of(load: &Load, group: &Group) -> Result<GroupContents, EnvelopeError> {
    let mut pad_states = HashMap::new();
    let mut author_ids = Vec::new();
    for pad_id in &group.pads {
        let pad = load.pad(pad_id).await?;
        author_ids.extend(pad.authors());
        pad_states.insert(pad_id.clone(), pad);
    }
    let mut sessions = HashMap::new();
    for session_id in &group.sessions {
        let session = load.session(session_id).await?;
        author_ids.push(session.author_id.clone());
        sessions.insert(session_id.clone(), session);
    }
    for mapper in &group.mappers {
        load.mapping(GROUP_MAPPER, mapper).await?;
    }
    let authors = load.authors(author_ids).await?;
    Ok(GroupContents {
        pads: pad_states,
        sessions,
        authors,
    })
}
