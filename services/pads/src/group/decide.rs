//! Group commands: `createGroup`, `createGroupIfNotExistsFor`, `deleteGroup`.

use super::{Group, GroupContents, Groups};
use crate::error::DomainError;
use crate::mapping::Mapping;
use crate::outcome::Outcome;
use crate::pad::decide::transfer::remove_for_group;
use palimpsest_events::pads::{AuthorEvent, GroupEvent, GroupMapperEvent, SessionEvent};
use std::collections::HashMap;

/// `createGroup()`: a new group `group_id`.
pub fn create_group(group_id: &str) -> Outcome {
    let mut outcome = Outcome::none();
    outcome.group(
        group_id,
        GroupEvent::GroupCreated {
            group_id: group_id.to_owned(),
        },
    );
    outcome
}

/// `createGroupIfNotExistsFor(groupMapper)`: the group the mapper names if it still exists,
/// else a new group `new_group_id` mapped to it. Returns the decision and the group id.
pub fn create_group_for_mapper(
    mapper: &str,
    mapping: &Mapping,
    mapped_group: Option<&Group>,
    new_group_id: &str,
) -> (Outcome, String) {
    if let (Some(id), Some(g)) = (&mapping.target, mapped_group)
        && g.exists
    {
        return (Outcome::none(), id.clone());
    }
    let mut outcome = create_group(new_group_id);
    outcome.group(
        new_group_id,
        GroupEvent::GroupMapperAdded {
            mapper: mapper.to_owned(),
        },
    );
    outcome.group_mapper(
        mapper,
        GroupMapperEvent::GroupMapped {
            group_id: new_group_id.to_owned(),
        },
    );
    (outcome, new_group_id.to_owned())
}

/// `deleteGroup(groupID)`: deletes the group's pads (with their revisions, chat, read-only ids
/// and author links), its sessions (updating both session lists first), its mappings and the
/// group itself, in one decision.
pub fn delete_group(
    group_id: &str,
    group: &Group,
    contents: GroupContents,
) -> Result<Outcome, DomainError> {
    if !group.exists {
        return Err(DomainError::GroupMissing);
    }
    let GroupContents {
        pads,
        sessions,
        mut authors,
    } = contents;
    let mut groups = Groups::new(HashMap::from([(group_id.to_owned(), group.clone())]));
    let mut outcome = Outcome::none();
    for pad_id in &group.pads {
        if let Some(pad) = pads.get(pad_id).filter(|p| p.exists) {
            remove_for_group(&mut pad.clone(), &mut groups, &mut authors, &mut outcome);
        }
    }
    for session_id in &group.sessions {
        let Some(session) = sessions.get(session_id).filter(|s| s.exists) else {
            continue;
        };
        outcome.group(
            group_id,
            GroupEvent::GroupSessionRemoved {
                session_id: session_id.clone(),
            },
        );
        authors.record(
            &session.author_id,
            AuthorEvent::AuthorSessionRemoved {
                session_id: session_id.clone(),
            },
            &mut outcome,
        );
        outcome.session(
            session_id,
            SessionEvent::SessionDeleted {
                session_id: session_id.clone(),
            },
        );
    }
    for mapper in &group.mappers {
        outcome.group_mapper(
            mapper,
            GroupMapperEvent::GroupMappingRemoved {
                group_id: group_id.to_owned(),
            },
        );
    }
    outcome.group(
        group_id,
        GroupEvent::GroupDeleted {
            group_id: group_id.to_owned(),
        },
    );
    Ok(outcome)
}
