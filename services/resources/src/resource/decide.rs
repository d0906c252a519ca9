//! The pure decider of a resource stream: command + state → events, or a refusal.

use super::error::ResourceError;
use super::etag::{etag, matches};
use super::state::ResourceState;
use chrono::{DateTime, Utc};
use palimpsest_events::resources::{
    ContentRef, Parent, ResourceEvent, ResourceType, Revision, mask,
};

/// Who, when and in which operation a revision is made, with the ids allocated for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// The `resrev_id` the new revision takes.
    pub resrev_id: i64,
    /// The acting user.
    pub user_id: i64,
    /// The request's time (whole seconds).
    pub timestamp: DateTime<Utc>,
    /// The operation's changeset id.
    pub changeset_id: i64,
    /// `resrev_change_description`.
    pub description: Option<String>,
}

/// Revision 1 of a new resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewResource {
    /// Its allocated `res_id`.
    pub res_id: i64,
    /// File or property.
    pub res_type: ResourceType,
    /// Where it hangs.
    pub parent: Parent,
    /// File name or property key.
    pub name: String,
    /// Content MIME type.
    pub mimetype: String,
    /// The stored content.
    pub content: ContentRef,
}

/// What an edit changes; `None` keeps the head's value. The change mask says what differed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Edit {
    /// New content (and its MIME type): CONTENT.
    pub content: Option<(ContentRef, String)>,
    /// New name: NAME.
    pub name: Option<String>,
    /// New parent: PARENT.
    pub parent: Option<Parent>,
}

/// The head a write was based on, if the client said: a stale one refuses the write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expect {
    /// The head revision number the client saw.
    pub revision: Option<i64>,
    /// The head's ETag the client saw (`If-Match`).
    pub etag: Option<String>,
}

/// A command on one resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceCommand {
    /// Create the resource: revision 1, mask NAME|CONTENT|PARENT.
    Create(NewResource, Stamp),
    /// Change content, name or parent of a live resource.
    Edit(Edit, Expect, Stamp),
    /// Mark a live resource deleted: DELETEFLAG.
    Delete(Expect, Stamp),
    /// Bring a deleted resource back, possibly elsewhere or under another name.
    Restore {
        /// Where it comes back (PARENT when it differs).
        parent: Parent,
        /// Under which name (NAME when it differs; a clash was resolved by the caller).
        name: String,
        /// The revision's stamp.
        stamp: Stamp,
    },
    /// Hide or show revisions (admin).
    Hide {
        /// Revision numbers.
        revs: Vec<i64>,
        /// Hide (true) or show (false).
        hidden: bool,
        /// The admin.
        user_id: i64,
        /// When.
        timestamp: DateTime<Utc>,
    },
    /// Remove a deleted resource from the archive for good (admin).
    Wipe {
        /// The admin.
        user_id: i64,
        /// When.
        timestamp: DateTime<Utc>,
    },
}

/// Decides `command` on resource `res_id` in `state`. An edit that changes nothing decides no
/// event.
pub fn decide(
    res_id: i64,
    command: ResourceCommand,
    state: &ResourceState,
) -> Result<Vec<ResourceEvent>, ResourceError> {
    match command {
        ResourceCommand::Create(new, stamp) => create(new, stamp, state),
        ResourceCommand::Edit(edit, expect, stamp) => {
            let head = live(res_id, state, &expect)?;
            Ok(next(head, &stamp, |rev| apply_edit(rev, edit))
                .map(ResourceEvent::RevisionAdded)
                .into_iter()
                .collect())
        }
        ResourceCommand::Delete(expect, stamp) => {
            let head = live(res_id, state, &expect)?;
            let revision = next(head, &stamp, |rev| {
                rev.deleted = true;
                mask::DELETEFLAG
            });
            Ok(revision
                .map(ResourceEvent::RevisionAdded)
                .into_iter()
                .collect())
        }
        ResourceCommand::Restore {
            parent,
            name,
            stamp,
        } => restore(res_id, state, parent, name, stamp),
        ResourceCommand::Hide {
            revs,
            hidden,
            user_id,
            timestamp,
        } => hide(res_id, state, revs, hidden, user_id, timestamp),
        ResourceCommand::Wipe { user_id, timestamp } => {
            let head = state.existing().ok_or(ResourceError::NotFound(res_id))?;
            if !head.deleted {
                return Err(ResourceError::NotArchived(res_id));
            }
            Ok(vec![ResourceEvent::ResourceWiped { user_id, timestamp }])
        }
    }
}

