//! purgeAllDocs, purgeOrg, purgeOrgs, purgeDlvDocs (admin): their arguments and answers, each
//! one call under its Idempotency-Key; the purges themselves are [`crate::purge`]'s.

use crate::caller::Caller;
use crate::coded_error::CodedError;
use crate::command::call;
use crate::context::Records;
use crate::http::body::args;
use crate::purge::{self, DlvDocs};
use palimpsest_web::command::CommandRequest;
use serde::Deserialize;
use serde_json::Value;

/// `purgeAllDocs {org, cl}`.
#[derive(Deserialize)]
struct PurgeAllDocs {
    org: String,
    cl: String,
}

/// `purgeAllDocs` (admin): every document of a class in an org, physically.
pub async fn purge_all_docs(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("purgeAllDocs")?;
    let a: PurgeAllDocs = args(body)?;
    let org = caller.org(Some(&a.org))?;
    call(records, caller, request, |steps| async move {
        purge::all_docs(records, caller, &steps, &org, &a.cl).await
    })
    .await
}

/// `purgeOrg {org, z?}`.
#[derive(Deserialize)]
struct PurgeOrg {
    org: String,
    z: Option<i64>,
}

/// `purgeOrg` (admin): with `z`, the org's zombies and `del` rows older than `z`; without, every
/// document of the org in every class (its `Org` document included).
pub async fn purge_org(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("purgeOrg")?;
    let a: PurgeOrg = args(body)?;
    let org = caller.org(Some(&a.org))?;
    call(records, caller, request, |steps| async move {
        purge::org(records, caller, &steps, &org, a.z).await
    })
    .await
}

/// `purgeOrgs {z}`.
#[derive(Deserialize)]
struct PurgeOrgs {
    z: i64,
}

/// `purgeOrgs` (admin): zombies and `del` rows older than `z` in every organisation.
pub async fn purge_orgs(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("purgeOrgs")?;
    let a: PurgeOrgs = args(body)?;
    call(records, caller, request, |steps| async move {
        purge::every_org_before(records, caller, &steps, a.z).await
    })
    .await
}

/// `purgeDlvDocs` (admin): the org's documents whose index compares with `val` (typically a
/// validity date past), restricted to the pks `lsp` when given.
pub async fn purge_dlv_docs(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("purgeDlvDocs")?;
    let a: DlvDocs = args(body)?;
    let org = caller.org(Some(&a.org))?;
    call(records, caller, request, |steps| async move {
        purge::dlv_docs(records, caller, &steps, org, &a).await
    })
    .await
}
