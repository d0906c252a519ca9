//! What an import appends, decided from the source alone (pure: no clock, no I/O).
//!
//! - Each section becomes its stream's history: `SectionCreated`, then its commits
//!   (`SectionCommitted`/`SectionRestored`), submissions (`SectionSubmitted`) and reviews
//!   (`SubmissionApproved`/`Rejected`/`Conflicted`) in the order of their times, and its lock
//!   (`SectionLocked`) last if one is recorded. Authors, times, snapshots and stored hashes are
//!   kept as they are; a missing `snapshot_hash` is computed as the spec defines it.
//! - Each published entity becomes `EntityCreated` holding its row as stored; each geometry
//!   `GeometryCreated` with its row, then `GeometryLinksReplaced` with its links. Every one names
//!   the last approved submission whose snapshot names the row as its [`PublicationSource`].
//! - Appends are bounded (bytes and streams), each stream at an exact expected version, each
//!   under an idempotency key derived from its content, so a second run appends nothing.
//!
//! A row that cannot be carried (a time that is not a time, stored JSON that does not parse, a
//! link to a missing entity, a published row no approval names, an event over the log's
//! limits) is listed in [`ImportPlan::uncarried`]; the import then refuses as a whole.

use super::source::{Source, SourceEntity, SourceGeometry, SourceSection};
use crate::hashing::snapshot_hash;
use crate::read::rows::{CommitRow, SubmissionRow};
use crate::streams;
use palimpsest_events::atlas::{
    Bbox, CommitRecorded, EntityEvent, EntityRow, GeometryEvent, GeometryRow, PublicationSource,
    SectionEvent, Timestamp,
};
use palimpsest_events::canonical::to_canonical_string;
use palimpsest_events::{DomainEvent, ExpectedVersion, Metadata, NewEvent, StreamName};
use palimpsest_log::Limits;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Most streams in one append of published rows.
const MAX_STREAMS_PER_APPEND: usize = 256;

/// A source row the import cannot carry, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uncarried {
    /// The table.
    pub table: &'static str,
    /// The row's id.
    pub id: String,
    /// Why.
    pub reason: String,
}

impl std::fmt::Display for Uncarried {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.table, self.id, self.reason)
    }
}

/// One stream's part of an append.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedStream {
    /// The stream.
    pub stream: StreamName,
    /// Its version before the append.
    pub expected: ExpectedVersion,
    /// The events.
    pub events: Vec<NewEvent>,
}

/// One append of the import.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedAppend {
    /// What it carries, for the report (`section <id>`, `entities`, `geometries`).
    pub label: String,
    /// Its streams, in append order.
    pub streams: Vec<PlannedStream>,
    /// `atlas:import:<sha256 of its streams and events>`: the same content, the same key.
    pub key: String,
    /// The sha256 the key names, stored as the request fingerprint.
    pub digest: Vec<u8>,
}

/// What was counted while planning, for the report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Sections.
    pub sections: usize,
    /// Commits (manual and restore).
    pub commits: usize,
    /// Submissions.
    pub submissions: usize,
    /// Reviews (approved, rejected, conflicted).
    pub reviews: usize,
    /// Published entities (deleted ones included).
    pub entities: usize,
    /// Published geometries (deleted ones included).
    pub geometries: usize,
    /// Entity-geometry links.
    pub links: usize,
    /// Geometries whose legacy type §7 repaired.
    pub repaired_types: usize,
}

/// The whole import: its appends in order, or the rows it cannot carry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportPlan {
    /// Appends, in the order they must go: sections, then entities, then geometries.
    pub appends: Vec<PlannedAppend>,
    /// Rows that cannot be carried (the import refuses when there is any).
    pub uncarried: Vec<Uncarried>,
    /// What the plan carries.
    pub counts: Counts,
    /// The actor every appended event names (`import:<file name>`).
    pub actor: String,
}