fn create(
    new: NewResource,
    stamp: Stamp,
    state: &ResourceState,
) -> Result<Vec<ResourceEvent>, ResourceError> {
    if state.head.is_some() || state.wiped {
        return Err(ResourceError::AlreadyExists(new.res_id));
    }
    Ok(vec![ResourceEvent::RevisionAdded(Revision {
        res_id: new.res_id,
        resrev_id: stamp.resrev_id,
        rev: 1,
        res_type: new.res_type,
        change_mask: mask::NAME | mask::CONTENT | mask::PARENT,
        name: new.name,
        parent: new.parent,
        language: None,
        meta: None,
        mimetype: new.mimetype,
        content: new.content,
        change_description: stamp.description,
        user_id: stamp.user_id,
        timestamp: stamp.timestamp,
        changeset_id: stamp.changeset_id,
        deleted: false,
    })])
}

/// The head of a live resource, after checking the client's view of it.
fn live<'s>(
    res_id: i64,
    state: &'s ResourceState,
    expect: &Expect,
) -> Result<&'s Revision, ResourceError> {
    let head = state.existing().ok_or(ResourceError::NotFound(res_id))?;
    if head.deleted {
        return Err(ResourceError::Deleted(res_id));
    }
    check(head, expect)?;
    Ok(head)
}

/// Refuses a write based on a head that is no longer the head.
pub(crate) fn check(head: &Revision, expect: &Expect) -> Result<(), ResourceError> {
    if let Some(given) = expect.revision
        && given != head.rev
    {
        return Err(ResourceError::StaleRevision {
            res_id: head.res_id,
            head: head.rev,
            given,
        });
    }
    if let Some(given) = &expect.etag
        && !matches(given, head)
    {
        return Err(ResourceError::StaleEtag {
            res_id: head.res_id,
            head: etag(head),
            given: given.clone(),
        });
    }
    Ok(())
}

/// The next revision: a copy of the head changed by `change`, which returns the mask of what it
/// changed; `None` when it changed nothing.
fn next(
    head: &Revision,
    stamp: &Stamp,
    change: impl FnOnce(&mut Revision) -> u8,
) -> Option<Revision> {
    let mut revision = head.clone();
    let change_mask = change(&mut revision);
    if change_mask == 0 {
        return None;
    }
    revision.rev = head.rev + 1;
    revision.resrev_id = stamp.resrev_id;
    revision.change_mask = change_mask;
    revision.change_description = stamp.description.clone();
    revision.user_id = stamp.user_id;
    revision.timestamp = stamp.timestamp;
    revision.changeset_id = stamp.changeset_id;
    Some(revision)
}

fn apply_edit(revision: &mut Revision, edit: Edit) -> u8 {
    let mut change_mask = 0;
    if let Some((content, mimetype)) = edit.content
        && (content != revision.content || mimetype != revision.mimetype)
    {
        revision.content = content;
        revision.mimetype = mimetype;
        change_mask |= mask::CONTENT;
    }
    change_mask | place(revision, edit.parent, edit.name)
}

/// Moves and renames `revision`; the NAME and PARENT bits of what differed.
fn place(revision: &mut Revision, parent: Option<Parent>, name: Option<String>) -> u8 {
    let mut change_mask = 0;
    if let Some(name) = name
        && name != revision.name
    {
        revision.name = name;
        change_mask |= mask::NAME;
    }
    if let Some(parent) = parent
        && parent != revision.parent
    {
        revision.parent = parent;
        change_mask |= mask::PARENT;
    }
    change_mask
}

fn restore(
    res_id: i64,
    state: &ResourceState,
    parent: Parent,
    name: String,
    stamp: Stamp,
) -> Result<Vec<ResourceEvent>, ResourceError> {
    let head = state.existing().ok_or(ResourceError::NotFound(res_id))?;
    if !head.deleted {
        return Err(ResourceError::NotDeleted(res_id));
    }
    let revision = next(head, &stamp, |rev| {
        rev.deleted = false;
        mask::DELETEFLAG | place(rev, Some(parent), Some(name))
    });
    Ok(revision
        .map(ResourceEvent::RevisionAdded)
        .into_iter()
        .collect())
}

fn hide(
    res_id: i64,
    state: &ResourceState,
    revs: Vec<i64>,
    hidden: bool,
    user_id: i64,
    timestamp: DateTime<Utc>,
) -> Result<Vec<ResourceEvent>, ResourceError> {
    let head = state.existing().ok_or(ResourceError::NotFound(res_id))?;
    if let Some(&rev) = revs.iter().find(|&&rev| rev < 1 || rev > head.rev) {
        return Err(ResourceError::NoSuchRevision { res_id, rev });
    }
    if hidden && revs.contains(&head.rev) {
        return Err(ResourceError::HeadHidden(head.rev));
    }
    let changed: Vec<i64> = revs
        .into_iter()
        .filter(|rev| state.hidden.contains(rev) != hidden)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if changed.is_empty() {
        return Ok(Vec::new());
    }
    Ok(vec![ResourceEvent::RevisionsHidden {
        revs: changed,
        hidden,
        user_id,
        timestamp,
    }])
}
