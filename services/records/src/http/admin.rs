//! The administrator's functions on the class, token and key streams: declareClass,
//! issueOrgToken and rotateKey — their arguments and answers. The commands are
//! [`crate::class::command`], [`crate::token::command`] and [`crate::rotation`].

use crate::caller::Caller;
use crate::class::command::declare;
use crate::coded_error::CodedError;
use crate::command::call;
use crate::context::Records;
use crate::http::body::args;
use crate::{rotation, token};
use palimpsest_events::records::ClassDeclaration;
use palimpsest_web::command::CommandRequest;
use serde::Deserialize;
use serde_json::Value;

/// `declareClass {clazz, sync, pk, collections, indexes}` (admin).
pub async fn declare_class(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("declareClass")?;
    let declaration: ClassDeclaration = args(body)?;
    declare(records, request, caller, declaration).await
}

/// `issueOrgToken {org}`.
#[derive(Deserialize)]
struct IssueToken {
    org: String,
}

/// `issueOrgToken` (admin): a new bearer token scoped to `org`.
pub async fn issue_org_token(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("issueOrgToken")?;
    let a: IssueToken = args(body)?;
    let org = caller.org(Some(&a.org))?;
    token::issue(records, caller, request, &org).await
}

/// `rotateKey {}`: answers how many documents and tasks were resealed; one call under the
/// request's Idempotency-Key.
pub async fn rotate_key(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
) -> Result<Value, CodedError> {
    caller.admin("rotateKey")?;
    call(records, caller, request, |steps| async move {
        rotation::reseal_all(records, caller, &steps).await
    })
    .await
}