/// Plans the import of `source` within `limits`.
pub fn plan(source: &Source, limits: &Limits) -> ImportPlan {
    let actor = if source.importer.is_empty() {
        super::ACTOR.to_owned()
    } else {
        source.importer.clone()
    };
    let mut plan = ImportPlan {
        actor: actor.clone(),
        counts: Counts {
            links: source.links.len(),
            repaired_types: source.repaired_types.len(),
            ..Counts::default()
        },
        ..ImportPlan::default()
    };
    let mut budget = Budget::new(limits, &actor);
    for section in &source.sections {
        section_appends(source, section, &mut plan, &mut budget);
    }
    orphans(source, &mut plan);
    let owners = owners(source);
    let entities = entity_streams(source, &owners, &mut plan);
    batch("entities", entities, &mut plan, &mut budget);
    let geometries = geometry_streams(source, &owners, &mut plan);
    batch("geometries", geometries, &mut plan, &mut budget);
    plan
}

/// Sizes of events as the log counts them, and what does not fit.
struct Budget {
    limits: Limits,
    metadata: Metadata,
}

impl Budget {
    fn new(limits: &Limits, actor: &str) -> Self {
        Budget {
            limits: *limits,
            metadata: Metadata {
                actor: Some(actor.to_owned()),
                idempotency_key: Some(format!("atlas:import:{}", "0".repeat(64))),
                correlation_id: Some(uuid::Uuid::nil()),
                ..Metadata::default()
            },
        }
    }

    /// The event's size, or why the log would refuse it.
    fn size(&self, stream: &StreamName, event: &NewEvent) -> Result<usize, String> {
        palimpsest_log::limits::check_event(stream, event, &self.metadata, &self.limits)
            .map_err(|r| r.to_string())
    }

    /// Bytes one append may hold here: half the log's limit, leaving room for the envelope.
    fn per_append(&self) -> usize {
        self.limits.max_append_bytes / 2
    }
}

/// A time as the original stored it: ISO 8601 (`toISOString`), or SQLite's
/// `YYYY-MM-DD HH:MM:SS` taken as UTC.
fn time(text: &str) -> Option<Timestamp> {
    Timestamp::parse(text).or_else(|| {
        chrono::NaiveDateTime::parse_from_str(text.trim(), "%Y-%m-%d %H:%M:%S%.f")
            .ok()
            .map(|t| Timestamp::new(t.and_utc()))
    })
}

fn need_time(
    table: &'static str,
    id: &str,
    column: &str,
    text: &str,
) -> Result<Timestamp, Uncarried> {
    time(text).ok_or_else(|| Uncarried {
        table,
        id: id.to_owned(),
        reason: format!("{column} {text:?} is not a time"),
    })
}

fn json(table: &'static str, id: &str, column: &str, text: &str) -> Result<Value, Uncarried> {
    serde_json::from_str(text).map_err(|e| Uncarried {
        table,
        id: id.to_owned(),
        reason: format!("{column} is not JSON: {e}"),
    })
}

/// One section's events with the time and rank that order them.
struct Timed {
    at: Timestamp,
    rank: u8,
    seq: usize,
    event: SectionEvent,
    table: &'static str,
    id: String,
}

