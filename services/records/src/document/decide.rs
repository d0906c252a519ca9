//! The document decider: one operation, several writes of several classes, decided at one time
//! `v` against the documents' and unique locks' stream states; one append.
//!
//! Rules (each has a test in `tests.rs`): a document whose version is at or after the
//! operation's time refuses it with `REGVER` (the runner retries with a new time); a create
//! needs the document absent (a zombie counts as present); an update needs the version the
//! client read; a SYNC delete leaves a zombie, a NOSYNC delete purges; an update that changes a
//! collection's identifying value writes a `del` row; unique values are locks owned by
//! `[org, clazz, pk]`.

use crate::class::{HDR, ORG};
use crate::document::state::{DocumentState, UniqueState};
use crate::error::RecordsError;
use crate::row::{Shape, shape};
use crate::seal::{Nonces, SiteKey};
use crate::streams::{DocKey, UniqueKey};
use palimpsest_events::records::{
    ClassDeclaration, CollectionKey, DocumentEvent, IndexKind, IndexValue, LeftRow, Row,
    UniqueEvent,
};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// What one write of an operation does.
#[derive(Debug, Clone)]
pub enum Action {
    /// `insertDoc`: create a document from its data.
    Insert(Map<String, Value>),
    /// `updateDoc`: replace a document's data; `read` is the version the client read.
    Update(Map<String, Value>, i64),
    /// `deleteDoc`: zombify (SYNC) or purge (NOSYNC) document `pk`.
    Delete(String),
}

/// One write: a class, an organisation and what to do.
#[derive(Debug, Clone)]
pub struct Write {
    /// The document's class.
    pub class: Arc<ClassDeclaration>,
    /// The organisation (`""` for `Hdr`).
    pub org: String,
    /// The change.
    pub action: Action,
}

/// A write with its target and visible row computed (`toRow`, before sealing).
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The document written.
    pub key: DocKey,
    /// Its class.
    pub class: Arc<ClassDeclaration>,
    /// The data given (without `pk`), and the row it shapes (none for a delete).
    pub change: Option<(Map<String, Value>, Shape)>,
    /// For an update, the version read.
    pub read: Option<i64>,
}

/// Computes each write's target and row; refuses an operation writing one document twice.
pub fn prepare(writes: Vec<Write>) -> Result<Vec<Prepared>, RecordsError> {
    let mut out: Vec<Prepared> = Vec::with_capacity(writes.len());
    for (i, w) in writes.into_iter().enumerate() {
        let (pk, change, read) = match w.action {
            Action::Delete(pk) => (pk, None, None),
            Action::Insert(mut data) => {
                data.remove("pk");
                let s = shape(&w.class, &w.org, &data)?;
                (s.pk.clone(), Some((data, s)), None)
            }
            Action::Update(mut data, read) => {
                data.remove("pk");
                let s = shape(&w.class, &w.org, &data)?;
                (s.pk.clone(), Some((data, s)), Some(read))
            }
        };
        let key = DocKey {
            org: w.org,
            clazz: w.class.clazz.clone(),
            pk,
        };
        if out.iter().any(|p| p.key == key) {
            return Err(RecordsError::bad(format!(
                "writes[{i}]: an operation writes a document once ({} {})",
                key.clazz, key.pk
            )));
        }
        out.push(Prepared {
            key,
            class: w.class,
            change,
            read,
        });
    }
    Ok(out)
}

/// The streams an operation reads: its documents, then (knowing their rows) the unique locks of
/// the values they release or claim.
pub fn unique_locks(
    prepared: &[Prepared],
    docs: &HashMap<DocKey, DocumentState>,
) -> Vec<UniqueKey> {
    let mut keys = Vec::new();
    for p in prepared {
        if let Some((_, shape)) = &p.change {
            keys.extend(uniques_of(&p.class, &p.key.org, &shape.indexes));
        }
        if let Some(row) = docs.get(&p.key).and_then(|d| d.row.as_ref()) {
            keys.extend(uniques_of(&p.class, &p.key.org, &row.indexes));
        }
    }
    keys.sort();
    keys.dedup();
    keys
}

fn uniques_of(
    class: &ClassDeclaration,
    org: &str,
    indexes: &BTreeMap<String, IndexValue>,
) -> Vec<UniqueKey> {
    class
        .indexes
        .iter()
        .filter(|ix| ix.kind == IndexKind::Uniq)
        .filter_map(|ix| match indexes.get(&ix.name) {
            Some(IndexValue::Text(value)) => {
                Some(UniqueKey::new(ix.scope, org, &class.clazz, &ix.name, value))
            }
            _ => None,
        })
        .collect()
}

/// The state an operation decides against.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// Each document written, by key (absent: never written).
    pub docs: HashMap<DocKey, DocumentState>,
    /// Each unique lock touched.
    pub uniques: HashMap<UniqueKey, UniqueState>,
}

