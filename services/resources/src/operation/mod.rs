//! Operations: what one HTTP request does, composed from the pure deciders into ONE append.
//!
//! A [`Changeset`] is one try of an operation inside the command runner. It loads the streams it
//! needs through the runner's [`Attempt`] (resources, names, contents), takes integer ids from
//! the process's leased blocks ([`IdSource`]), calls the pure deciders, folds what they decided
//! into its own copy of each state (so a second change to the same resource in the same
//! operation starts from the first), and at the end turns everything into one [`Decision`]:
//! every revision of the operation shares one changeset id and is appended atomically with the
//! names it claimed or released and the contents it stored first. [`run()`] runs an operation
//! as that one command through the platform's runner.
//!
//! Before it creates, changes, deletes, hides, restores or wipes a resource, and before it takes
//! an id for it, the changeset asks [`access`] whether its actor may, from the streams it loaded
//! (the resource's, and its parent file's): a refusal ends the operation with nothing appended.

mod error;
mod files;
mod properties;
mod run;

pub use error::OperationError;
pub use files::{FileWrite, Replace, Restore};
pub use properties::{Abort, DESCRIPTION_KEY, PropertyWrite, expectation};
pub use run::run;

use crate::content::ContentState;
use crate::content::Upload;
use crate::ids::{IdKind, IdSource};
use crate::name::{self, NameState};
use crate::resource::access::{self, Write};
use crate::resource::{
    self, Edit, Expect, NewResource, Principal, ResourceCommand, ResourceState, Stamp,
};
use crate::streams;
use chrono::{DateTime, Utc};
use palimpsest_events::resources::{
    ContentEvent, ContentRef, NameEvent, Parent, ResourceEvent, ResourceType, Revision,
};
use palimpsest_events::{DomainEvent, NewEvent, StreamName};
use palimpsest_web::command::{Attempt, CommandError, Decision, Reply};
use std::collections::HashMap;

/// `resrev_change_description` is a `varchar(255)`.
const MAX_DESCRIPTION: usize = 255;

/// `text` cut to at most `max` characters.
fn clip(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// Why an operation failed: refused by a decider or by access ([`OperationError`]), or by the
/// platform's runner (a conflict, the log); `http/error.rs` maps it to Deki's answer.
pub type OperationFailure = CommandError<OperationError>;

/// Who acts and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Actor {
    /// The user recorded in revisions.
    pub user_id: i64,
    /// The administrator (the admin token), who may write everything.
    pub admin: bool,
    /// The request's time, whole seconds.
    pub now: DateTime<Utc>,
}

impl Actor {
    /// Who acts, as [`access`] decides.
    pub fn principal(self) -> Principal {
        Principal {
            user_id: self.user_id,
            admin: self.admin,
        }
    }

    /// The name events carry as `Metadata.actor`: `admin` for the administrator (whose
    /// revisions carry Deki's admin user id), else the user id.
    pub fn name(self) -> String {
        if self.admin {
            ADMIN_ACTOR.to_owned()
        } else {
            self.user_id.to_string()
        }
    }
}

/// `Metadata.actor` of the administrator's events.
pub const ADMIN_ACTOR: &str = "admin";

/// One try of an operation (see the module doc).
pub struct Changeset {
    attempt: Attempt,
    actor: Actor,
    ids: IdSource,
    changeset_id: Option<i64>,
    resources: HashMap<i64, ResourceState>,
    names: HashMap<StreamName, NameState>,
    contents: HashMap<StreamName, ContentState>,
    writes: Vec<(StreamName, Vec<NewEvent>)>,
    revisions: Vec<Revision>,
}

impl Changeset {
    /// A changeset acting as `actor`, loading through `attempt`, taking ids from `ids`.
    pub fn new(attempt: Attempt, actor: Actor, ids: IdSource) -> Self {
        Changeset {
            attempt,
            actor,
            ids,
            changeset_id: None,
            resources: HashMap::new(),
            names: HashMap::new(),
            contents: HashMap::new(),
            writes: Vec::new(),
            revisions: Vec::new(),
        }
    }

    /// The revisions decided so far, in order.
    pub fn revisions(&self) -> &[Revision] {
        &self.revisions
    }

    /// The decision: every stream's events, and `reply`.
    pub fn finish(self, reply: Reply) -> Result<Decision, OperationFailure> {
        Ok(self
            .writes
            .into_iter()
            .fold(Decision::new(reply), |decision, (stream, events)| {
                decision.write(stream, events)
            }))
    }