fn section_appends(
    source: &Source,
    section: &SourceSection,
    plan: &mut ImportPlan,
    budget: &mut Budget,
) {
    let events = match section_events(source, section, &mut plan.counts) {
        Ok(events) => events,
        Err(problems) => {
            plan.uncarried.extend(problems);
            return;
        }
    };
    plan.counts.sections += 1;
    let stream = match streams::section(&section.id) {
        Ok(s) => s,
        Err(e) => {
            plan.uncarried.push(Uncarried {
                table: "sections",
                id: section.id.clone(),
                reason: format!("its id cannot name a stream: {e}"),
            });
            return;
        }
    };
    let mut chunk: Vec<NewEvent> = Vec::new();
    let (mut bytes, mut version) = (0usize, 0i64);
    for (table, id, event) in events {
        let encoded = match event.encode() {
            Ok(e) => e,
            Err(e) => {
                plan.uncarried.push(Uncarried {
                    table,
                    id,
                    reason: e.to_string(),
                });
                continue;
            }
        };
        let size = match budget.size(&stream, &encoded) {
            Ok(size) => size,
            Err(reason) => {
                plan.uncarried.push(Uncarried { table, id, reason });
                continue;
            }
        };
        if !chunk.is_empty() && bytes + size > budget.per_append() {
            let events = std::mem::take(&mut chunk);
            let count = events.len() as i64;
            push_section(plan, &stream, &section.id, version, events);
            version += count;
            bytes = 0;
        }
        bytes += size;
        chunk.push(encoded);
    }
    if !chunk.is_empty() {
        push_section(plan, &stream, &section.id, version, chunk);
    }
}

fn push_section(
    plan: &mut ImportPlan,
    stream: &StreamName,
    id: &str,
    version: i64,
    events: Vec<NewEvent>,
) {
    let expected = if version == 0 {
        ExpectedVersion::NoStream
    } else {
        ExpectedVersion::Exact(version)
    };
    plan.appends.push(keyed(
        format!("section {id}"),
        vec![PlannedStream {
            stream: stream.clone(),
            expected,
            events,
        }],
    ));
}

/// An append named by the sha256 of what it writes; its event ids are derived from it.
fn keyed(label: String, streams: Vec<PlannedStream>) -> PlannedAppend {
    let mut hash = Sha256::new();
    for s in &streams {
        hash.update(s.stream.to_string().as_bytes());
        hash.update(format!("{:?}", s.expected).as_bytes());
        for e in &s.events {
            hash.update(e.event_type.as_bytes());
            hash.update(to_canonical_string(&e.payload).as_bytes());
        }
    }
    let digest = hash.finalize().to_vec();
    let mut streams = streams;
    let mut n = 0u64;
    for s in &mut streams {
        for e in &mut s.events {
            e.event_id = event_id(&digest, n);
            n += 1;
        }
    }
    PlannedAppend {
        label,
        streams,
        key: format!("atlas:import:{}", hex::encode(&digest)),
        digest,
    }
}

