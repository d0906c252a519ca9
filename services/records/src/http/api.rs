//! `POST /records/api/<function>`: one route for the spec's generic API, the body holding the
//! function's arguments by their spec names, the answer `{"result": …}`.

use crate::caller::Caller;
use crate::coded_error::CodedError;
use crate::context::Records;
use crate::http::listing::Listing;
use crate::http::writes::{self, Request};
use crate::http::{admin, ftp, purges, reads, tasks, transfer};
use axum::Json;
use axum::body::Bytes;
use axum::extract::{FromRequest, Path, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use palimpsest_web::command::CommandRequest;
use serde_json::{Value, json};
use std::sync::Arc;

/// Every function the route answers.
pub const FUNCTIONS: [&str; 31] = [
    "getDoc",
    "insertDoc",
    "updateDoc",
    "deleteDoc",
    "listDocs",
    "listDocsSk",
    "listDocsIdx",
    "getHdr",
    "insertHdr",
    "updateHdr",
    "getOrg",
    "insertOrg",
    "updateOrg",
    "listOrgs",
    "listOrgsIdx",
    "operation",
    "declareClass",
    "issueOrgToken",
    "purgeAllDocs",
    "purgeOrg",
    "purgeOrgs",
    "purgeDlvDocs",
    "setFTP",
    "purgeFTP",
    "listFTP",
    "purgeAllFTP",
    "setTask",
    "nextTask",
    "exportOrg",
    "importOrg",
    "rotateKey",
];

/// The route's handler. The caller is identified from the headers before the body is read: a
/// false token is refused without waiting for a body, so it cannot hold a request slot
/// (`docs/authorization/platform-limits.md`).
pub async fn call(
    State(records): State<Arc<Records>>,
    Path(function): Path<String>,
    request: CommandRequest,
    headers: HeaderMap,
    body: axum::extract::Request,
) -> Response {
    let caller = match identify(&records, &function, &headers).await {
        Ok(caller) => caller,
        Err(failure) => return failure.into_response(),
    };
    let body = match Bytes::from_request(body, &()).await {
        Ok(body) => body,
        Err(rejection) => {
            return CodedError {
                status: rejection.status(),
                code: "BADREQUEST",
                message: rejection.body_text(),
            }
            .into_response();
        }
    };
    match dispatch(&records, &function, &request, &caller, &body).await {
        Ok(Answer::Value(result)) => Json(json!({ "result": result })).into_response(),
        Ok(Answer::Listing(listing)) => {
            let (length, body) = listing.into_body();
            let mut response = (
                [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
                body,
            )
                .into_response();
            if let Some(length) = length {
                response
                    .headers_mut()
                    .insert(CONTENT_LENGTH, HeaderValue::from(length));
            }
            response
        }
        Err(failure) => failure.into_response(),
    }
}

/// What a function answers: a value, or a list whose rows are already written as JSON.
enum Answer {
    Value(Value),
    Listing(Listing),
}

/// The caller of a known function, from the headers alone.
async fn identify(
    records: &Records,
    function: &str,
    headers: &HeaderMap,
) -> Result<Caller, CodedError> {
    if !FUNCTIONS.contains(&function) {
        return Err(crate::RecordsError::NotFound(format!(
            "no function `{function}`; see /records/openapi.json"
        ))
        .into());
    }
    Caller::of(records, headers).await
}

async fn dispatch(
    records: &Records,
    function: &str,
    request: &CommandRequest,
    caller: &Caller,
    body: &[u8],
) -> Result<Answer, CodedError> {
    let req = Request {
        records,
        caller,
        request,
    };
    let listing = match function {
        "listDocs" => Some(reads::list_docs(records, caller, body).await),
        "listDocsSk" => Some(reads::list_docs_sk(records, caller, body).await),
        "listDocsIdx" => Some(reads::list_docs_idx(records, caller, body).await),
        "listOrgs" => Some(reads::list_orgs(records, caller, body).await),
        "listOrgsIdx" => Some(reads::list_orgs_idx(records, caller, body).await),
        _ => None,
    };
    if let Some(listing) = listing {
        return listing.map(Answer::Listing);
    }
    let value = match function {
        "getDoc" => reads::get_doc(records, caller, body).await,
        "getHdr" => reads::get_hdr(records, body).await,
        "getOrg" => reads::get_org(records, caller, body).await,
        "insertDoc" => writes::insert_doc(req, body).await,
        "updateDoc" => writes::update_doc(req, body).await,
        "deleteDoc" => writes::delete_doc(req, body).await,
        "operation" => writes::operation(req, body).await,
        "insertHdr" => writes::write_hdr(req, body, false).await,
        "updateHdr" => writes::write_hdr(req, body, true).await,
        "insertOrg" => writes::write_org(req, body, false).await,
        "updateOrg" => writes::write_org(req, body, true).await,
        "declareClass" => admin::declare_class(records, caller, request, body).await,
        "issueOrgToken" => admin::issue_org_token(records, caller, request, body).await,
        "purgeAllDocs" => purges::purge_all_docs(records, caller, request, body).await,
        "purgeOrg" => purges::purge_org(records, caller, request, body).await,
        "purgeOrgs" => purges::purge_orgs(records, caller, request, body).await,
        "purgeDlvDocs" => purges::purge_dlv_docs(records, caller, request, body).await,
        "setFTP" => ftp::set_ftp(records, caller, request, body).await,
        "purgeFTP" => ftp::purge_ftp(records, caller, request, body).await,
        "listFTP" => ftp::list_ftp(records, caller, body).await,
        "purgeAllFTP" => ftp::purge_all_ftp(records, caller, request, body).await,
        "setTask" => tasks::set_task(records, caller, request, body).await,
        "nextTask" => tasks::next_task(records, caller, body).await,
        "exportOrg" => transfer::export_org(records, caller, body).await,
        "importOrg" => transfer::import_org(records, caller, request, body).await,
        "rotateKey" => {
            // It takes no argument, but its body is still an object like every function's.
            crate::http::body::args::<serde_json::Map<String, serde_json::Value>>(body)?;
            admin::rotate_key(records, caller, request).await
        }
        _ => Err(CodedError::bad(format!(
            "function {function} is not served"
        ))),
    };
    value.map(Answer::Value)
}