/// What an operation decided: the events per stream and the data of each write to answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// One event per document written.
    pub documents: Vec<(DocKey, DocumentEvent)>,
    /// Lock events per unique value.
    pub uniques: Vec<(UniqueKey, Vec<UniqueEvent>)>,
    /// Each write's answer: the stored data with `pk` (a zombie's minimal data; `null` purged).
    pub replies: Vec<Value>,
}

/// Decides the operation at `time` (UTC epoch ms).
pub fn decide(
    time: i64,
    prepared: &[Prepared],
    view: &View,
    key: &SiteKey,
    nonces: &mut Nonces,
) -> Result<Outcome, RecordsError> {
    let mut locks = Locks {
        states: view.uniques.clone(),
        events: BTreeMap::new(),
    };
    let mut outcome = Outcome::default();
    for p in prepared {
        let state = view.docs.get(&p.key).cloned().unwrap_or_default();
        if state.last_v >= time {
            return Err(RecordsError::Regver {
                key: p.key.stream().key,
                stored: state.last_v,
                time,
            });
        }
        if let Some(row) = &state.row {
            for lock in uniques_of(&p.class, &p.key.org, &row.indexes) {
                locks.release(lock, p.key.owner());
            }
        }
    }
    for p in prepared {
        let state = view.docs.get(&p.key).cloned().unwrap_or_default();
        let (event, reply) = match (&p.change, p.read) {
            (Some((data, shape)), None) => insert(time, p, &state, data, shape, key, nonces)?,
            (Some((data, shape)), Some(read)) => {
                update(time, p, &state, data, shape, read, key, nonces)?
            }
            (None, _) => delete(time, p, &state, key, nonces)?,
        };
        if let Some(row) = row_of(&event) {
            for lock in uniques_of(&p.class, &p.key.org, &row.indexes) {
                locks.claim(lock, p.key.owner(), &p.class.clazz)?;
            }
        }
        outcome.documents.push((p.key.clone(), event));
        outcome.replies.push(reply);
    }
    outcome.uniques = locks
        .events
        .into_iter()
        .filter(|(_, events)| !events.is_empty())
        .collect();
    Ok(outcome)
}

fn row_of(event: &DocumentEvent) -> Option<&Row> {
    match event {
        DocumentEvent::DocumentCreated { row } | DocumentEvent::DocumentUpdated { row, .. } => {
            Some(row)
        }
        _ => None,
    }
}

fn insert(
    time: i64,
    p: &Prepared,
    state: &DocumentState,
    data: &Map<String, Value>,
    shape: &Shape,
    key: &SiteKey,
    nonces: &mut Nonces,
) -> Result<(DocumentEvent, Value), RecordsError> {
    if state.row.is_some() {
        let what = if state.zombie { "a zombie of it" } else { "it" };
        return Err(RecordsError::Exists(format!(
            "{} {} exists ({what} is stored at version {})",
            p.key.clazz, p.key.pk, state.last_v
        )));
    }
    let (row, reply) = stored(time, p, data, shape, key, nonces)?;
    Ok((DocumentEvent::DocumentCreated { row }, reply))
}

#[allow(clippy::too_many_arguments)]
fn update(
    time: i64,
    p: &Prepared,
    state: &DocumentState,
    data: &Map<String, Value>,
    shape: &Shape,
    read: i64,
    key: &SiteKey,
    nonces: &mut Nonces,
) -> Result<(DocumentEvent, Value), RecordsError> {
    let Some(old) = &state.row else {
        return Err(RecordsError::NotFound(format!(
            "{} {} does not exist",
            p.key.clazz, p.key.pk
        )));
    };
    if old.v != read {
        return Err(RecordsError::Conflict(format!(
            "{} {} is at version {}, not the version {read} read",
            p.key.clazz, p.key.pk, old.v
        )));
    }
    let (row, reply) = stored(time, p, data, shape, key, nonces)?;
    let gone = left_collections(&old.collections, &row.collections);
    let left = if gone.is_empty() || !p.class.sync {
        None
    } else {
        let mut minimal = pk_properties(&p.class, data);
        minimal.insert("v".into(), json!(time));
        minimal.insert("del".into(), json!(1));
        Some(LeftRow {
            collections: gone,
            data: key
                .seal(&Value::Object(minimal), nonce(nonces)?)
                .map_err(internal)?,
        })
    };
    Ok((DocumentEvent::DocumentUpdated { row, left }, reply))
}