    /// Loads, at once (one round trip's time rather than two), the streams an upload of
    /// `upload` as `name` under `parent` reads first: the name and the content.
    pub async fn preload(
        &mut self,
        res_type: ResourceType,
        parent: Parent,
        name: &str,
        upload: &Upload,
    ) -> Result<(), OperationFailure> {
        let name_stream = name_stream(res_type, parent, name)?;
        let content_stream = internal(streams::content(&upload.sha256))?;
        let attempt = &self.attempt;
        let (name, content) = tokio::join!(
            attempt.load::<NameState>(&name_stream),
            attempt.load::<ContentState>(&content_stream),
        );
        self.names.entry(name_stream).or_insert(name?);
        self.contents.entry(content_stream).or_insert(content?);
        Ok(())
    }

    /// A resource's state: as this changeset left it, else as loaded.
    pub async fn resource(&mut self, res_id: i64) -> Result<ResourceState, OperationFailure> {
        if let Some(state) = self.resources.get(&res_id) {
            return Ok(state.clone());
        }
        let stream = internal(streams::resource(res_id))?;
        let state: ResourceState = self.attempt.load(&stream).await?;
        self.resources.insert(res_id, state.clone());
        Ok(state)
    }

    /// The live head of a resource of type `kind`, or the refusal a route answers.
    pub async fn live(
        &mut self,
        res_id: i64,
        kind: ResourceType,
    ) -> Result<Revision, OperationFailure> {
        let state = self.resource(res_id).await?;
        let head = state
            .existing()
            .ok_or(resource::ResourceError::NotFound(res_id))
            .map_err(refuse)?;
        if head.res_type != kind {
            return Err(refuse(OperationError::WrongType(res_id, kind.word())));
        }
        if head.deleted {
            return Err(refuse(resource::ResourceError::Deleted(res_id)));
        }
        Ok(head.clone())
    }

    /// The state of `parent` when it is a file (whose creator owns its properties).
    async fn parent_file(
        &mut self,
        parent: Parent,
    ) -> Result<Option<ResourceState>, OperationFailure> {
        match parent {
            Parent::File(id) => Ok(Some(self.resource(id).await?)),
            _ => Ok(None),
        }
    }

    /// Refuses the actor a new resource under `parent` it may not add (403).
    async fn may_add(&mut self, parent: Parent) -> Result<(), OperationFailure> {
        let parent_file = self.parent_file(parent).await?;
        let write = Write::Under {
            parent,
            parent_file: parent_file.as_ref(),
        };
        access::decide(self.actor.principal(), write).map_err(refuse)
    }

    /// Refuses the actor a change to `res_id` it may not make (403).
    async fn may_change(&mut self, res_id: i64) -> Result<(), OperationFailure> {
        let resource = self.resource(res_id).await?;
        let parent = resource.existing().map(|head| head.parent);
        let parent_file = match parent {
            Some(parent) => self.parent_file(parent).await?,
            None => None,
        };
        let write = Write::Change {
            resource: &resource,
            parent_file: parent_file.as_ref(),
        };
        access::decide(self.actor.principal(), write).map_err(refuse)
    }

    /// Refuses the actor the archive's business (hide, restore, wipe) unless it is the
    /// administrator (403).
    fn may_archive(&self) -> Result<(), OperationFailure> {
        access::decide(self.actor.principal(), Write::Archive).map_err(refuse)
    }

    /// Who holds `name` under `parent` now.
    pub async fn holder(
        &mut self,
        res_type: ResourceType,
        parent: Parent,
        name: &str,
    ) -> Result<Option<i64>, OperationFailure> {
        let stream = name_stream(res_type, parent, name)?;
        Ok(self.name_state(&stream).await?.holder)
    }

    async fn name_state(&mut self, stream: &StreamName) -> Result<NameState, OperationFailure> {
        if let Some(state) = self.names.get(stream) {
            return Ok(*state);
        }
        let state: NameState = self.attempt.load(stream).await?;
        self.names.insert(stream.clone(), state);
        Ok(state)
    }

    /// The operation's changeset id: taken on first use, the same for every revision.
    async fn changeset_id(&mut self) -> Result<i64, OperationFailure> {
        if let Some(id) = self.changeset_id {
            return Ok(id);
        }
        let id = self
            .ids
            .next::<OperationError>(&self.attempt, IdKind::Changeset)
            .await?;
        self.changeset_id = Some(id);
        Ok(id)
    }

    async fn stamp(&mut self, description: Option<String>) -> Result<Stamp, OperationFailure> {
        let actor = self.actor;
        Ok(Stamp {
            resrev_id: self
                .ids
                .next::<OperationError>(&self.attempt, IdKind::Resrev)
                .await?,
            changeset_id: self.changeset_id().await?,
            user_id: actor.user_id,
            timestamp: actor.now,
            description: description.map(|text| clip(&text, MAX_DESCRIPTION)),
        })
    }

