//! `rotateKey` (administrator): after the site key changed (the old one kept in
//! `PALIMPSEST_RECORDS_OLD_KEYS`), every document and task still sealed with an old key is
//! sealed again with the current one — by new events, a command per chunk of documents, each
//! decided on the document's stream. Once it answers, the old key is needed only to answer
//! replays of requests made before the rotation.

use crate::document::{DocumentState, decide_reseal, ivs_needed};
use crate::http::auth::Caller;
use crate::http::context::Records;
use crate::http::failure::Failure;
use crate::http::purges::{CHUNK, all_classes, candidates};
use crate::http::run::{command, encode, failure, rejected};
use crate::seal::{Nonces, decode};
use crate::streams::{self, DocKey};
use crate::task::TaskState;
use axum::http::StatusCode;
use palimpsest_events::records::TaskEvent;
use palimpsest_web::command::{CommandRequest, Decision, Reply};
use serde_json::{Value, json};

/// `rotateKey {}`: answers how many documents and tasks were resealed.
pub async fn rotate_key(records: &Records, caller: &Caller) -> Result<Value, Failure> {
    caller.admin("rotateKey")?;
    let mut resealed = 0;
    for class in all_classes(records).await? {
        let targets = candidates(records, &class.clazz, "ck = ''", &[]).await?;
        for chunk in targets.chunks(CHUNK) {
            let keys: Vec<DocKey> = chunk
                .iter()
                .map(|(org, pk)| DocKey {
                    org: org.clone(),
                    clazz: class.clazz.clone(),
                    pk: pk.clone(),
                })
                .collect();
            resealed += reseal_documents(records, caller, &keys).await?;
        }
    }
    let client = records.app.read.get().await?;
    let tasks = client
        .query("SELECT org, k0 FROM records.\"Task\" ORDER BY org, k0", &[])
        .await?;
    for task in tasks {
        resealed += reseal_task(records, caller, task.get(0), task.get(1)).await?;
    }
    Ok(json!({"resealed": resealed}))
}

async fn reseal_documents(
    records: &Records,
    caller: &Caller,
    keys: &[DocKey],
) -> Result<u64, Failure> {
    let none = CommandRequest::none();
    let reply = records
        .app
        .commands
        .run(command(&none, caller), |attempt| async move {
            let mut decision = Decision::new(Reply::json(StatusCode::OK, &json!({"resealed": 0})));
            let mut count = 0;
            for key in keys {
                let state: DocumentState = attempt.load(&key.stream()).await?;
                let mut nonces = Nonces::fresh(ivs_needed(&state));
                let event = decide_reseal(key, &state, &records.key, &mut nonces)
                    .map_err(|e| rejected(Failure::internal(e)))?;
                if let Some(event) = event {
                    count += 1;
                    decision = decision.write(key.stream(), vec![encode(&event)?]);
                }
            }
            Ok(decision.with_reply(Reply::json(StatusCode::OK, &json!({"resealed": count}))))
        })
        .await
        .map_err(failure)?;
    let body: Value = reply.json_body().map_err(Failure::internal)?;
    Ok(body["resealed"].as_u64().unwrap_or(0))
}

async fn reseal_task(
    records: &Records,
    caller: &Caller,
    org: String,
    k0: String,
) -> Result<u64, Failure> {
    let none = CommandRequest::none();
    let stream = &streams::task(&org, &k0);
    let (org, k0) = (&org, &k0);
    let reply = records
        .app
        .commands
        .run(command(&none, caller), |attempt| async move {
            let state: TaskState = attempt.load(stream).await?;
            let unchanged = Decision::new(Reply::json(StatusCode::OK, &json!({"resealed": 0})));
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
                .map_err(|e| rejected(Failure::internal(e)))?;
            let data = records
                .key
                .open(&sealed)
                .and_then(|data| records.key.seal(&data, iv))
                .map_err(|e| rejected(Failure::internal(e)))?;
            let event = TaskEvent::TaskScheduled {
                org: org.clone(),
                k0: k0.clone(),
                i0,
                data,
            };
            Ok(
                Decision::new(Reply::json(StatusCode::OK, &json!({"resealed": 1})))
                    .write(stream.clone(), vec![encode(&event)?]),
            )
        })
        .await
        .map_err(failure)?;
    let body: Value = reply.json_body().map_err(Failure::internal)?;
    Ok(body["resealed"].as_u64().unwrap_or(0))
}
