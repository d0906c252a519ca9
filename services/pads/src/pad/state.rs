//! A pad as its stream folds: the head text and pool, the revision and chat heads, saved
//! revisions, public status and read-only id.

use crate::changes;
use easysync::AttributePool;
use palimpsest_events::pads::{AText, Attribute, PadEvent, PadSnapshot, SavedRevision};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// The state of one pad stream.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Pad {
    /// The pad id.
    pub id: String,
    /// Whether the pad exists now (created and not deleted).
    pub exists: bool,
    /// The head text.
    pub atext: AText,
    /// The attribute pool.
    pub pool: AttributePool,
    /// The head revision number (-1 before the first revision).
    pub head: i64,
    /// The last chat message number (-1: none).
    pub chat_head: i64,
    /// The public status flag.
    pub public_status: bool,
    /// The saved revisions, in the order they were saved.
    pub saved_revisions: Vec<SavedRevision>,
    /// The read-only id, once one was asked for.
    pub read_only_id: Option<String>,
}

/// The attributed text of a new pad, `makeAText('\n')`.
pub fn empty_atext() -> AText {
    AText {
        text: "\n".into(),
        attribs: "|1+1".into(),
    }
}

/// A pool holding `attributes` under their index.
pub fn pool_of(attributes: &[Attribute]) -> AttributePool {
    let mut pool = AttributePool::new();
    for (k, v) in attributes {
        pool.put_attrib(k, v);
    }
    pool
}

/// The attributes of `pool`, attribute number = index.
pub fn attributes_of(pool: &AttributePool) -> Vec<Attribute> {
    pool.iter()
        .map(|(_, k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

impl Pad {
    /// A pad that does not exist (yet, or any more).
    pub fn absent(id: &str) -> Self {
        Pad {
            id: id.to_owned(),
            exists: false,
            atext: empty_atext(),
            pool: AttributePool::new(),
            head: -1,
            chat_head: -1,
            public_status: false,
            saved_revisions: Vec::new(),
            read_only_id: None,
        }
    }

    /// The authors who contributed (Etherpad's `getAllAuthors`: `author` attributes of the pool
    /// with a non-empty value, in pool order).
    pub fn authors(&self) -> Vec<String> {
        self.pool
            .iter()
            .filter(|(_, k, v)| *k == "author" && !v.is_empty())
            .map(|(_, _, v)| v.to_owned())
            .collect()
    }

    /// The pad record a copy carries.
    pub fn snapshot(&self) -> PadSnapshot {
        PadSnapshot {
            atext: self.atext.clone(),
            pool: attributes_of(&self.pool),
            head: self.head,
            chat_head: self.chat_head,
            public_status: self.public_status,
            saved_revisions: self.saved_revisions.clone(),
        }
    }

    /// Folds one event into the state.
    pub fn apply(&mut self, event: &PadEvent) {
        match event {
            PadEvent::PadCreated { .. } => {
                *self = Pad {
                    exists: true,
                    ..Pad::absent(&self.id)
                }
            }
            PadEvent::RevisionAppended {
                rev,
                changeset,
                author,
                new_attributes,
                ..
            } => {
                for (k, v) in new_attributes {
                    self.pool.put_attrib(k, v);
                }
                match changes::apply_to_atext(changeset, &self.atext, &self.pool) {
                    Ok(atext) => self.atext = atext,
                    Err(e) => {
                        tracing::error!(pad = %self.id, rev, error = %e, "recorded changeset does not apply")
                    }
                }
                if !author.is_empty() {
                    self.pool.put_attrib("author", author);
                }
                self.head = *rev;
            }
            PadEvent::AttributePoolReplaced { pool } => self.pool = pool_of(pool),
            PadEvent::ChatMessageAppended { index, .. } => self.chat_head = *index,
            PadEvent::RevisionSaved { saved } => self.saved_revisions.push(saved.clone()),
            PadEvent::PublicStatusSet { public_status } => self.public_status = *public_status,
            PadEvent::ReadOnlyIdAssigned { read_only_id } => {
                self.read_only_id = Some(read_only_id.clone())
            }
            PadEvent::PadCopied { snapshot, .. } => {
                *self = Pad {
                    id: self.id.clone(),
                    exists: true,
                    atext: snapshot.atext.clone(),
                    pool: pool_of(&snapshot.pool),
                    head: snapshot.head,
                    chat_head: snapshot.chat_head,
                    public_status: snapshot.public_status,
                    saved_revisions: snapshot.saved_revisions.clone(),
                    read_only_id: None,
                }
            }
            PadEvent::PadDeleted { .. } => *self = Pad::absent(&self.id),
        }
    }
}

impl StreamState for Pad {
    fn initial(stream: &StreamName) -> Self {
        Pad::absent(&stream.key)
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.apply(&PadEvent::decode(event)?);
        Ok(())
    }
}
