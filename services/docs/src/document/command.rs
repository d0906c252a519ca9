//! Writing documents: one command for `PUT`, `DELETE`, `POST /{db}` and `_bulk_docs`, deciding
//! each document against its stream in turn (several edits of one document in one batch see
//! each other) and appending every stream in one request.

use crate::attachments::AttachmentState;
use crate::attachments::{self, AttachmentError, NewAttachment, Uploaded};
use crate::body::{Incoming, Outgoing};
use crate::command::{Attempt, Decided, Decision, DocsCommand, Reply, encode, run_timed};
use crate::database::DbState;
use crate::design::validate::Validators;
use crate::document::{DocCommand, DocState, decide, evolve};
use crate::http::error::CouchError;
use crate::local::{self, LocalState};
use crate::phases::Phases;
use crate::rev::RevId;
use crate::streams;
use crate::sync::{self, SyncError, Writer};
use axum::http::StatusCode;
use palimpsest_events::NewEvent;
use palimpsest_events::StreamName;
use palimpsest_events::docs::AttachmentEvent;
use palimpsest_events::docs::DocumentEvent;
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;
use palimpsest_web::content::Content;
use std::collections::{HashMap, HashSet};

/// Bodies above this size are refused: an event must stay under NATS' 1 MiB payload limit.
pub const MAX_BODY: usize = 900_000;

/// The longest document id (UTF-8 bytes): the read model's keys (a document's id beside its
/// database, channel or grantee) must stay within a Postgres index entry (about 2,700 bytes).
/// CouchDB sets no limit; PouchDB's own tests use ids of 1,250 characters.
pub const MAX_ID_BYTES: usize = 1500;

/// One document to write.
pub struct Item {
    /// Its id (`None`: a `_bulk_docs` entry without `_id`; a uuid is made for it).
    pub doc_id: String,
    /// What the client sent.
    pub doc: Incoming,
    /// A standalone attachment upload or deletion, applied to the parent's body.
    pub attachment: Option<AttachmentEdit>,
}

/// `PUT` or `DELETE /{db}/{doc}/{attachment}`: the new revision is the parent's body with one
/// attachment set or removed.
pub enum AttachmentEdit {
    /// Set `name` to bytes already received into the attachment store.
    Put {
        /// The attachment's name.
        name: String,
        /// Its media type and bytes.
        upload: Uploaded,
    },
    /// Remove `name`.
    Delete {
        /// The attachment's name.
        name: String,
    },
}

/// An item whose inline attachments were received into the store (at the edge, before the
/// command): its body holds stubs for them, their bytes are here by name; or why they could
/// not be (that item's outcome).
struct Received {
    item: Item,
    uploaded: Result<Vec<(String, Uploaded)>, CouchError>,
}

impl Received {
    /// Every attachment this item brings, by name: those of its body and a standalone upload.
    fn uploads(&self) -> Vec<(&str, &Uploaded)> {
        let mut out: Vec<(&str, &Uploaded)> = match &self.uploaded {
            Ok(uploaded) => uploaded.iter().map(|(n, u)| (n.as_str(), u)).collect(),
            Err(_) => Vec::new(),
        };
        if let Some(AttachmentEdit::Put { name, upload }) = &self.item.attachment {
            out.push((name, upload));
        }
        out
    }
}

/// Receives every item's inline attachment data into the store: the bytes leave the body
/// before the command, which then carries stubs (and its events the digests and locations).
async fn receive_all(items: Vec<Item>) -> Result<Vec<Received>, CouchError> {
    let store = crate::access::scope::attachments()?;
    let mut out = Vec::with_capacity(items.len());
    for mut item in items {
        if !item.doc.body.contains("\"_attachments\"") {
            out.push(Received {
                item,
                uploaded: Ok(Vec::new()),
            });
            continue;
        }
        let uploaded = match attachments::receive_inline(&store, &item.doc.body).await {
            Ok((body, uploaded)) => {
                item.doc.body = body;
                Ok(uploaded)
            }
            Err(e @ AttachmentError::Store(_)) => return Err(attachment_error(e)),
            Err(e) => Err(attachment_error(e)),
        };
        out.push(Received { item, uploaded });
    }
    Ok(out)
}

/// The outcome for one document: its new rev, or why not.
pub type Outcome = (String, Result<String, CouchError>);

