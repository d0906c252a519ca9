//! `GET /records/feed?cl=…[&ik=…&val=…][&v=…][&org=…]`: a class's or a sub-collection's changes
//! as Server-Sent Events. Each `rows` event is a list answer (`{"rows", "v"}`, the same rows and
//! next version `listDocs`/`listDocsSk` give), so a client applies it with the session rules;
//! the feed then waits for the read model to move and asks again from the answer's `v`.
//! (Event consumers follow the same changes on NATS, subject `records.doc.…`.)

use crate::caller::Caller;
use crate::coded_error::CodedError;
use crate::context::Records;
use crate::http::reads;
use crate::projection::NAME;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::stream::{self, Stream};
use serde::Deserialize;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// The feed's query.
#[derive(Debug, Clone, Deserialize)]
pub struct FeedQuery {
    /// The organisation (an org token's own when absent).
    pub org: Option<String>,
    /// The class.
    pub cl: String,
    /// The collection number, for a sub-collection's feed.
    pub ik: Option<usize>,
    /// The collection's value in clear.
    pub val: Option<String>,
    /// Changes after this version.
    pub v: Option<i64>,
}

/// The route's handler.
pub async fn feed(
    State(records): State<Arc<Records>>,
    headers: HeaderMap,
    query: Result<Query<FeedQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    match open(&records, &headers, query).await {
        Ok(sse) => sse.into_response(),
        Err(failure) => failure.into_response(),
    }
}

async fn open(
    records: &Records,
    headers: &HeaderMap,
    query: Result<Query<FeedQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>> + use<>>, CodedError> {
    let Query(query) = query.map_err(|e| CodedError::bad(format!("invalid query: {e}")))?;
    let caller = Caller::of(records, headers).await?;
    let org = caller.org(query.org.as_deref())?;
    let body = match (&query.ik, &query.val) {
        (Some(ik), Some(val)) => json!({"org": org, "cl": query.cl, "ik": ik, "val": val}),
        (None, None) => json!({"org": org, "cl": query.cl}),
        _ => return Err(CodedError::bad("ik and val go together")),
    };
    // The first answer is computed now, so a bad class or collection is a 4xx, not a dead feed.
    let first = ask(records, &caller, &body, query.v).await?;
    let records = records.clone();
    let state = (records, caller, body, Some(first), query.v.unwrap_or(-1));
    let events = stream::unfold(state, |(records, caller, body, ready, since)| async move {
        let answer = match ready {
            Some(answer) => answer,
            None => {
                wait_for_change(&records).await;
                match ask(&records, &caller, &body, Some(since)).await {
                    Ok(answer) => answer,
                    Err(e) => {
                        tracing::warn!(
                            code = e.code,
                            message = e.message,
                            "records feed: read failed; closing"
                        );
                        return None;
                    }
                }
            }
        };
        let next = answer["v"].as_i64().unwrap_or(since).max(since);
        let event = Event::default().event("rows").data(answer.to_string());
        Some((Ok(event), (records, caller, body, None, next)))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

async fn ask(
    records: &Records,
    caller: &Caller,
    body: &Value,
    v: Option<i64>,
) -> Result<Value, CodedError> {
    let mut body = body.clone();
    if let Some(v) = v {
        body["v"] = json!(v);
    }
    let bytes = body.to_string().into_bytes();
    if body.get("ik").is_some() {
        reads::list_docs_sk(records, caller, &bytes)
            .await?
            .into_value()
            .await
    } else {
        reads::list_docs(records, caller, &bytes)
            .await?
            .into_value()
            .await
    }
}

/// Waits until the read model applies something new (or a while passes).
async fn wait_for_change(records: &Records) {
    // Where the read model stands: its checkpoint, or past it when its runner here passed
    // over other contexts' events (the checkpoint follows a little later).
    let reached = records.app.watch.reached(NAME);
    let position = match checkpoint(records).await.max(reached) {
        Some(p) => p,
        None => {
            tokio::time::sleep(Duration::from_secs(1)).await;
            return;
        }
    };
    records
        .app
        .watch
        .wait_for(NAME, position + 1, Duration::from_secs(15))
        .await;
}

async fn checkpoint(records: &Records) -> Option<i64> {
    let client = records.app.read.get().await.ok()?;
    let row = client
        .query_opt(
            "SELECT position FROM records.projection_checkpoint WHERE name = $1",
            &[&NAME],
        )
        .await
        .ok()??;
    Some(row.get(0))
}
