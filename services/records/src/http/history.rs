//! `GET /records/history/{org}/{clazz}/{pk}?version=N`: one document as it was after its first
//! `N` events (its whole history when `N` is absent), `data` opened, for the administrator only
//! (the console's view of a class's rows at a time). Not a function of the records API: an
//! operator's read of the document's stream, folded as the write side folds it, answered
//! `no-store` so that no browser keeps opened data.

use crate::caller::Caller;
use crate::coded_error::CodedError;
use crate::context::Records;
use crate::document::{DocumentState, evolve};
use crate::streams::DocKey;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use palimpsest_events::DomainEvent;
use palimpsest_events::records::DocumentEvent;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;

/// How far to fold: the first `version` events of the document's stream.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Asked {
    version: Option<i64>,
}

/// The route's handler; see the module doc.
pub async fn document_at(
    State(records): State<Arc<Records>>,
    Path((org, clazz, pk)): Path<(String, String, String)>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let answer = async {
        Caller::of(&records, &headers).await?.admin("history")?;
        if [&org, &clazz, &pk].iter().any(|part| part.contains('\0')) {
            return Err(CodedError::bad(
                "the document's key must not contain U+0000",
            ));
        }
        let Query(asked) = Query::<Asked>::try_from_uri(&uri)
            .map_err(|rejection| CodedError::bad(rejection.body_text()))?;
        let key = DocKey { org, clazz, pk };
        let (state, version, total) = fold(&records, &key, asked.version).await?;
        Ok::<_, CodedError>(json!({
            "version": version,
            "versions": total,
            "row": opened(&records, &state)?,
            "x": state.x(),
            "del_rows": state.left.len(),
        }))
    };
    let mut response = match answer.await {
        Ok(body) => Json(body).into_response(),
        Err(failure) => failure.into_response(),
    };
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The document folded up to `version` (all of it when `None`); how many events that was, and
/// how many its stream holds.
async fn fold(
    records: &Records,
    key: &DocKey,
    version: Option<i64>,
) -> Result<(DocumentState, i64, i64), CodedError> {
    if version.is_some_and(|v| v < 1) {
        return Err(CodedError::bad("version must be 1 or more"));
    }
    let stream = key.stream();
    let store = &records.app.store;
    let total = store
        .stream_version(&stream)
        .await
        .map_err(CodedError::unavailable)?;
    if total == 0 {
        return Err(CodedError::from(crate::error::RecordsError::NotFound(
            format!("no document {}:{}:{}", key.org, key.clazz, key.pk),
        )));
    }
    let until = version.unwrap_or(total).min(total);
    let mut state = DocumentState::default();
    let mut folded = 0;
    while folded < until {
        let page = store
            .read_stream_at(&stream, folded, None, (until - folded).min(1000))
            .await
            .map_err(CodedError::unavailable)?;
        if page.is_empty() {
            break;
        }
        for event in &page {
            let decoded = DocumentEvent::decode(event).map_err(CodedError::internal)?;
            state = evolve(state, &decoded);
            folded = event.version;
        }
    }
    Ok((state, folded, total))
}

/// The row with its `data` opened; `null` when the document had no row then (purged).
fn opened(records: &Records, state: &DocumentState) -> Result<Value, CodedError> {
    let Some(row) = &state.row else {
        return Ok(Value::Null);
    };
    let data = records.key.open(&row.data).map_err(CodedError::internal)?;
    Ok(json!({"org": row.org, "clazz": row.clazz, "pk": row.pk, "v": row.v, "data": data}))
}