/// Checks a document id: not empty, no NUL, underscore only for `_design/`, short enough for a
/// stream key.
pub fn check_id(doc_id: &str) -> Result<(), CouchError> {
    if doc_id.is_empty() {
        return Err(CouchError::bad_request("Document id must not be empty"));
    }
    if doc_id.starts_with('_') && !doc_id.starts_with("_design/") {
        return Err(CouchError::bad_request(
            "Only reserved document ids may start with underscore.",
        ));
    }
    if doc_id.starts_with("user:") || doc_id.starts_with("role:") {
        return Err(CouchError::bad_request(
            "Document ids starting with user: or role: are reserved for users and roles",
        ));
    }
    if doc_id.contains('\0') {
        return Err(CouchError::bad_request(
            "Document id must not contain U+0000",
        ));
    }
    if doc_id.len() > MAX_ID_BYTES {
        return Err(CouchError::bad_request(format!(
            "Document id is longer than {MAX_ID_BYTES} bytes"
        )));
    }
    Ok(())
}

fn command(db: &str, item: &Item, new_edits: bool) -> Result<DocCommand, CouchError> {
    check_id(&item.doc_id)?;
    if item.doc.body.len() > MAX_BODY {
        return Err(CouchError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            "Document exceeds the maximum size",
        ));
    }
    if item.doc_id.starts_with(crate::design::PREFIX) && !item.doc.deleted {
        crate::design::DesignDoc::parse(&item.doc.body).check()?;
    }
    let parse = |rev: &str| RevId::parse(rev).map_err(|e| CouchError::bad_request(e.to_string()));
    if new_edits {
        return Ok(DocCommand::Edit {
            db: db.to_owned(),
            doc_id: item.doc_id.clone(),
            base: item.doc.rev.as_deref().map(parse).transpose()?,
            body: item.doc.body.clone(),
            deleted: item.doc.deleted,
        });
    }
    let (rev, ancestry) = replicated_revision(&item.doc)?;
    Ok(DocCommand::Replicate {
        db: db.to_owned(),
        doc_id: item.doc_id.clone(),
        rev,
        ancestry,
        body: item.doc.body.clone(),
        deleted: item.doc.deleted,
    })
}

/// A replicated revision's id and its ancestry (parent first), as CouchDB and PouchDB read
/// them: `_revisions` when present (`_rev` is then ignored: PouchDB itself sends documents
/// whose `_rev` disagrees with it), else `_rev` alone.
pub fn replicated_revision(doc: &Incoming) -> Result<(RevId, Vec<RevId>), CouchError> {
    let parse = |rev: &str| RevId::parse(rev).map_err(|e| CouchError::bad_request(e.to_string()));
    let Some(revisions) = &doc.revisions else {
        let rev = doc
            .rev
            .as_deref()
            .ok_or_else(|| CouchError::bad_request("_rev is required with new_edits=false"))?;
        return Ok((parse(rev)?, Vec::new()));
    };
    let Some(first) = revisions.ids.first() else {
        return Err(CouchError::bad_request("_revisions.ids must not be empty"));
    };
    if revisions.ids.len() as u64 > revisions.start {
        return Err(CouchError::bad_request(
            "_revisions.ids holds more revisions than _revisions.start allows",
        ));
    }
    let rev = parse(&format!("{}-{first}", revisions.start))?;
    let ancestry = revisions.ids[1..]
        .iter()
        .enumerate()
        .map(|(i, digest)| parse(&format!("{}-{digest}", revisions.start - 1 - i as u64)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((rev, ancestry))
}

/// What a batch decided: each item's outcome and the events per stream.
struct Batch {
    outcomes: Vec<Outcome>,
    writes: Vec<(StreamName, Vec<NewEvent>)>,
    stored: HashSet<StreamName>,
    states: HashMap<StreamName, DocState>,
    /// The states of the batch's `_local/` documents.
    locals: HashMap<StreamName, LocalState>,
    /// What the database's stream gains: the validators of the design documents written.
    database: Vec<palimpsest_events::docs::DatabaseEvent>,
}

impl Batch {
    fn push(&mut self, stream: StreamName, events: Vec<NewEvent>) {
        match self.writes.iter_mut().find(|(s, _)| *s == stream) {
            Some((_, pending)) => pending.extend(events),
            None => self.writes.push((stream, events)),
        }
    }
}

/// The body a command's revision descends from, and the new revision's generation.
fn parent_of(command: &DocCommand, state: &DocState) -> (Option<String>, u64) {
    let tree = &state.tree;
    match command {
        DocCommand::Edit { base, .. } => {
            let parent = match base {
                Some(base) => tree.get(base),
                None => tree.winner().filter(|w| w.deleted),
            };
            (
                parent.and_then(|p| p.body.clone()),
                parent.map_or(1, |p| p.rev.generation + 1),
            )
        }
        DocCommand::Replicate { rev, ancestry, .. } => (
            ancestry
                .iter()
                .find_map(|a| tree.get(a).and_then(|n| n.body.clone())),
            rev.generation,
        ),
    }
}

fn with_body(command: DocCommand, new_body: String) -> DocCommand {
    match command {
        DocCommand::Edit {
            db,
            doc_id,
            base,
            deleted,
            ..
        } => DocCommand::Edit {
            db,
            doc_id,
            base,
            body: new_body,
            deleted,
        },
        DocCommand::Replicate {
            db,
            doc_id,
            rev,
            ancestry,
            deleted,
            ..
        } => DocCommand::Replicate {
            db,
            doc_id,
            rev,
            ancestry,
            body: new_body,
            deleted,
        },
    }
}

fn sync_error(e: SyncError) -> CouchError {
    match e {
        SyncError::Forbidden(reason) => CouchError::new(StatusCode::FORBIDDEN, "forbidden", reason),
        SyncError::Failed(_) => CouchError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_server_error",
            e.to_string(),
        ),
    }
}

fn attachment_error(e: AttachmentError) -> CouchError {
    match e {
        AttachmentError::MissingStub(_) => CouchError::new(
            StatusCode::PRECONDITION_FAILED,
            "missing_stub",
            e.to_string(),
        ),
        AttachmentError::Store(_) => CouchError::internal(e.to_string()),
        AttachmentError::Invalid(..) => CouchError::bad_request(e.to_string()),
    }
}

/// What every item of a batch is decided in.
struct Scope<'a> {
    incarnation: uuid::Uuid,
    db: &'a str,
    new_edits: bool,
    writer: &'a Writer,
}

