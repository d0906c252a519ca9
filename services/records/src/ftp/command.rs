//! Running FTP changes through the platform's runner: load the organisation's FTP stream,
//! decide, append; `purgeAllFTP` is one such command per organisation, each a step of its call.

use crate::caller::Caller;
use crate::coded_error::CodedError;
use crate::command::{command, encode, failure, opened, rejected, sealed_for};
use crate::context::Records;
use crate::ftp::{self, FtpState};
use crate::streams;
use palimpsest_events::records::FtpEvent;
use palimpsest_web::command::{CommandRequest, Decision, Steps};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Runs `decide` on the FTP stream of `org` and appends its events; answers `{"changed": n}`.
pub async fn change(
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

/// Unlists every file whose day of purge is at or before `dp`, a command (step) per
/// organisation; answers `{"purged": n}`.
pub async fn purge_due(
    records: &Records,
    caller: &Caller,
    steps: &Steps,
    dp: i64,
) -> Result<Value, CodedError> {
    let mut by_org: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (org, path, _) in ftp::due::listed(records, dp).await? {
        by_org.entry(org).or_default().push(path);
    }
    let mut purged = 0;
    for (org, paths) in by_org {
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
        purged += result["changed"]
            .as_u64()
            .ok_or_else(|| CodedError::internal(format!("purgeFTP answered no count: {result}")))?;
    }
    Ok(json!({"purged": purged}))
}
