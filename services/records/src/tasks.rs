//! The task runner (background work): carries out the deferred tasks (`Task`) as they come due.
//!
//! The runner is one per deployment: it holds a Postgres advisory lock on a connection of its
//! own while it runs (another process's runner waits for it). It takes `nextTask` in ascending
//! due order, reschedules the task before running it (so a crash retries it later, never loses
//! it), then counts `nb` down — a finished task is deleted — or records the exception `exc`.
//! Handlers are registered in code by `process` name ([`Settings::tasks`]).

use crate::caller::TASKS;
use crate::coded_error::CodedError;
use crate::context::Records;
use crate::settings::Settings;
use crate::task::{self, command::write};
use palimpsest_web::command::CommandRequest;
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// What a handler gets: the task's organisation and data.
#[derive(Debug, Clone)]
pub struct TaskRun {
    /// The organisation.
    pub org: String,
    /// The task's data (process, pk, nb, …).
    pub data: Value,
}

/// A task handler: `Err(code)` records `exc` and leaves the task rescheduled.
pub type TaskHandler =
    Arc<dyn Fn(TaskRun) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>> + Send + Sync>;

/// How long a task taken by the runner waits before it is taken again if its run never ends.
const RETRY_MS: i64 = 60_000;
/// The advisory lock key of the one runner.
const RUNNER_LOCK: i64 = 0x7265_636f_7264_7331;

/// The first task due at or before `time`, as `{org, k0, i0, data}`.
pub async fn next_due(records: &Records, time: &str) -> Result<Option<Value>, CodedError> {
    let client = records.app.read.get().await?;
    let row = client
        .query_opt("SELECT org, k0, i0, data FROM records.\"Task\" WHERE i0 <= $1 ORDER BY i0, org, k0 LIMIT 1", &[&time])
        .await?;
    let Some(row) = row else { return Ok(None) };
    let sealed: Vec<u8> = row.get(3);
    let data = records
        .key
        .open_bytes(&sealed)
        .map_err(CodedError::internal)?;
    Ok(Some(
        json!({"org": row.get::<_, String>(0), "k0": row.get::<_, String>(1), "i0": row.get::<_, String>(2), "data": data}),
    ))
}

/// Starts the runner when handlers are registered, as a background task of the app: it stops
/// when the app stops (a task handler cut short is run again, as after a crash: its task was
/// rescheduled before it ran).
pub fn spawn_runner(records: &Records, settings: &Settings) {
    if settings.tasks.is_empty() {
        return;
    }
    let records = records.clone();
    let background = records.app.background.clone();
    background.spawn("records task runner", move |stop| async move {
        let pause = Duration::from_millis(records.settings.task_poll_ms);
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                outcome = lead(&records) => if let Err(e) = outcome {
                    tracing::warn!(
                        code = e.code,
                        message = e.message,
                        "records: task runner stopped; restarting"
                    );
                },
            }
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(pause) => {}
            }
        }
        tracing::info!("records: task runner stopped with the app");
    });
}

/// Waits to be the one runner, then runs due tasks until an error.
async fn lead(records: &Records) -> Result<(), CodedError> {
    let connection = deadpool_postgres::Object::take(records.app.read.get().await?);
    loop {
        let row = connection
            .query_one("SELECT pg_try_advisory_lock($1)", &[&RUNNER_LOCK])
            .await?;
        if row.get::<_, bool>(0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(records.settings.task_poll_ms)).await;
    }
    loop {
        if !run_one(records).await? {
            tokio::time::sleep(Duration::from_millis(records.settings.task_poll_ms)).await;
        }
        // The connection (and with it the lock) lives as long as this loop.
        if connection.is_closed() {
            return Err(CodedError::unavailable("the runner's connection closed"));
        }
    }
}

/// Runs the next due task, if any; answers whether one ran.
pub async fn run_one(records: &Records) -> Result<bool, CodedError> {
    let now = records.now();
    let Some(due) = next_due(records, &task::time_text(now)).await? else {
        return Ok(false);
    };
    let (org, k0) = (
        due["org"].as_str().unwrap_or_default().to_owned(),
        due["k0"].as_str().unwrap_or_default().to_owned(),
    );
    let mut data = due["data"].clone();
    let none = CommandRequest::none();
    let later = task::time_text(now + RETRY_MS);
    data["startTime"] = json!(later);
    write(
        records,
        &TASKS,
        &none,
        &org,
        &k0,
        Some((later.clone(), data.clone())),
    )
    .await?;
    let process = data["process"].as_str().unwrap_or_default().to_owned();
    let outcome = match records.settings.tasks.get(&process) {
        Some(handler) => {
            handler(TaskRun {
                org: org.clone(),
                data: data.clone(),
            })
            .await
        }
        None => Err(format!("no handler for process {process}")),
    };
    match outcome {
        Ok(()) => {
            let left = data["nb"].as_i64().unwrap_or(1) - 1;
            if left <= 0 {
                write(records, &TASKS, &none, &org, &k0, None).await?;
            } else {
                let next = task::time_text(records.now());
                data["nb"] = json!(left);
                data["startTime"] = json!(next);
                if let Some(d) = data.as_object_mut() {
                    d.remove("exc");
                }
                write(records, &TASKS, &none, &org, &k0, Some((next, data))).await?;
            }
        }
        Err(exc) => {
            tracing::warn!(org, process, exc, "records: task failed; rescheduled");
            data["exc"] = json!(exc);
            write(records, &TASKS, &none, &org, &k0, Some((later, data))).await?;
        }
    }
    Ok(true)
}