/// Decides one item against its document's state in the batch (loaded before): its outcome,
/// with the attachments its revision stores added to `attachments`. Pure but for the sync
/// function, and synchronous, so one QuickJS engine serves the whole batch.
fn decide_one(
    batch: &mut Batch,
    scope: &Scope<'_>,
    run: &mut Functions<'_>,
    received: &Received,
    attachments: &mut Vec<NewAttachment>,
) -> Result<Outcome, CouchError> {
    let item = &received.item;
    if let Err(refused) = &received.uploaded {
        return Ok((item.doc_id.clone(), Err(refused.clone())));
    }
    if local::batch::is_local(&item.doc_id) {
        return decide_local(batch, scope, item);
    }
    let uploads = received.uploads();
    let addressed = command(scope.db, item, scope.new_edits).and_then(|command| {
        streams::document(scope.incarnation, &item.doc_id)
            .map(|stream| (command, stream))
            .map_err(|e| CouchError::bad_request(e.to_string()))
    });
    let (command, stream) = match addressed {
        Ok(addressed) => addressed,
        Err(refused) => return Ok((item.doc_id.clone(), Err(refused))),
    };
    let state = batch
        .states
        .get(&stream)
        .cloned()
        .ok_or_else(|| CouchError::internal(format!("the state of {stream} was not loaded")))?;
    let (events, rev) = match revision(run, item, command, &state, &uploads) {
        Ok(decided) => decided,
        Err(refused) => return Ok((item.doc_id.clone(), Err(refused))),
    };
    if !events.is_empty() {
        attachments.extend(uploads.iter().map(|(_, upload)| upload.attachment.clone()));
    }
    batch.push(stream.clone(), encode(&events)?);
    batch
        .states
        .insert(stream, events.iter().fold(state, evolve));
    Ok((item.doc_id.clone(), Ok(rev)))
}

/// Decides a `_local/` item of the batch against its local document's state (loaded before).
fn decide_local(batch: &mut Batch, scope: &Scope<'_>, item: &Item) -> Result<Outcome, CouchError> {
    let command = match local::batch::command_of(scope.db, &item.doc_id, &item.doc) {
        Ok(command) => command,
        Err(refused) => return Ok((item.doc_id.clone(), Err(refused))),
    };
    let stream = local_stream(scope.incarnation, &item.doc_id)?;
    let state = batch
        .locals
        .get(&stream)
        .cloned()
        .ok_or_else(|| CouchError::internal(format!("the state of {stream} was not loaded")))?;
    match local::batch::decide_in_batch(command, &state) {
        Ok((events, after, rev)) => {
            batch.push(stream.clone(), encode(&events)?);
            batch.locals.insert(stream, after);
            Ok((item.doc_id.clone(), Ok(rev)))
        }
        Err(refused) => Ok((item.doc_id.clone(), Err(refused))),
    }
}