fn delete(
    time: i64,
    p: &Prepared,
    state: &DocumentState,
    key: &SiteKey,
    nonces: &mut Nonces,
) -> Result<(DocumentEvent, Value), RecordsError> {
    let Some(old) = state.row.as_ref().filter(|_| !state.zombie) else {
        return Err(RecordsError::NotFound(format!(
            "{} {} does not exist",
            p.key.clazz, p.key.pk
        )));
    };
    if !p.class.sync {
        let event = DocumentEvent::DocumentPurged {
            org: p.key.org.clone(),
            clazz: p.key.clazz.clone(),
            pk: p.key.pk.clone(),
        };
        return Ok((event, Value::Null));
    }
    let old_data = match key.open(&old.data).map_err(internal)? {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let mut minimal = pk_properties(&p.class, &old_data);
    minimal.insert("clazz".into(), json!(p.key.clazz));
    if p.key.clazz != HDR {
        minimal.insert("org".into(), json!(p.key.org));
    }
    minimal.insert("v".into(), json!(time));
    minimal.insert("x".into(), json!(1));
    let data = Value::Object(minimal);
    let row = Row {
        org: p.key.org.clone(),
        clazz: p.key.clazz.clone(),
        pk: p.key.pk.clone(),
        v: time,
        collections: old.collections.clone(),
        indexes: BTreeMap::new(),
        data: key.seal(&data, nonce(nonces)?).map_err(internal)?,
    };
    Ok((
        DocumentEvent::DocumentZombified { row },
        with_pk(data, &p.key.pk),
    ))
}

/// The row and reply of a created or updated document: its data with `clazz org v x` set.
fn stored(
    time: i64,
    p: &Prepared,
    data: &Map<String, Value>,
    shape: &Shape,
    key: &SiteKey,
    nonces: &mut Nonces,
) -> Result<(Row, Value), RecordsError> {
    let mut data = data.clone();
    data.insert("clazz".into(), json!(p.key.clazz));
    if p.key.clazz != HDR {
        data.insert("org".into(), json!(p.key.org));
    }
    data.insert("v".into(), json!(time));
    data.insert("x".into(), json!(0));
    let data = Value::Object(data);
    let row = Row {
        org: p.key.org.clone(),
        clazz: p.key.clazz.clone(),
        pk: p.key.pk.clone(),
        v: time,
        collections: shape.collections.clone(),
        indexes: shape.indexes.clone(),
        data: key.seal(&data, nonce(nonces)?).map_err(internal)?,
    };
    Ok((row, with_pk(data, &p.key.pk)))
}

/// The collections a document left: the old single value when it changed, the removed values
/// of a list.
pub fn left_collections(
    old: &BTreeMap<String, CollectionKey>,
    new: &BTreeMap<String, CollectionKey>,
) -> BTreeMap<String, CollectionKey> {
    let mut gone = BTreeMap::new();
    for (name, before) in old {
        let after = new.get(name);
        match (before, after) {
            (CollectionKey::Many(values), Some(CollectionKey::Many(now))) => {
                let removed: Vec<String> = values
                    .iter()
                    .filter(|v| !now.contains(v))
                    .cloned()
                    .collect();
                if !removed.is_empty() {
                    gone.insert(name.clone(), CollectionKey::Many(removed));
                }
            }
            (before, after) if after != Some(before) => {
                gone.insert(name.clone(), before.clone());
            }
            _ => {}
        }
    }
    gone
}

fn pk_properties(class: &ClassDeclaration, data: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for p in &class.pk {
        if let Some(value) = data.get(p) {
            out.insert(p.clone(), value.clone());
        }
    }
    if class.clazz == ORG
        && let Some(org) = data.get("org")
    {
        out.insert("org".into(), org.clone());
    }
    out
}

/// The document's data as answered: with its `pk`.
pub fn with_pk(mut data: Value, pk: &str) -> Value {
    if let Value::Object(m) = &mut data {
        m.insert("pk".into(), json!(pk));
    }
    data
}

fn nonce(nonces: &mut Nonces) -> Result<[u8; 12], RecordsError> {
    nonces.take().map_err(internal)
}

fn internal(e: crate::seal::SealError) -> RecordsError {
    RecordsError::Sealing(e)
}

/// Locks touched by the operation: their state as it goes, and the events to append.
struct Locks {
    states: HashMap<UniqueKey, UniqueState>,
    events: BTreeMap<UniqueKey, Vec<UniqueEvent>>,
}

impl Locks {
    fn release(&mut self, lock: UniqueKey, owner: [String; 3]) {
        let state = self.states.entry(lock.clone()).or_default();
        if state.owner.as_ref() == Some(&owner) {
            state.owner = None;
            self.events
                .entry(lock)
                .or_default()
                .push(UniqueEvent::UniqueReleased { owner });
        }
    }

    fn claim(
        &mut self,
        lock: UniqueKey,
        owner: [String; 3],
        clazz: &str,
    ) -> Result<(), RecordsError> {
        let state = self.states.entry(lock.clone()).or_default();
        match &state.owner {
            Some(holder) if *holder == owner => Ok(()),
            Some(holder) => Err(RecordsError::Unique {
                clazz: clazz.to_owned(),
                index: lock.index.clone(),
                // The holder's key is named only to its own organisation.
                owner: (holder[0] == owner[0]).then(|| holder.clone()),
            }),
            None => {
                state.owner = Some(owner.clone());
                let events = self.events.entry(lock).or_default();
                // Released then claimed again by the same document: nothing changed.
                if matches!(events.last(), Some(UniqueEvent::UniqueReleased { owner: o }) if *o == owner)
                {
                    events.pop();
                } else {
                    events.push(UniqueEvent::UniqueClaimed { owner });
                }
                Ok(())
            }
        }
    }
}
