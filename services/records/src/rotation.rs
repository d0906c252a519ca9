//! Key rotation (`rotateKey`, administrator): after the site key changed (the old one kept in
//! `PALIMPSEST_RECORDS_OLD_KEYS`), every document and task still sealed with an old key is
//! sealed again with the current one — by new events, a command per chunk of documents, each
//! decided on the document's stream. Once it answers, the old key is needed only to answer
//! replays of requests made before the rotation.

use crate::bulk::change_in_chunks;
use crate::caller::Caller;
use crate::class::lookup::all_classes;
use crate::coded_error::CodedError;
use crate::command::{command, encode, failure, rejected};
use crate::context::Records;
use crate::document::{DocumentState, decide_reseal, ivs_needed};
use crate::purge::candidates;
use crate::seal::{Nonces, decode};
use crate::streams;
use crate::task::TaskState;
use palimpsest_events::records::TaskEvent;
use palimpsest_web::command::{Decision, Steps, count_of, count_reply};
use serde_json::{Value, json};

/// Reseals every document and task still sealed with an old key, a command per chunk of
/// documents and per task (steps of the call); answers `{"resealed": n}`.
pub async fn reseal_all(
    records: &Records,
    caller: &Caller,
    steps: &Steps,
) -> Result<Value, CodedError> {
    let mut resealed = 0;
    for class in all_classes(records).await? {
        let targets = candidates(records, &class.clazz, "ck = ''", &[]).await?;
        resealed += reseal_documents(records, caller, steps, &class.clazz, &targets).await?;
    }
    let client = records.app.read.get().await?;
    let tasks = client
        .query("SELECT org, k0 FROM records.\"Task\" ORDER BY org, k0", &[])
        .await?;
    for task in tasks {
        resealed += reseal_task(records, caller, steps, task.get(0), task.get(1)).await?;
    }
    Ok(json!({"resealed": resealed}))
}

async fn reseal_documents(
    records: &Records,
    caller: &Caller,
    steps: &Steps,
    clazz: &str,
    targets: &[(String, String)],
) -> Result<u64, CodedError> {
    change_in_chunks(
        records,
        caller,
        steps,
        clazz,
        targets,
        |attempt, key, decision| async move {
            let state: DocumentState = attempt.load(&key.stream()).await?;
            let mut nonces = Nonces::fresh(ivs_needed(&state));
            let event = decide_reseal(&key, &state, &records.key, &mut nonces)
                .map_err(|e| rejected(CodedError::internal(e)))?;
            Ok(match event {
                Some(event) => (decision.write(key.stream(), vec![encode(&event)?]), true),
                None => (decision, false),
            })
        },
    )
    .await
}

async fn reseal_task(
    records: &Records,
    caller: &Caller,
    steps: &Steps,
    org: String,
    k0: String,
) -> Result<u64, CodedError> {
    let request = steps.next(format!("task\0{org}\0{k0}").as_bytes());
    let stream = &streams::task(&org, &k0);
    let (org, k0) = (&org, &k0);
    let reply = records
        .app
        .commands
        .run(command(&request, caller), |attempt| async move {
            let state: TaskState = attempt.load(stream).await?;
            let unchanged = Decision::new(count_reply(0));
            let Some((i0, sealed)) = state.0 else {
                return Ok(unchanged);
            };
            let current = decode(&sealed)
                .map(|b| records.key.is_current(&b))
                .unwrap_or(false);
            if current {
                return Ok(unchanged);
            }
            let iv = Nonces::fresh(1)
                .take()
                .map_err(|e| rejected(CodedError::internal(e)))?;
            let data = records
                .key
                .open(&sealed)
                .and_then(|data| records.key.seal(&data, iv))
                .map_err(|e| rejected(CodedError::internal(e)))?;
            let event = TaskEvent::TaskScheduled {
                org: org.clone(),
                k0: k0.clone(),
                i0,
                data,
            };
            Ok(Decision::new(count_reply(1)).write(stream.clone(), vec![encode(&event)?]))
        })
        .await
        .map_err(failure)?;
    count_of(&reply).map_err(failure)
}