/// The stream of the local document `doc_id` (`_local/<id>`).
fn local_stream(incarnation: uuid::Uuid, doc_id: &str) -> Result<StreamName, CouchError> {
    let id = doc_id.strip_prefix(local::batch::PREFIX).unwrap_or(doc_id);
    streams::local(incarnation, id).map_err(|e| CouchError::bad_request(e.to_string()))
}

/// The JavaScript a batch's documents meet: the database's sync function and its design
/// documents' `validate_doc_update` functions, each compiled once for the batch.
struct Functions<'a> {
    sync: sync::Runner<'a>,
    validators: Validators<'a>,
}

/// This document's new revision against its state (pure but for the sync function and the
/// validators): its events and its rev. `uploads` are the attachments received for it, by name.
fn revision(
    run: &mut Functions<'_>,
    item: &Item,
    command: DocCommand,
    state: &DocState,
    uploads: &[(&str, &Uploaded)],
) -> Result<(Vec<DocumentEvent>, String), CouchError> {
    let (parent, generation) = parent_of(&command, state);
    let body = match &command {
        DocCommand::Edit { body, .. } | DocCommand::Replicate { body, .. } => body.clone(),
    };
    let body = match &item.attachment {
        None => body,
        Some(edit) => {
            let parent_body = parent.as_deref().unwrap_or("{}");
            match edit {
                AttachmentEdit::Put { name, .. } => {
                    attachments::set(parent_body, name, Some(serde_json::json!({"stub": true})))
                }
                AttachmentEdit::Delete { name } => {
                    if !attachments::stubs(parent_body).contains_key(name) {
                        return Err(CouchError::not_found("Document is missing attachment"));
                    }
                    attachments::set(parent_body, name, None)
                }
            }
        }
    };
    let new_edit = matches!(command, DocCommand::Edit { .. });
    let body = attachments::prepare(&body, parent.as_deref(), generation, uploads, new_edit)
        .map_err(attachment_error)?;
    let command = with_body(command, body);
    let given_rev = match &command {
        DocCommand::Replicate { rev, .. } => Some(rev.to_string()),
        DocCommand::Edit { .. } => None,
    };
    let mut events = decide(command, state)?;
    if let Some(DocumentEvent::RevisionStored {
        doc_id,
        rev,
        body,
        deleted,
        channels,
        access,
        roles,
        ..
    }) = events.last_mut()
    {
        let mut doc = Outgoing::new(doc_id, rev, body);
        if *deleted {
            doc = doc.member("_deleted", "true");
        }
        let old = old_doc(given_rev.is_some(), state, doc_id, parent.as_deref());
        let doc = doc.finish();
        run.validators.check(doc_id, &doc, old.as_deref())?;
        let outcome = run.sync.run(&doc, old.as_deref()).map_err(sync_error)?;
        *channels = outcome.channels;
        *access = outcome.access;
        *roles = outcome.roles;
    }
    let rev = events
        .iter()
        .filter_map(|event| match event {
            DocumentEvent::RevisionStored { rev, .. } => Some(rev.clone()),
            _ => None,
        })
        .next_back()
        .or(given_rev)
        .unwrap_or_default();
    Ok((events, rev))
}

/// The sync function's `oldDoc`: for a new edit the revision it extends; for a replicated one
/// (`replicated`) the document's current winner, as Sync Gateway runs it, whichever branch the
/// revision grafts onto, so a branch sharing no ancestor with the tree still meets the
/// function's checks on the existing document (a tombstone winner with `_deleted: true`).
fn old_doc(
    replicated: bool,
    state: &DocState,
    doc_id: &str,
    parent: Option<&str>,
) -> Option<String> {
    if !replicated {
        return parent.map(|body| Outgoing::new(doc_id, "", body).finish());
    }
    let winner = state.tree.winner()?;
    let body = winner.body.as_deref().unwrap_or("{}");
    let doc = Outgoing::new(doc_id, &winner.rev.to_string(), body);
    let doc = if winner.deleted {
        doc.member("_deleted", "true")
    } else {
        doc
    };
    Some(doc.finish())
}

