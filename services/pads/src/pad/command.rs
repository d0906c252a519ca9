//! What a client can ask of a pad, how a command loads the pad it reads, and each command run
//! as load → decide. The commands are Etherpad's API functions on pads (`createPad`, `setText`,
//! `copyPad`, …) and the changesets editing clients submit; their inputs beyond the pad itself
//! are the types below (the handler reads the clock and draws new ids, the deciders in
//! [`super::decide`] never do). Each function here is one try of its command: the runner
//! ([`crate::command::Pads::run`]) calls it again from fresh state when a stream moved.

use super::Pad;
use super::decide::{chat, creation, marks, submission, text, transfer};
use super::seed::pad_from_store;
use crate::author::{Authors, NewAuthor};
use crate::changes::AttributePool;
use crate::command::{Load, Pads};
use crate::error::DomainError;
use crate::group::Groups;
use crate::http::envelope::EnvelopeError;
use crate::import;
use crate::outcome::Outcome;
use crate::projection::NAME as PROJECTION;
use crate::read::StoreReader;
use crate::store::keys;
use crate::store::records::RevisionRecord;
use crate::streams::stream;
use axum::http::StatusCode;
use palimpsest_events::pads::{self, Attribute, ChatTime};

impl Load {
    /// Pad `id`; a process that has never seen it starts from its store record.
    pub async fn pad(&self, id: &str) -> Result<Pad, EnvelopeError> {
        let Ok(name) = stream(pads::PAD, id) else {
            return Ok(Pad::absent(id));
        };
        let seed = pad_from_store(&self.read, id);
        self.attempt
            .load_seeded(&name, seed)
            .await
            .map_err(EnvelopeError::internal)
    }
}

/// A revision to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRevision {
    /// The changeset, against the pad's pool once `new_attributes` are in it.
    pub changeset: String,
    /// Attributes to put into the pool before applying (from a submitted changeset's pool).
    pub new_attributes: Vec<Attribute>,
    /// The author id, or `""`.
    pub author: String,
    /// When (ms).
    pub now: i64,
}

/// A client's changeset.
#[derive(Debug, Clone)]
pub struct Submission {
    /// The revision the client's text was at.
    pub base_rev: i64,
    /// The changeset against that revision, its attribute numbers in `pool`.
    pub changeset: String,
    /// The client's attribute pool.
    pub pool: AttributePool,
    /// The submitting author (every `author` attribute must name them).
    pub author: String,
    /// When (ms).
    pub now: i64,
}

/// A revision recorded after the submission's base: its changeset and author.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The changeset as stored.
    pub changeset: String,
    /// Its author.
    pub author: String,
}

/// A chat message to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// The message.
    pub text: String,
    /// The author, if the client named one.
    pub author_id: Option<String>,
    /// Its time.
    pub time: ChatTime,
}

/// The author Etherpad creates for every `saveRevision` call (named `API`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiAuthor {
    /// Its new id.
    pub author_id: String,
    /// Its color.
    pub color_id: i64,
}

/// The pads, groups and authors a copy or move works on.
#[derive(Debug, Clone)]
pub struct Transfer {
    /// The pad copied or moved.
    pub source: Pad,
    /// The pad it goes to (possibly existing).
    pub destination: Pad,
    /// The groups of both pads.
    pub groups: Groups,
    /// The authors of both pads.
    pub authors: Authors,
    /// Whether an existing destination is replaced.
    pub force: bool,
}

/// `createPad(padID, text, authorId)`: pad `id` with `text` (or the default text).
pub async fn create_pad(
    load: &Load,
    id: &str,
    text: Option<&str>,
    author: &str,
    now: i64,
) -> Result<Outcome, EnvelopeError> {
    let pad = load.pad(id).await?;
    let authors = load.authors([author.to_owned()]).await?;
    Ok(creation::create_pad(&pad, text, author, now, authors)?)
}

/// How a text edit decides: the pad, the text, the author, now (ms), the author records.
pub type TextEdit = fn(&Pad, &str, &str, i64, Authors) -> Result<Outcome, DomainError>;

/// The edit both `setText` and `appendText` make (`decide` tells which): load the pad and its
/// author, decide.
pub async fn edit_text(
    load: &Load,
    decide: TextEdit,
    id: &str,
    text: &str,
    author: &str,
    now: i64,
) -> Result<Outcome, EnvelopeError> {
    let pad = load.pad(id).await?;
    let authors = load.authors([author.to_owned()]).await?;
    Ok(decide(&pad, text, author, now, authors)?)
}

