//! setFTP, purgeFTP (the org or the admin), listFTP, purgeAllFTP (admin).

use crate::ftp::{self, FtpState};
use crate::http::auth::Caller;
use crate::http::body::args;
use crate::http::context::Records;
use crate::http::failure::CodedError;
use crate::http::run::{call, command, encode, failure, opened, rejected, sealed_for};
use crate::streams;
use palimpsest_events::records::FtpEvent;
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::{CommandRequest, Decision, StreamState};
use serde::Deserialize;
use serde_json::{Value, json};

impl StreamState for FtpState {
    fn initial(_: &StreamName) -> Self {
        FtpState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = ftp::evolve(std::mem::take(self), &FtpEvent::decode(event)?);
        Ok(())
    }
}

async fn change(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    org: &str,
    decide: impl Fn(&FtpState) -> Result<Vec<FtpEvent>, crate::RecordsError>,
) -> Result<Value, CodedError> {
    let stream = &streams::ftp(org);
    let decide = &decide;
    let reply = records
        .app
        .commands
        .run(command(request, caller), |attempt| async move {
            let state: FtpState = attempt.load(stream).await?;
            let events = decide(&state).map_err(rejected)?;
            let count = events.len();
            let events = events.iter().map(encode).collect::<Result<Vec<_>, _>>()?;
            Ok(
                Decision::new(sealed_for(records, caller, json!({"changed": count}))?)
                    .write(stream.clone(), events),
            )
        })
        .await
        .map_err(failure)?;
    opened(&records.key, caller, reply)
}

/// `setFTP {org?, path, dp}`.
#[derive(Deserialize)]
struct SetFtp {
    org: Option<String>,
    path: String,
    dp: i64,
}

/// `setFTP`.
pub async fn set_ftp(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    let a: SetFtp = args(body)?;
    let org = caller.org(a.org.as_deref())?;
    change(records, caller, request, &org, |state| {
        ftp::set(state, &org, &a.path, a.dp)
    })
    .await
}

/// `purgeFTP {org?, path}`.
#[derive(Deserialize)]
struct PurgeFtp {
    org: Option<String>,
    path: String,
}

/// `purgeFTP`.
pub async fn purge_ftp(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    let a: PurgeFtp = args(body)?;
    let org = caller.org(a.org.as_deref())?;
    ftp::check_path(&a.path)?;
    change(records, caller, request, &org, |state| {
        Ok(ftp::purge(state, &org, [a.path.as_str()]))
    })
    .await
}

/// `listFTP {dp}` / `purgeAllFTP {dp}`.
#[derive(Deserialize)]
struct Day {
    dp: i64,
}

async fn due(records: &Records, dp: i64) -> Result<Vec<(String, String, i64)>, CodedError> {
    let client = records.app.read.get().await?;
    let rows = client
        .query(
            "SELECT org, path, p FROM records.\"FTP\" WHERE p <= $1 ORDER BY org, path",
            &[&dp],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}

/// `listFTP` (admin): files whose day of purge is at or before `dp`.
pub async fn list_ftp(
    records: &Records,
    caller: &Caller,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("listFTP")?;
    let a: Day = args(body)?;
    let rows: Vec<Value> = due(records, a.dp)
        .await?
        .into_iter()
        .map(|(org, path, p)| json!({"org": org, "path": path, "p": p}))
        .collect();
    Ok(json!({"rows": rows}))
}

/// `purgeAllFTP` (admin): unlists every file whose day of purge is at or before `dp`; one call
/// under the request's Idempotency-Key, a command (step) per organisation.
pub async fn purge_all_ftp(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("purgeAllFTP")?;
    let a: Day = args(body)?;
    call(records, caller, request, |steps| async move {
        let mut by_org: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for (org, path, _) in due(records, a.dp).await? {
            by_org.entry(org).or_default().push(path);
        }
        let mut purged = 0;
        for (org, paths) in by_org {
            let dp = a.dp;
            let step = steps.next(format!("{org}\0{}", paths.join("\0")).as_bytes());
            let result = change(records, caller, &step, &org, |state| {
                let due: Vec<&str> = paths
                    .iter()
                    .map(String::as_str)
                    .filter(|p| state.0.get(*p).is_some_and(|day| *day <= dp))
                    .collect();
                Ok(ftp::purge(state, &org, due))
            })
            .await?;
            purged += result["changed"].as_u64().ok_or_else(|| {
                CodedError::internal(format!("purgeFTP answered no count: {result}"))
            })?;
        }
        Ok(json!({"purged": purged}))
    })
    .await
}