/// Appends the attachments' digests and bytes (or their location) whose content-addressed
/// streams do not hold them yet (all of the batch's in one read of the log).
async fn store_attachments(
    attempt: &Attempt,
    batch: &mut Batch,
    attachments: Vec<NewAttachment>,
) -> Result<(), CouchError> {
    let mut fresh = Vec::new();
    for attachment in attachments {
        let stream = streams::attachment(attachment.stream_key())
            .map_err(|e| CouchError::bad_request(e.to_string()))?;
        if batch.stored.insert(stream.clone()) {
            fresh.push((stream, attachment));
        }
    }
    let streams: Vec<StreamName> = fresh.iter().map(|(s, _)| s.clone()).collect();
    let held: Vec<AttachmentState> = attempt.load_many(&streams).await?;
    for ((stream, attachment), held) in fresh.into_iter().zip(held) {
        if held.stored {
            continue;
        }
        let (data, location) = match attachment.content {
            Content::Inline(bytes) => (Some(attachments::encode(&bytes)), None),
            Content::Location(location) => (None, Some(location)),
        };
        let event = AttachmentEvent::AttachmentStored {
            sha1: attachment.digests.sha1,
            md5: attachment.digests.md5,
            length: attachment.length,
            data,
            location,
        };
        batch.push(stream, encode(&[event])?);
    }
    Ok(())
}

/// Decides every item of a batch against its document's state: the database and every
/// document stream read first (one query for the documents), then each item decided in turn
/// (several edits of one document see each other), then the attachments stored.
///
/// Two levels of failure: the outer error means this try could not read what it needs (the log
/// is unavailable, a stream does not decode) and the whole write fails, appending nothing and
/// storing nothing under its key, so it can be retried; an item's own outcome (conflict,
/// forbidden, bad document) is answered in its place beside the others.
async fn decide_all(
    attempt: &Attempt,
    writer: &Writer,
    db: &str,
    items: &[Received],
    new_edits: bool,
    phases: &mut Phases,
) -> Result<(Batch, StreamName), CouchError> {
    let db_stream = streams::database(db).map_err(|e| CouchError::bad_request(e.to_string()))?;
    let db_state: DbState = attempt.load(&db_stream).await?;
    let (incarnation, _) = db_state.live.ok_or_else(CouchError::no_database)?;
    let mut batch = Batch {
        outcomes: Vec::new(),
        writes: Vec::new(),
        stored: HashSet::new(),
        states: HashMap::new(),
        locals: HashMap::new(),
        database: Vec::new(),
    };
    // Every document's stream in one read of the log (a refused id is answered in its place).
    let (locals, documents): (Vec<&Received>, Vec<&Received>) = items
        .iter()
        .partition(|received| local::batch::is_local(&received.item.doc_id));
    let streams: Vec<StreamName> = documents
        .iter()
        .filter_map(|received| streams::document(incarnation, &received.item.doc_id).ok())
        .collect();
    let states: Vec<DocState> = match (creation(items, new_edits), streams.as_slice()) {
        // A single new document: taken as new without reading its stream (the append expects
        // none; one that exists fails it and the next try reads it).
        (true, [stream]) => vec![attempt.load_expecting_new(stream).await?],
        _ => attempt.load_many(&streams).await?,
    };
    batch.states.extend(streams.into_iter().zip(states));
    let local_streams: Vec<StreamName> = locals
        .iter()
        .filter_map(|received| local_stream(incarnation, &received.item.doc_id).ok())
        .collect();
    if !local_streams.is_empty() {
        let states: Vec<LocalState> = attempt.load_many(&local_streams).await?;
        batch.locals.extend(local_streams.into_iter().zip(states));
    }
    phases.lap("load");
    let scope = Scope {
        incarnation,
        db,
        new_edits,
        writer,
    };
    let mut attachments = Vec::new();
    {
        let mut run = Functions {
            sync: sync::Runner::new(db_state.sync.as_deref(), scope.writer),
            validators: Validators::new(&db_state.validators, scope.writer, db),
        };
        for item in items {
            let outcome = decide_one(&mut batch, &scope, &mut run, item, &mut attachments)?;
            batch.outcomes.push(outcome);
        }
    }
    batch.database =
        crate::database::validators_after(&db_state, &design_validators(&batch, incarnation));
    phases.lap("decide");
    store_attachments(attempt, &mut batch, attachments).await?;
    phases.lap("attachments");
    Ok((batch, db_stream))
}