    /// The content reference of `upload`: the stored one for its digest, or a new one stored
    /// now on behalf of revision `rev` of `res_id`.
    async fn content(
        &mut self,
        upload: &Upload,
        mimetype: &str,
        res_id: i64,
        rev: i64,
    ) -> Result<ContentRef, OperationFailure> {
        let stream = internal(streams::content(&upload.sha256))?;
        let state: ContentState = match self.contents.get(&stream) {
            Some(state) => state.clone(),
            None => self.attempt.load(&stream).await?,
        };
        if let Some((rescontent_id, size)) = state.stored {
            return Ok(ContentRef {
                rescontent_id,
                sha256: upload.sha256.clone(),
                size,
            });
        }
        let rescontent_id = self
            .ids
            .next::<OperationError>(&self.attempt, IdKind::Rescontent)
            .await?;
        let event = ContentEvent::ContentStored {
            rescontent_id,
            res_id,
            res_rev: rev,
            sha256: upload.sha256.clone(),
            size: upload.size,
            mimetype: mimetype.to_owned(),
            stored: upload.stored.clone(),
        };
        self.push(stream.clone(), encode(&event)?);
        self.contents.insert(
            stream,
            ContentState {
                stored: Some((rescontent_id, upload.size)),
            },
        );
        Ok(ContentRef {
            rescontent_id,
            sha256: upload.sha256.clone(),
            size: upload.size,
        })
    }

    /// Decides `command` on `res_id` and records what it decided.
    async fn decide(
        &mut self,
        res_id: i64,
        command: ResourceCommand,
    ) -> Result<Option<Revision>, OperationFailure> {
        let state = self.resource(res_id).await?;
        let events = resource::decide(res_id, command, &state).map_err(refuse)?;
        let stream = internal(streams::resource(res_id))?;
        let mut state = state;
        let mut added = None;
        for event in &events {
            self.push(stream.clone(), encode(event)?);
            state = resource::evolve(state, event);
            if let ResourceEvent::RevisionAdded(revision) = event {
                added = Some(revision.clone());
                self.revisions.push(revision.clone());
            }
        }
        self.resources.insert(res_id, state);
        Ok(added)
    }

    /// Takes `name` under `parent` for `res_id`, or says who holds it.
    async fn claim(
        &mut self,
        res_type: ResourceType,
        parent: Parent,
        name: &str,
        res_id: i64,
    ) -> Result<(), OperationFailure> {
        let stream = name_stream(res_type, parent, name)?;
        let state = self.name_state(&stream).await?;
        match name::claim(&state, res_id) {
            Ok(Some(event)) => self.record_name(stream, state, event),
            Ok(None) => Ok(()),
            Err(holder) => Err(refuse(OperationError::NameTaken {
                name: name.to_owned(),
                parent: parent.to_string(),
                holder,
            })),
        }
    }

    /// Gives `name` under `parent` back.
    async fn release(
        &mut self,
        res_type: ResourceType,
        parent: Parent,
        name: &str,
        res_id: i64,
    ) -> Result<(), OperationFailure> {
        let stream = name_stream(res_type, parent, name)?;
        let state = self.name_state(&stream).await?;
        match name::release(&state, res_id) {
            Some(event) => self.record_name(stream, state, event),
            None => Ok(()),
        }
    }

    fn record_name(
        &mut self,
        stream: StreamName,
        state: NameState,
        event: NameEvent,
    ) -> Result<(), OperationFailure> {
        self.names
            .insert(stream.clone(), name::evolve(state, &event));
        self.push(stream, encode(&event)?);
        Ok(())
    }

    fn push(&mut self, stream: StreamName, event: NewEvent) {
        match self.writes.iter_mut().find(|(s, _)| *s == stream) {
            Some((_, events)) => events.push(event),
            None => self.writes.push((stream, vec![event])),
        }
    }

    /// Creates a resource named `name` under `parent` with `upload` as its content.
    pub async fn create(
        &mut self,
        res_type: ResourceType,
        parent: Parent,
        name: &str,
        upload: &Upload,
        mimetype: &str,
        description: Option<String>,
    ) -> Result<Revision, OperationFailure> {
        self.may_add(parent).await?;
        let res_id = self
            .ids
            .next::<OperationError>(&self.attempt, IdKind::Res)
            .await?;
        // A leased id names a stream nobody wrote (no other process holds it, and this one
        // hands it out once): it is not loaded, and the append expects it new.
        self.resources.insert(res_id, ResourceState::default());
        self.claim(res_type, parent, name, res_id).await?;
        let content = self.content(upload, mimetype, res_id, 1).await?;
        let stamp = self.stamp(description).await?;
        let new = NewResource {
            res_id,
            res_type,
            parent,
            name: name.to_owned(),
            mimetype: mimetype.to_owned(),
            content,
        };
        self.decide(res_id, ResourceCommand::Create(new, stamp))
            .await?
            .ok_or_else(|| CommandError::Internal("create decided no revision".into()))
    }