/// `restoreRevision(padID, rev, authorId)`: the pad must exist and `rev` be at or below its
/// head; the text of revision `rev` is read from the store (`reader`).
pub async fn restore_revision(
    load: &Load,
    reader: &StoreReader,
    id: &str,
    rev: i64,
    author: &str,
    now: i64,
) -> Result<Outcome, EnvelopeError> {
    let pad = load.pad(id).await?;
    if !pad.exists {
        return Err(DomainError::PadMissing.into());
    }
    if rev > pad.head {
        return Err(DomainError::RevAboveHead.into());
    }
    // Revision `rev` is history (at or below the head the command read): immutable, so the
    // store's copy of it is the log's.
    let old = reader
        .atext_at(id, rev, &pad.pool)
        .await
        .map_err(EnvelopeError::internal)?;
    let authors = load.authors([author.to_owned()]).await?;
    Ok(text::restore_revision(
        &pad, rev, &old, author, now, authors,
    )?)
}

/// `deletePad(padID)`: the pad, its group's entry and its authors' entries.
pub async fn delete_pad(load: &Load, id: &str) -> Result<Outcome, EnvelopeError> {
    let pad = load.pad(id).await?;
    let groups = load.groups_of_pads(&[id]).await?;
    let authors = load.authors(pad.authors()).await?;
    Ok(transfer::delete_pad(&pad, groups, authors)?)
}

/// Which copy a transfer makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransferKind {
    /// `copyPad`: the pad with its history.
    Copy,
    /// `movePad`: copied with its history, then the source deleted.
    Move,
    /// `copyPadWithoutHistory`: the source's text as the destination's first revision.
    WithoutHistory,
}

/// `copyPad`, `movePad`, `copyPadWithoutHistory` (`kind`): loads both pads, their groups and
/// authors (and `author`'s), and decides the copy or move.
pub async fn transfer_pad(
    load: &Load,
    kind: TransferKind,
    (source, dest): (&str, &str),
    force: bool,
    author: &str,
    now: i64,
) -> Result<Outcome, EnvelopeError> {
    let from = load.pad(source).await?;
    let to = load.pad(dest).await?;
    let groups = load.groups_of_pads(&[source, dest]).await?;
    let mut ids = from.authors();
    ids.extend(to.authors());
    ids.push(author.to_owned());
    let authors = load.authors(ids).await?;
    let t = Transfer {
        source: from,
        destination: to,
        groups,
        authors,
        force,
    };
    Ok(match kind {
        TransferKind::Copy => transfer::copy_pad(t)?,
        TransferKind::Move => transfer::move_pad(t)?,
        TransferKind::WithoutHistory => transfer::copy_pad_without_history(t, author, now)?,
    })
}

/// `getReadOnlyID(padID)`: the pad's read-only id, `candidate` if it has none yet.
pub async fn read_only_id(
    load: &Load,
    id: &str,
    candidate: &str,
) -> Result<(Outcome, String), EnvelopeError> {
    let pad = load.pad(id).await?;
    if !pad.exists {
        return Err(DomainError::PadMissing.into());
    }
    Ok(marks::read_only_id(&pad, candidate.to_owned())?)
}

/// `setPublicStatus(padID, publicStatus)` of an existing pad.
pub async fn set_public_status(
    load: &Load,
    id: &str,
    status: bool,
) -> Result<Outcome, EnvelopeError> {
    let pad = load.pad(id).await?;
    if !pad.exists {
        return Err(DomainError::PadMissing.into());
    }
    Ok(marks::set_public_status(&pad, status)?)
}

/// `saveRevision(padID, rev)`: revision `rev` (the head when absent) saved as `saved_id` by
/// the new author `author` (Etherpad's `API` author).
pub async fn save_revision(
    load: &Load,
    id: &str,
    rev: Option<i64>,
    author: &NewAuthor,
    saved_id: &str,
    now: i64,
) -> Result<Outcome, EnvelopeError> {
    let pad = load.pad(id).await?;
    if !pad.exists {
        return Err(DomainError::PadMissing.into());
    }
    if rev.is_some_and(|r| r > pad.head) {
        return Err(DomainError::RevAboveHead.into());
    }
    let api = ApiAuthor {
        author_id: author.author_id.clone(),
        color_id: author.color_id,
    };
    Ok(marks::save_revision(
        &pad,
        rev,
        api,
        saved_id.to_owned(),
        now,
    )?)
}