/// Whether a batch is one new document: a single edit naming no parent revision (`PUT` or
/// `POST` without `_rev`), which CouchDB accepts only where the document does not exist or is
/// deleted. Its stream need not be read before deciding ([`Attempt::load_expecting_new`]).
fn creation(items: &[Received], new_edits: bool) -> bool {
    match items {
        [only] => {
            new_edits
                && only.item.doc.rev.is_none()
                && only.item.attachment.is_none()
                && !local::batch::is_local(&only.item.doc_id)
        }
        _ => false,
    }
}

/// The `validate_doc_update` of each design document the batch wrote, as its winner now
/// stands (`None`: it has none, or is deleted).
fn design_validators(
    batch: &Batch,
    incarnation: uuid::Uuid,
) -> std::collections::BTreeMap<String, Option<String>> {
    batch
        .outcomes
        .iter()
        .filter(|(doc_id, outcome)| doc_id.starts_with(crate::design::PREFIX) && outcome.is_ok())
        .filter_map(|(doc_id, _)| {
            let stream = streams::document(incarnation, doc_id).ok()?;
            let winner = batch.states.get(&stream)?.tree.winner()?;
            let validate = match (&winner.body, winner.deleted) {
                (Some(body), false) => crate::design::DesignDoc::parse(body)
                    .validate_doc_update()
                    .map(str::to_owned),
                _ => None,
            };
            Some((doc_id.clone(), validate))
        })
        .collect()
}

/// How a write answers: one document's outcome, or a `_bulk_docs` list.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// The single outcome with this status on success.
    Single(StatusCode),
    /// `_bulk_docs`: every outcome (`new_edits=false`: only failures).
    Bulk {
        /// Whether the revisions were new edits.
        new_edits: bool,
    },
}

impl Shape {
    /// The route label of a write answered in this shape, for its [`Phases`].
    pub fn route(self) -> &'static str {
        match self {
            Shape::Single(_) => "document",
            Shape::Bulk { .. } => "_bulk_docs",
        }
    }

    fn reply(self, outcomes: &[Outcome]) -> Reply {
        match self {
            Shape::Single(status) => match outcomes.first() {
                Some((id, Ok(rev))) => Reply::json(
                    status,
                    &serde_json::json!({"ok": true, "id": id, "rev": rev}),
                ),
                Some((_, Err(e))) => Reply::json(e.status, &e.body()),
                None => Reply::json(
                    StatusCode::BAD_REQUEST,
                    &CouchError::bad_request("no document").body(),
                ),
            },
            Shape::Bulk { new_edits } => {
                let items: Vec<serde_json::Value> = outcomes
                    .iter()
                    .filter_map(|(id, outcome)| match outcome {
                        Ok(rev) if new_edits => {
                            Some(serde_json::json!({"ok": true, "id": id, "rev": rev}))
                        }
                        Ok(_) => None,
                        Err(e) => Some(
                            serde_json::json!({"id": id, "error": e.error, "reason": e.reason}),
                        ),
                    })
                    .collect();
                Reply::json(StatusCode::CREATED, &items)
            }
        }
    }
}

/// A write and its received items, as one command.
struct WriteDocs<'r> {
    write: Write<'r>,
    items: Vec<Received>,
}

impl DocsCommand for WriteDocs<'_> {
    fn decide<'a>(&'a self, attempt: &'a Attempt) -> Decided<'a> {
        Box::pin(async move {
            let write = &self.write;
            let mut phases = Phases::start(write.shape.route());
            let (batch, db_stream) = decide_all(
                attempt,
                write.writer,
                write.db,
                &self.items,
                write.new_edits,
                &mut phases,
            )
            .await?;
            // Refused on a document only taken as new: the refusal is decided again from its
            // stream ([`crate::command::run`]), which may hold it after all.
            if attempt.assumed_new()
                && let Some((_, Err(refusal))) = batch.outcomes.iter().find(|(_, o)| o.is_err())
            {
                return Err(refusal.clone());
            }
            let decision = Decision::new(write.shape.reply(&batch.outcomes));
            // The validators read from the database's stream decided the batch: it is still
            // at that version when the append commits, or it gains the new ones.
            let mut decision = if batch.database.is_empty() {
                decision.check(db_stream)
            } else {
                decision.write(db_stream, encode(&batch.database)?)
            };
            for (stream, events) in batch.writes {
                decision = decision.write(stream, events);
            }
            phases.lap("decision");
            Ok(decision)
        })
    }
}

