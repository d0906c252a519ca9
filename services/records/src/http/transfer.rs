//! exportOrg and importOrg (administrator): their arguments and answers; the export and the
//! import themselves are [`crate::transfer`]'s.

use crate::caller::Caller;
use crate::coded_error::CodedError;
use crate::command::call;
use crate::context::Records;
use crate::http::body::args;
use crate::transfer::{export, import};
use palimpsest_web::command::CommandRequest;
use serde::Deserialize;
use serde_json::{Map, Value};

/// `exportOrg {org, cl?, clear?, treat?}`.
#[derive(Deserialize)]
struct Export {
    org: String,
    cl: Option<String>,
    /// Answer the audit dump: rows in the spec's row form with `data` in clear.
    clear: Option<bool>,
    /// Apply the classes' treatments.
    treat: Option<bool>,
}

/// `exportOrg`: every live document of the org (of class `cl` only when given), decrypted,
/// treated when asked, ordered by class then pk: `{"docs": [data…]}`, or with `clear`
/// `{"rows": [row…]}` (the audit dump). `treat` with a `cl` that has no treatment is a
/// BADREQUEST; without `cl` the classes without one are exported as they are.
pub async fn export_org(
    records: &Records,
    caller: &Caller,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("exportOrg")?;
    let a: Export = args(body)?;
    let org = caller.org(Some(&a.org))?;
    let (clear, treat) = (a.clear.unwrap_or(false), a.treat.unwrap_or(false));
    export::export(records, &org, a.cl.as_deref(), clear, treat).await
}

/// `importOrg {org, docs | rows, treat?}`.
#[derive(Deserialize)]
struct Import {
    org: String,
    /// Documents as `exportOrg` answers them.
    docs: Option<Vec<Map<String, Value>>>,
    /// Rows of an audit dump (`exportOrg` with `clear`): their `data` is imported.
    rows: Option<Vec<Map<String, Value>>>,
    /// Apply the classes' treatments.
    treat: Option<bool>,
}

/// `importOrg`: inserts each exported document — or each clear row's `data` — into `org` (its
/// own or another: re-keyed), treated first when asked; answers how many. Every document is
/// checked and treated before anything is written. One call under the request's
/// Idempotency-Key, an operation (step) per chunk. A document already there stops the import
/// with `EXISTS` (the operations before it are kept; the same call retried replays them and
/// goes on, e.g. after removing that document).
pub async fn import_org(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("importOrg")?;
    let a: Import = args(body)?;
    let org = caller.org(Some(&a.org))?;
    let treat = a.treat.unwrap_or(false);
    let prepared = import::prepare_all(records, a.docs, a.rows, treat).await?;
    call(records, caller, request, |steps| async move {
        import::import(records, caller, &steps, &org, &prepared).await
    })
    .await
}