/// `appendChatMessage(padID, text, authorID, time)`: `message` on pad `id`, which a message
/// creates if it does not exist (as in Etherpad).
pub async fn append_chat_message(
    load: &Load,
    id: &str,
    message: &ChatMessage,
    now: i64,
) -> Result<Outcome, EnvelopeError> {
    let pad = load.pad(id).await?;
    let authors = load.authors(message.author_id.clone()).await?;
    Ok(chat::append_chat_message(
        &pad,
        message.clone(),
        now,
        authors,
    )?)
}

/// `setHTML(padID, html, authorId)`: the pad's text becomes what Etherpad imports from `html`.
pub async fn set_html(
    load: &Load,
    id: &str,
    html: &str,
    author: &str,
    now: i64,
) -> Result<Outcome, EnvelopeError> {
    let pad = load.pad(id).await?;
    let authors = load.authors([author.to_owned()]).await?;
    Ok(import::set_html(&pad, html, author, now, authors)?)
}

/// `createGroupPad(groupID, padName, text, authorId)`: the pad `pad_id` in group `group_id`.
/// `id_check` is the caller's check of the pad id as Etherpad's `getPad` makes it; Etherpad
/// makes it after finding the group and no pad of that name, so its refusal comes then.
pub async fn create_group_pad(
    load: &Load,
    (group_id, pad_id): (&str, &str),
    id_check: &Result<(), EnvelopeError>,
    text: Option<&str>,
    author: &str,
    now: i64,
) -> Result<Outcome, EnvelopeError> {
    let group = load.group(group_id).await?;
    if !group.exists {
        return Err(DomainError::GroupMissing.into());
    }
    let pad = load.pad(pad_id).await?;
    if pad.exists {
        return Err(DomainError::PadNameExists.into());
    }
    id_check.clone()?;
    let authors = load.authors([author.to_owned()]).await?;
    Ok(creation::create_group_pad(
        group_id, &group, &pad, text, author, now, authors,
    )?)
}

/// A client's changeset (`/ext/submitChangeset`) on the existing pad `pad_id`: transformed
/// over the revisions since its base (read from the store, `reader`) and decided. Returns the
/// outcome and the revision the change became.
pub async fn submit_changeset(
    load: &Load,
    (pads, reader): (&Pads, &StoreReader),
    pad_id: &str,
    author: &str,
    submission: &Submission,
) -> Result<(Outcome, i64), EnvelopeError> {
    let pad = load.pad(pad_id).await?;
    if !pad.exists {
        return Err(DomainError::PadMissing.into());
    }
    let base = submission.base_rev;
    let since = if base < pad.head && base >= 0 {
        recorded(pads, reader, pad_id, base + 1, pad.head).await?
    } else {
        Vec::new()
    };
    let authors = load.authors([author.to_owned()]).await?;
    Ok(submission::submit_changeset(
        &pad,
        submission.clone(),
        &since,
        authors,
    )?)
}

/// The revisions `from ..= to` of a pad as the store has them; the store is waited for if it
/// has not caught up with the log yet.
async fn recorded(
    pads: &Pads,
    reader: &StoreReader,
    pad_id: &str,
    from: i64,
    to: i64,
) -> Result<Vec<Recorded>, EnvelopeError> {
    let wanted: Vec<String> = (from..=to).map(|r| keys::revision(pad_id, r)).collect();
    let mut found = reader
        .values(&wanted)
        .await
        .map_err(EnvelopeError::internal)?;
    if found.len() < wanted.len() {
        let head = pads
            .state
            .store
            .head_position()
            .await
            .map_err(EnvelopeError::internal)?;
        pads.state
            .wait_for(PROJECTION, head)
            .await
            .map_err(palimpsest_web::ApiError::from)?;
        found = reader
            .values(&wanted)
            .await
            .map_err(EnvelopeError::internal)?;
    }
    wanted
        .iter()
        .map(|k| {
            let text = found.get(k).ok_or_else(|| {
                EnvelopeError::new_status(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the pad's revisions are not readable yet; retry",
                )
            })?;
            let r: RevisionRecord = serde_json::from_str(text).map_err(EnvelopeError::internal)?;
            Ok(Recorded {
                changeset: r.changeset,
                author: r.meta.author,
            })
        })
        .collect()
}
