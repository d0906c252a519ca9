//! The endpoints beyond Etherpad's HTTP API, for editing clients:
//!
//! - `POST /ext/submitChangeset` with `padID`, `baseRev`, `changeset`, `apool` (the client's
//!   attribute pool, `{numToAttrib, nextNum}`) and `authorId`: what Etherpad's editor sends as
//!   `USER_CHANGES`. The changeset is checked, moved into the pad's pool and transformed over
//!   every revision after `baseRev`, so concurrent writers both land. Answers `{newRev}`.
//! - `POST|GET /ext/authorForToken` with `token`: the author a browser token stands for,
//!   created on first use (Etherpad's `getAuthorId`). Answers `{authorID}`.
//!
//! Both need the API key and answer in Etherpad's envelope; unlike the Etherpad API, refused
//! input is answered with a 4xx status (400, or 404 for a missing pad).

use super::author_calls::new_author;
use super::envelope::{EnvelopeError, respond};
use super::params::{Params, check_valid_rev};
use super::{authorized_fields, now_ms};
use crate::author;
use crate::changes::AttributePool;
use crate::command::Pads;
use crate::ids::is_valid_pad_id;
use crate::pad::{self, Submission};
use crate::read::StoreReader;
use crate::store::keys;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use palimpsest_web::command::CommandRequest;
use serde_json::{Value, json};

/// Parameters of the extension endpoints.
const SUBMIT_PARAMS: &[&str] = &["padID", "baseRev", "changeset", "apool", "authorId"];
const TOKEN_PARAMS: &[&str] = &["token"];

/// A refusal with a 4xx status instead of Etherpad's 200.
fn refused(f: EnvelopeError) -> EnvelopeError {
    if f.status != StatusCode::OK {
        return f;
    }
    let status = if f.missing {
        StatusCode::NOT_FOUND
    } else {
        StatusCode::BAD_REQUEST
    };
    EnvelopeError { status, ..f }
}

/// The client's pool: a JSON object or its text; none means an empty pool.
fn wire_pool(params: &Params) -> Result<AttributePool, EnvelopeError> {
    let value = match params.get("apool") {
        None | Some(Value::Null) => return Ok(AttributePool::new()),
        Some(Value::String(s)) => serde_json::from_str::<Value>(s)
            .map_err(|e| EnvelopeError::bad_request(format!("apool is not JSON: {e}")))?,
        Some(v) => v.clone(),
    };
    serde_json::from_value(value)
        .map_err(|e| EnvelopeError::bad_request(format!("apool is not an attribute pool: {e}")))
}

/// The submission, as the decider takes it.
fn submission_of(
    base_rev: i64,
    changeset: &str,
    pool: &AttributePool,
    author: &str,
    now: i64,
) -> Submission {
    Submission {
        base_rev,
        changeset: changeset.to_owned(),
        pool: pool.clone(),
        author: author.to_owned(),
        now,
    }
}

/// The submission through the runner ([`pad::command::submit_changeset`], decided again if
/// another writer got there first). Answers the revision it became.
async fn submit_attempts(
    pads: &Pads,
    command: &CommandRequest,
    reader: &StoreReader,
    pad_id: &str,
    author: &str,
    submission: Submission,
) -> Result<super::envelope::Data, EnvelopeError> {
    let submission = &submission;
    pads.run(command, |load| async move {
        let (outcome, rev) =
            pad::command::submit_changeset(&load, (pads, reader), pad_id, author, submission)
                .await?;
        Ok((
            outcome,
            super::envelope::Data::of(&json!({ "newRev": rev }))?,
        ))
    })
    .await
}

async fn submit(pads: &Pads, request: Request) -> Result<super::envelope::Data, EnvelopeError> {
    let command = command_request(&request);
    let fields = authorized_fields(pads, request).await?;
    let params = Params::new(fields, SUBMIT_PARAMS);
    params.refuse_nul()?;
    let pad_id = params
        .string("padID")
        .ok_or_else(|| EnvelopeError::bad_request("padID is not a string"))?
        .to_owned();
    if !is_valid_pad_id(&pad_id) {
        return Err(EnvelopeError::bad_request(
            "padID did not match requirements",
        ));
    }
    let base_rev = check_valid_rev(params.get("baseRev").unwrap_or(&Value::Null))
        .map_err(|f| EnvelopeError::bad_request(f.message.replace("rev ", "baseRev ")))?;
    let changeset = params
        .string("changeset")
        .ok_or_else(|| EnvelopeError::bad_request("changeset is not a string"))?
        .to_owned();
    let pool = wire_pool(&params)?;
    let author = params.author_id("authorId");
    let now = now_ms();
    let reader = StoreReader::new(pads.state.read.clone());
    submit_attempts(
        pads,
        &command,
        &reader,
        &pad_id,
        &author,
        submission_of(base_rev, &changeset, &pool, &author, now),
    )
    .await
    .map_err(refused)
}

/// The request's idempotency facts, taken before its body is read.
pub(crate) fn command_request(request: &Request) -> CommandRequest {
    request
        .extensions()
        .get::<CommandRequest>()
        .cloned()
        .unwrap_or_default()
}

/// `POST /ext/submitChangeset`.
#[tracing::instrument(skip_all)]
pub async fn submit_changeset(State(pads): State<Pads>, request: Request) -> Response {
    respond(submit(&pads, request).await)
}

async fn token_author(
    pads: &Pads,
    request: Request,
) -> Result<super::envelope::Data, EnvelopeError> {
    let command = command_request(&request);
    let fields = authorized_fields(pads, request).await?;
    let params = Params::new(fields, TOKEN_PARAMS);
    params.refuse_nul()?;
    let token = params
        .string("token")
        .filter(|t| !t.is_empty())
        .ok_or_else(|| EnvelopeError::bad_request("token is not a string"))?
        .to_owned();
    if !keys::fits(&keys::token_to_author(&token)) {
        return Err(EnvelopeError::bad_request("Your Key can only be 100 chars"));
    }
    let new = &new_author();
    let now = now_ms();
    let token = &token;
    pads.run(&command, |load| async move {
        let (outcome, id) = author::command::author_for_token(&load, token, new, now).await?;
        Ok((
            outcome,
            super::envelope::Data::of(&json!({ "authorID": id }))?,
        ))
    })
    .await
}

/// `POST|GET /ext/authorForToken`.
#[tracing::instrument(skip_all)]
pub async fn author_for_token(State(pads): State<Pads>, request: Request) -> Response {
    respond(token_author(&pads, request).await)
}