/// Writes `items` into `db` and answers in `shape`: their inline attachments are received
/// into the store first, then one command decides and appends them all.
pub async fn write(
    state: &AppState,
    request: &CommandRequest,
    writer: &Writer,
    db: &str,
    items: Vec<Item>,
    new_edits: bool,
    shape: Shape,
) -> Result<Reply, CouchError> {
    let mut phases = Phases::start(shape.route());
    let write = Write {
        writer,
        db,
        new_edits,
        shape,
    };
    write_timed(state, request, write, items, &mut phases).await
}

/// What a write is, but for its items: who writes, where, how.
pub struct Write<'r> {
    /// The caller's sync-function identity.
    pub writer: &'r Writer,
    /// The database.
    pub db: &'r str,
    /// Whether the revisions are new edits (`false`: replicated ones).
    pub new_edits: bool,
    /// How the answer is given.
    pub shape: Shape,
}

/// [`write`] on a clock the route started (its own phases already lapped): laps `receive`,
/// the decision's phases, `append_and_wait` and `reply`.
pub async fn write_timed(
    state: &AppState,
    request: &CommandRequest,
    write: Write<'_>,
    items: Vec<Item>,
    phases: &mut Phases,
) -> Result<Reply, CouchError> {
    crate::access::gate::check_design_writes(items.iter().map(|item| item.doc_id.as_str()))?;
    let items = receive_all(items).await?;
    phases.lap("receive");
    let command = WriteDocs { write, items };
    let reply = run_timed(state, request, &command, phases).await?;
    if lost_a_conflict(&reply) {
        show_the_winner(state).await;
    }
    phases.lap("reply");
    Ok(reply)
}

/// How long a conflict's answer waits for the read model to show the revision it lost to.
const CONFLICT_SETTLES: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether an answer tells of a conflict: a 409, or a `_bulk_docs` item whose `error` is
/// `conflict`.
fn lost_a_conflict(reply: &Reply) -> bool {
    if reply.status == StatusCode::CONFLICT {
        return true;
    }
    reply.status == StatusCode::CREATED
        && reply
            .json_body::<Vec<serde_json::Value>>()
            .is_ok_and(|items| items.iter().any(|item| item["error"] == "conflict"))
}

/// A conflict is decided against the log, which may hold a concurrent winner the read model
/// does not show yet: waits (bounded) until it shows the whole log, so a read right after the
/// 409 finds the revision that won, as CouchDB's would.
async fn show_the_winner(state: &AppState) {
    match state.store.head_position().await {
        Ok(head) => {
            let projection = crate::projection::NAME;
            if !state
                .watch
                .wait_for(projection, head, CONFLICT_SETTLES)
                .await
            {
                tracing::warn!(
                    head,
                    "the docs read model did not reach the log's head in time"
                );
            }
        }
        Err(e) => tracing::warn!(error = %e, "the log's head could not be read after a conflict"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rev::RevId;

    fn bobs(deleted: bool) -> DocState {
        let mut state = DocState::default();
        let rev = RevId::parse("1-b").expect("valid");
        state
            .tree
            .insert(rev, &[], r#"{"owner":"bob"}"#.into(), deleted);
        state
    }

    #[test]
    fn a_replicated_revision_meets_the_sync_function_with_the_current_winner() {
        let old = old_doc(true, &bobs(false), "doc", None);
        assert_eq!(
            old.as_deref(),
            Some(r#"{"_id":"doc","_rev":"1-b","owner":"bob"}"#)
        );
    }

    #[test]
    fn a_deleted_winner_is_shown_as_a_tombstone_and_a_new_document_has_none() {
        let old = old_doc(true, &bobs(true), "doc", None);
        assert_eq!(
            old.as_deref(),
            Some(r#"{"_id":"doc","_rev":"1-b","owner":"bob","_deleted":true}"#)
        );
        assert_eq!(old_doc(true, &DocState::default(), "doc", None), None);
    }

    #[test]
    fn a_new_edit_meets_it_with_the_revision_it_extends() {
        let old = old_doc(false, &bobs(false), "doc", Some(r#"{"n":1}"#));
        assert_eq!(old.as_deref(), Some(r#"{"_id":"doc","_rev":"","n":1}"#));
    }
}