/// The `n`th event's id in the append named by `digest`: derived, not drawn, so a plan is the
/// same every time and the log's unique event ids refuse a repeat too.
fn event_id(digest: &[u8], n: u64) -> uuid::Uuid {
    let mut hash = Sha256::new();
    hash.update(digest);
    hash.update(n.to_be_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&hash.finalize()[..16]);
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

/// A section's events in history order, or every row of it that cannot be carried.
fn section_events(
    source: &Source,
    section: &SourceSection,
    counts: &mut Counts,
) -> Result<Vec<(&'static str, String, SectionEvent)>, Vec<Uncarried>> {
    let mut problems = Vec::new();
    let mut timed = Vec::new();
    let created_at = need_time("sections", &section.id, "created_at", &section.created_at)
        .map_err(|u| vec![u])?;
    let mine = |id: &str| id == section.id;
    for commit in source.commits.iter().filter(|c| mine(&c.section_id)) {
        match commit_event(commit) {
            Ok(t) => {
                counts.commits += 1;
                timed.push(t);
            }
            Err(u) => problems.push(u),
        }
    }
    for submission in source.submissions.iter().filter(|s| mine(&s.section_id)) {
        match submission_events(submission) {
            Ok(ts) => {
                counts.submissions += 1;
                counts.reviews += ts.len() - 1;
                timed.extend(ts);
            }
            Err(u) => problems.push(u),
        }
    }
    if let Some(lock) = lock_event(section) {
        match lock {
            Ok(t) => timed.push(t),
            Err(u) => problems.push(u),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    for (seq, t) in timed.iter_mut().enumerate() {
        t.seq = seq;
    }
    timed.sort_by(|a, b| {
        (a.rank == 9, a.at, a.rank, a.seq).cmp(&(b.rank == 9, b.at, b.rank, b.seq))
    });
    let mut events = vec![(
        "sections",
        section.id.clone(),
        SectionEvent::SectionCreated {
            section_id: section.id.clone(),
            title: section.title.clone(),
            description: section.description.clone(),
            user_id: section.user_id.clone(),
            created_by: section.created_by.clone(),
            created_at,
        },
    )];
    events.extend(timed.into_iter().map(|t| (t.table, t.id, t.event)));
    Ok(events)
}

fn commit_event(c: &CommitRow) -> Result<Timed, Uncarried> {
    let table = "section_commits";
    let at = need_time(table, &c.id, "created_at", &c.created_at)?;
    let snapshot = json(table, &c.id, "snapshot_json", &c.snapshot_json)?;
    let record = CommitRecorded {
        commit_id: c.id.clone(),
        commit_no: c.commit_no,
        parent_commit_id: c.parent_commit_id.clone(),
        restored_from_commit_id: c.restored_from_commit_id.clone(),
        created_by: c.created_by.clone(),
        created_at: at,
        title: c.title.clone(),
        note: c.note.clone(),
        snapshot_hash: c
            .snapshot_hash
            .clone()
            .unwrap_or_else(|| snapshot_hash(&snapshot)),
        snapshot,
    };
    let event = match c.kind.as_str() {
        "restore" => SectionEvent::SectionRestored(record),
        "manual" => SectionEvent::SectionCommitted(record),
        other => {
            return Err(Uncarried {
                table,
                id: c.id.clone(),
                reason: format!("kind {other:?} is neither manual nor restore"),
            });
        }
    };
    Ok(Timed {
        at,
        rank: 0,
        seq: 0,
        event,
        table,
        id: c.id.clone(),
    })
}

/// The submission and, once reviewed, its review.
fn submission_events(s: &SubmissionRow) -> Result<Vec<Timed>, Uncarried> {
    let table = "section_submissions";
    let at = need_time(table, &s.id, "submitted_at", &s.submitted_at)?;
    let snapshot = json(table, &s.id, "snapshot_json", &s.snapshot_json)?;
    let submitted = SectionEvent::SectionSubmitted {
        submission_id: s.id.clone(),
        commit_id: s.commit_id.clone(),
        submitted_by: s.submitted_by.clone(),
        submitted_at: at,
        snapshot_hash: s
            .snapshot_hash
            .clone()
            .unwrap_or_else(|| snapshot_hash(&snapshot)),
        snapshot,
    };
    let mut out = vec![Timed {
        at,
        rank: 1,
        seq: 0,
        event: submitted,
        table,
        id: s.id.clone(),
    }];
    if s.status == "pending" {
        return Ok(out);
    }
    let reviewed_at = match &s.reviewed_at {
        Some(text) => need_time(table, &s.id, "reviewed_at", text)?,
        None => {
            return Err(Uncarried {
                table,
                id: s.id.clone(),
                reason: format!("status {} without reviewed_at", s.status),
            });
        }
    };
    let (submission_id, reviewed_by, review_note) =
        (s.id.clone(), s.reviewed_by.clone(), s.review_note.clone());
    let review = match s.status.as_str() {
        "approved" => SectionEvent::SubmissionApproved {
            submission_id,
            reviewed_by,
            reviewed_at,
            review_note,
        },
        "rejected" => SectionEvent::SubmissionRejected {
            submission_id,
            reviewed_by,
            reviewed_at,
            review_note,
        },
        "conflicted" => SectionEvent::SubmissionConflicted {
            submission_id,
            reviewed_by,
            reviewed_at,
            message: review_note.unwrap_or_default(),
        },
        other => {
            return Err(Uncarried {
                table,
                id: s.id.clone(),
                reason: format!("status {other:?} is not one the spec lists"),
            });
        }
    };
    out.push(Timed {
        at: reviewed_at.max(at),
        rank: 2,
        seq: 0,
        event: review,
        table,
        id: s.id.clone(),
    });
    Ok(out)
}

/// The lock `section_states` records, taken last (rank 9 sorts after everything).
fn lock_event(section: &SourceSection) -> Option<Result<Timed, Uncarried>> {
    let by = section.locked_by.clone()?;
    let table = "section_states";
    let times = (|| {
        let at = need_time(
            table,
            &section.id,
            "locked_at",
            section.locked_at.as_deref().unwrap_or(""),
        )?;
        let until = need_time(
            table,
            &section.id,
            "lock_expires_at",
            section.lock_expires_at.as_deref().unwrap_or(""),
        )?;
        Ok((at, until))
    })();
    Some(times.map(|(at, until)| Timed {
        at,
        rank: 9,
        seq: 0,
        event: SectionEvent::SectionLocked {
            locked_by: by,
            locked_at: at,
            lock_expires_at: until,
        },
        table,
        id: section.id.clone(),
    }))
}

/// Commits and submissions of sections the database does not hold cannot be carried.
fn orphans(source: &Source, plan: &mut ImportPlan) {
    let known: HashSet<&str> = source.sections.iter().map(|s| s.id.as_str()).collect();
    for c in source
        .commits
        .iter()
        .filter(|c| !known.contains(c.section_id.as_str()))
    {
        plan.uncarried.push(Uncarried {
            table: "section_commits",
            id: c.id.clone(),
            reason: format!("its section {} does not exist", c.section_id),
        });
    }
    for s in source
        .submissions
        .iter()
        .filter(|s| !known.contains(s.section_id.as_str()))
    {
        plan.uncarried.push(Uncarried {
            table: "section_submissions",
            id: s.id.clone(),
            reason: format!("its section {} does not exist", s.section_id),
        });
    }
}

/// Which approval published each row: the last approved submission (by review time) whose
/// snapshot names it.
struct Owners {
    entities: HashMap<String, PublicationSource>,
    geometries: HashMap<String, PublicationSource>,
}

fn owners(source: &Source) -> Owners {
    let mut approved: Vec<(Timestamp, &SubmissionRow, Value)> = source
        .submissions
        .iter()
        .filter(|s| s.status == "approved")
        .filter_map(|s| {
            let at = time(s.reviewed_at.as_deref()?)?;
            let snapshot = serde_json::from_str(&s.snapshot_json).ok()?;
            Some((at, s, snapshot))
        })
        .collect();
    approved.sort_by_key(|a| a.0);
    let mut out = Owners {
        entities: HashMap::new(),
        geometries: HashMap::new(),
    };
    for (_, s, snapshot) in approved {
        let publisher = PublicationSource {
            submission_id: s.id.clone(),
            section_id: s.section_id.clone(),
            reviewed_by: s.reviewed_by.clone(),
        };
        for id in named(&snapshot, "entities", "id") {
            out.entities.insert(id, publisher.clone());
        }
        for id in named(&snapshot, "geometries", "id")
            .into_iter()
            .chain(named(&snapshot, "link_scopes", "geometry_id"))
        {
            out.geometries.insert(id, publisher.clone());
        }
    }
    out
}

fn named(snapshot: &Value, list: &str, field: &str) -> Vec<String> {
    snapshot[list]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item[field].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// A published row's created/updated times: each stands in for the other when missing.
fn row_times(
    table: &'static str,
    id: &str,
    created: &Option<String>,
    updated: &Option<String>,
) -> Result<(Timestamp, Timestamp), Uncarried> {
    let parse = |column: &str, text: &Option<String>| {
        text.as_deref()
            .map(|t| need_time(table, id, column, t))
            .transpose()
    };
    match (parse("created_at", created)?, parse("updated_at", updated)?) {
        (Some(c), Some(u)) => Ok((c, u)),
        (Some(t), None) | (None, Some(t)) => Ok((t, t)),
        (None, None) => Err(Uncarried {
            table,
            id: id.to_owned(),
            reason: "neither created_at nor updated_at is set".into(),
        }),
    }
}

fn owner(
    table: &'static str,
    id: &str,
    owners: &HashMap<String, PublicationSource>,
) -> Result<PublicationSource, Uncarried> {
    owners.get(id).cloned().ok_or_else(|| Uncarried {
        table,
        id: id.to_owned(),
        reason: "no approved submission's snapshot names it, so no approval can be said to \
                 have published it"
            .into(),
    })
}

fn entity_row(e: &SourceEntity) -> Result<EntityRow, Uncarried> {
    let (created_at, updated_at) = row_times("entities", &e.id, &e.created_at, &e.updated_at)?;
    Ok(EntityRow {
        id: e.id.clone(),
        name: e.name.clone(),
        slug: e.slug.clone(),
        description: e.description.clone(),
        type_id: e.type_id.clone(),
        status: e.status,
        is_deleted: e.is_deleted,
        created_at,
        updated_at,
    })
}

fn entity_streams(
    source: &Source,
    owners: &Owners,
    plan: &mut ImportPlan,
) -> Vec<(StreamName, Vec<NewEvent>, String)> {
    let mut out = Vec::new();
    for e in &source.entities {
        let built = (|| {
            let entity = entity_row(e)?;
            let source = owner("entities", &e.id, &owners.entities)?;
            let stream = streams::entity(&e.id).map_err(|err| Uncarried {
                table: "entities",
                id: e.id.clone(),
                reason: format!("its id cannot name a stream: {err}"),
            })?;
            let event = EntityEvent::EntityCreated { entity, source }
                .encode()
                .map_err(|err| Uncarried {
                    table: "entities",
                    id: e.id.clone(),
                    reason: err.to_string(),
                })?;
            Ok((stream, vec![event], e.id.clone()))
        })();
        match built {
            Ok(s) => {
                plan.counts.entities += 1;
                out.push(s);
            }
            Err(u) => plan.uncarried.push(u),
        }
    }
    out
}

fn geometry_row(g: &SourceGeometry) -> Result<GeometryRow, Uncarried> {
    let table = "geometries";
    let (created_at, updated_at) = row_times(table, &g.id, &g.created_at, &g.updated_at)?;
    let draw_geometry = json(table, &g.id, "draw_geometry", &g.draw_geometry)?;
    let binding = match &g.binding {
        None => None,
        Some(text) => match json(table, &g.id, "binding", text)? {
            Value::Null => None,
            Value::Array(items) => Some(
                items
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => Ok(s.clone()),
                        other => Ok(other.to_string()),
                    })
                    .collect::<Result<Vec<_>, Uncarried>>()?,
            ),
            _ => {
                return Err(Uncarried {
                    table,
                    id: g.id.clone(),
                    reason: "binding is not a JSON array".into(),
                });
            }
        },
    };
    let bbox = match g.bbox {
        [Some(min_lng), Some(min_lat), Some(max_lng), Some(max_lat)] => Some(Bbox {
            min_lng,
            min_lat,
            max_lng,
            max_lat,
        }),
        _ => None,
    };
    Ok(GeometryRow {
        id: g.id.clone(),
        kind: g.kind.clone(),
        is_deleted: g.is_deleted,
        draw_geometry,
        binding,
        time_start: g.time_start,
        time_end: g.time_end,
        bbox,
        created_at,
        updated_at,
    })
}

fn geometry_streams(
    source: &Source,
    owners: &Owners,
    plan: &mut ImportPlan,
) -> Vec<(StreamName, Vec<NewEvent>, String)> {
    let entity_ids: HashSet<&str> = source
        .entities
        .iter()
        .filter(|e| {
            !plan
                .uncarried
                .iter()
                .any(|u| u.table == "entities" && u.id == e.id)
        })
        .map(|e| e.id.as_str())
        .collect();
    let geometry_ids: HashSet<&str> = source.geometries.iter().map(|g| g.id.as_str()).collect();
    let mut links: BTreeMap<&str, Vec<&super::source::SourceLink>> = BTreeMap::new();
    for link in &source.links {
        if !geometry_ids.contains(link.geometry_id.as_str())
            || !entity_ids.contains(link.entity_id.as_str())
        {
            plan.uncarried.push(Uncarried {
                table: "entity_geometries",
                id: format!("{}/{}", link.entity_id, link.geometry_id),
                reason: "it links a row that is not carried or does not exist".into(),
            });
            continue;
        }
        links
            .entry(link.geometry_id.as_str())
            .or_default()
            .push(link);
    }
    let mut out = Vec::new();
    for g in &source.geometries {
        let mine = links.get(g.id.as_str()).cloned().unwrap_or_default();
        match geometry_events(g, &mine, owners) {
            Ok(s) => {
                plan.counts.geometries += 1;
                out.push(s);
            }
            Err(u) => plan.uncarried.push(u),
        }
    }
    out
}

/// `GeometryCreated`, then `GeometryLinksReplaced` when it has links. The links' time is the
/// latest of their `created_at` and the geometry's `updated_at`: one event holds all of a
/// geometry's links, and its version must not start before the row's.
fn geometry_events(
    g: &SourceGeometry,
    links: &[&super::source::SourceLink],
    owners: &Owners,
) -> Result<(StreamName, Vec<NewEvent>, String), Uncarried> {
    let table = "geometries";
    let fail = |reason: String| Uncarried {
        table,
        id: g.id.clone(),
        reason,
    };
    let geometry = geometry_row(g)?;
    let source = owner(table, &g.id, &owners.geometries)?;
    let stream =
        streams::geometry(&g.id).map_err(|e| fail(format!("its id cannot name a stream: {e}")))?;
    let mut at = geometry.updated_at;
    for link in links {
        if let Some(text) = &link.created_at {
            at = at.max(need_time(
                "entity_geometries",
                &link.entity_id,
                "created_at",
                text,
            )?);
        }
    }
    let mut events = vec![GeometryEvent::GeometryCreated {
        geometry,
        source: source.clone(),
    }];
    if !links.is_empty() {
        events.push(GeometryEvent::GeometryLinksReplaced {
            geometry_id: g.id.clone(),
            entity_ids: links.iter().map(|l| l.entity_id.clone()).collect(),
            at,
            unlinked_entity: None,
            source,
        });
    }
    let encoded = events
        .iter()
        .map(|e| e.encode().map_err(|err| fail(err.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((stream, encoded, g.id.clone()))
}

/// Published rows in appends bounded by bytes and streams; every stream is new.
fn batch(
    label: &str,
    rows: Vec<(StreamName, Vec<NewEvent>, String)>,
    plan: &mut ImportPlan,
    budget: &mut Budget,
) {
    let table = if label == "entities" {
        "entities"
    } else {
        "geometries"
    };
    let mut chunk: Vec<PlannedStream> = Vec::new();
    let mut bytes = 0usize;
    for (stream, events, id) in rows {
        let mut size = 0usize;
        let mut refused = None;
        for e in &events {
            match budget.size(&stream, e) {
                Ok(n) => size += n,
                Err(reason) => refused = Some(reason),
            }
        }
        if let Some(reason) = refused {
            plan.uncarried.push(Uncarried { table, id, reason });
            continue;
        }
        if !chunk.is_empty()
            && (bytes + size > budget.per_append() || chunk.len() >= MAX_STREAMS_PER_APPEND)
        {
            plan.appends
                .push(keyed(label.to_owned(), std::mem::take(&mut chunk)));
            bytes = 0;
        }
        bytes += size;
        chunk.push(PlannedStream {
            stream,
            expected: ExpectedVersion::NoStream,
            events,
        });
    }
    if !chunk.is_empty() {
        plan.appends.push(keyed(label.to_owned(), chunk));
    }
}
