//! Appending an import plan to the log.
//!
//! Before appending anything: every row must be carried (else [`ImportError::Uncarried`]), and
//! every stream an append not yet made writes must stand where the plan expects it (else
//! [`ImportError::Occupied`]: the log already holds other atlas data under those ids). Appends
//! already made — found by their idempotency key — are skipped, so an interrupted import can be
//! run again and a finished one appends nothing.

use super::plan::{ImportPlan, PlannedAppend, Uncarried};
use palimpsest_events::{ExpectedVersion, Metadata};
use palimpsest_log::{AppendError, AppendRequest, EventStore, LogError, StoredReply};
use serde_json::json;

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Appends made now.
    pub appended: usize,
    /// Appends an earlier run had already made.
    pub already: usize,
    /// Events appended now.
    pub events: usize,
    /// What the plan carries.
    pub counts: super::plan::Counts,
    /// The log's position after the last append made now (0 when none was).
    pub last_position: i64,
}

/// Why an import appended nothing (or, for `Append`, stopped part way: run it again).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The database could not be read.
    #[error(transparent)]
    Source(#[from] super::source::SourceError),
    /// Rows that cannot be carried; nothing was appended.
    #[error("{} row(s) cannot be carried, nothing was imported:\n{}", .0.len(), list(.0))]
    Uncarried(Vec<Uncarried>),
    /// Streams the import would write already hold other events; nothing was appended.
    #[error("{} stream(s) already hold other events, nothing was imported: {}", .0.len(), .0.join(", "))]
    Occupied(Vec<String>),
    /// The log refused an append (or a concurrent writer moved a stream); the appends before
    /// it stand, and running the import again carries on from there.
    #[error("appending {label}: {source}")]
    Append {
        /// Which append.
        label: String,
        /// Why.
        source: AppendError,
    },
    /// The log could not be read.
    #[error(transparent)]
    Log(#[from] LogError),
}

fn list(rows: &[Uncarried]) -> String {
    rows.iter()
        .map(|u| format!("  {u}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Appends `plan` to `store`: nothing if any row cannot be carried or any stream is occupied.
pub async fn import(store: &EventStore, plan: ImportPlan) -> Result<ImportReport, ImportError> {
    if !plan.uncarried.is_empty() {
        return Err(ImportError::Uncarried(plan.uncarried));
    }
    let mut todo = Vec::new();
    let mut report = ImportReport {
        counts: plan.counts.clone(),
        ..ImportReport::default()
    };
    for append in plan.appends {
        if store.command_reply(&append.key).await?.is_some() {
            report.already += 1;
        } else {
            todo.push(append);
        }
    }
    let occupied = occupied(store, &todo).await?;
    if !occupied.is_empty() {
        return Err(ImportError::Occupied(occupied));
    }
    let correlation = uuid::Uuid::now_v7();
    for append in todo {
        let label = append.label.clone();
        let done = store
            .append(request(append, correlation, &plan.actor))
            .await
            .map_err(|source| ImportError::Append { label, source })?;
        if done.replayed {
            report.already += 1;
        } else {
            report.appended += 1;
            report.events += done.events.len();
            report.last_position = done.last_position;
        }
    }
    Ok(report)
}

/// Streams of appends still to make that do not stand at the version the plan expects. A
/// section split over several appends expects its own earlier parts.
async fn occupied(store: &EventStore, todo: &[PlannedAppend]) -> Result<Vec<String>, LogError> {
    let mut out = Vec::new();
    for append in todo {
        for s in &append.streams {
            let expected = match s.expected {
                ExpectedVersion::Exact(v) => v,
                ExpectedVersion::NoStream | ExpectedVersion::Any => 0,
            };
            let actual = store.stream_version(&s.stream).await?;
            if actual != expected && !out.contains(&s.stream.to_string()) {
                out.push(s.stream.to_string());
            }
        }
    }
    Ok(out)
}

/// The log append of a planned one, with its key and a stored answer (so an HTTP request that
/// happened to reuse the key gets a 422, never another command's reply).
fn request(append: PlannedAppend, correlation: uuid::Uuid, actor: &str) -> AppendRequest {
    let body = json!({"imported": append.label}).to_string().into_bytes();
    let mut request = AppendRequest::new();
    for s in append.streams {
        request = request.stream(s.stream, s.expected, s.events);
    }
    request.metadata = Metadata {
        actor: Some(actor.to_owned()),
        correlation_id: Some(correlation),
        idempotency_key: Some(append.key),
        ..Metadata::default()
    };
    request.reply = Some(StoredReply {
        request_hash: append.digest,
        status: 200,
        content_type: "application/json".into(),
        body,
    });
    request
}
