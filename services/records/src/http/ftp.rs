//! setFTP, purgeFTP (the org or the admin), listFTP, purgeAllFTP (admin): their arguments and
//! answers; the commands are [`crate::ftp::command`]'s.

use crate::caller::Caller;
use crate::coded_error::CodedError;
use crate::command::call;
use crate::context::Records;
use crate::ftp::{self, command::change};
use crate::http::body::args;
use palimpsest_web::command::CommandRequest;
use serde::Deserialize;
use serde_json::{Value, json};

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

/// `listFTP` (admin): files whose day of purge is at or before `dp`.
pub async fn list_ftp(
    records: &Records,
    caller: &Caller,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("listFTP")?;
    let a: Day = args(body)?;
    let rows: Vec<Value> = ftp::due::listed(records, a.dp)
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
        ftp::command::purge_due(records, caller, &steps, a.dp).await
    })
    .await
}