    /// Edits a live resource: new content, name or parent (the name index follows).
    pub async fn edit(
        &mut self,
        head: &Revision,
        upload: Option<(&Upload, &str)>,
        place: (Option<Parent>, Option<String>),
        expect: Expect,
        description: Option<String>,
    ) -> Result<Option<Revision>, OperationFailure> {
        self.may_change(head.res_id).await?;
        if let Some(target) = place.0.filter(|target| *target != head.parent) {
            self.may_add(target).await?;
        }
        let content = match upload {
            Some((upload, mimetype)) => Some((
                self.content(upload, mimetype, head.res_id, head.rev + 1)
                    .await?,
                mimetype.to_owned(),
            )),
            None => None,
        };
        let (parent, name) = place;
        let target = (
            parent.unwrap_or(head.parent),
            name.clone().unwrap_or(head.name.clone()),
        );
        if (target.0, target.1.as_str()) != (head.parent, head.name.as_str()) {
            resource::decide(
                head.res_id,
                probe(&expect),
                &self.resource(head.res_id).await?,
            )
            .map_err(refuse)?;
            self.release(head.res_type, head.parent, &head.name, head.res_id)
                .await?;
            self.claim(head.res_type, target.0, &target.1, head.res_id)
                .await?;
        }
        let stamp = self.stamp(description).await?;
        let edit = Edit {
            content,
            name,
            parent,
        };
        self.decide(head.res_id, ResourceCommand::Edit(edit, expect, stamp))
            .await
    }

    /// Deletes a resource: DELETEFLAG, and its name is free again.
    pub async fn delete(
        &mut self,
        res_id: i64,
        expect: Expect,
        description: Option<String>,
    ) -> Result<Revision, OperationFailure> {
        self.may_change(res_id).await?;
        let stamp = self.stamp(description).await?;
        let revision = self
            .decide(res_id, ResourceCommand::Delete(expect, stamp))
            .await?
            .ok_or_else(|| CommandError::Internal("delete decided no revision".into()))?;
        self.release(revision.res_type, revision.parent, &revision.name, res_id)
            .await?;
        Ok(revision)
    }

    /// Hides or shows revisions of a resource; `true` when anything changed.
    pub async fn hide(
        &mut self,
        res_id: i64,
        revs: Vec<i64>,
        hidden: bool,
    ) -> Result<(), OperationFailure> {
        self.may_archive()?;
        let command = ResourceCommand::Hide {
            revs,
            hidden,
            user_id: self.actor.user_id,
            timestamp: self.actor.now,
        };
        self.decide(res_id, command).await.map(|_| ())
    }

    /// Removes a deleted resource from the archive.
    pub async fn wipe(&mut self, res_id: i64) -> Result<(), OperationFailure> {
        self.may_archive()?;
        let command = ResourceCommand::Wipe {
            user_id: self.actor.user_id,
            timestamp: self.actor.now,
        };
        self.decide(res_id, command).await.map(|_| ())
    }
}

/// A command that only checks the client's view of the head (decided before names move, so a
/// stale write is refused as stale rather than as a name clash).
fn probe(expect: &Expect) -> ResourceCommand {
    ResourceCommand::Edit(
        Edit::default(),
        expect.clone(),
        Stamp {
            resrev_id: 0,
            user_id: 0,
            timestamp: DateTime::<Utc>::UNIX_EPOCH,
            changeset_id: 0,
            description: None,
        },
    )
}

/// The refusal of an operation.
pub fn refuse(e: impl Into<OperationError>) -> OperationFailure {
    CommandError::Rejected(e.into())
}

fn name_stream(
    res_type: ResourceType,
    parent: Parent,
    name: &str,
) -> Result<StreamName, OperationFailure> {
    streams::name(res_type, parent, name)
        .map_err(|e| refuse(OperationError::InvalidName(e.to_string())))
}

fn internal(
    stream: Result<StreamName, palimpsest_events::StreamNameError>,
) -> Result<StreamName, OperationFailure> {
    stream.map_err(|e| CommandError::Internal(e.to_string()))
}

fn encode<E: DomainEvent>(event: &E) -> Result<NewEvent, OperationFailure> {
    event
        .encode()
        .map_err(|e| CommandError::Internal(format!("event does not encode: {e}")))
}
