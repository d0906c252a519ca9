//! `_all_docs`: the live documents by id (byte order), with `keys`, ranges, `limit`, `skip`,
//! `descending` and `include_docs`.

use super::auth::{self, Visibility};
use super::bulk::load_many;
use super::command::{Reply, text_reply};
use super::error::CouchError;
use super::params::{Params, flag, flag_or, json, number};
use super::read;
use super::render::{Atts, Show, render};
use crate::body::push_string;
use crate::stored::StoredDoc;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use palimpsest_web::AppState;
use serde::Deserialize;

fn row(id: &str, stored: &StoredDoc, include_docs: bool, show: Show) -> Result<String, CouchError> {
    let mut out = String::from("{\"id\":");
    push_string(&mut out, id);
    out.push_str(",\"key\":");
    push_string(&mut out, id);
    out.push_str(",\"value\":{\"rev\":");
    push_string(&mut out, &stored.sync.rev);
    if stored.sync.deleted {
        out.push_str(",\"deleted\":true}");
        if include_docs {
            out.push_str(",\"doc\":null");
        }
    } else {
        out.push('}');
        if include_docs {
            let tree = stored.tree()?;
            if let Some(winner) = tree.winner() {
                out.push_str(",\"doc\":");
                out.push_str(&render(id, &tree, winner, show, &Atts::new()));
            }
        }
    }
    out.push('}');
    Ok(out)
}

#[derive(Deserialize, Default)]
struct KeysBody {
    #[serde(default)]
    keys: Option<Vec<String>>,
}

/// `GET /{db}/_all_docs`.
pub async fn get(
    State(state): State<AppState>,
    Path(db): Path<String>,
    Query(params): Query<Params>,
    headers: HeaderMap,
) -> Result<Reply, CouchError> {
    let keys = json::<Vec<String>>(&params, "keys")?;
    all_docs(&state, &db, &params, keys, &headers).await
}

/// `POST /{db}/_all_docs` `{keys}`.
pub async fn post(
    State(state): State<AppState>,
    Path(db): Path<String>,
    Query(params): Query<Params>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Reply, CouchError> {
    let body: KeysBody = if body.is_empty() {
        KeysBody::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| CouchError::bad_request(e.to_string()))?
    };
    all_docs(&state, &db, &params, body.keys, &headers).await
}

async fn all_docs(
    state: &AppState,
    db: &str,
    params: &Params,
    keys: Option<Vec<String>>,
    headers: &HeaderMap,
) -> Result<Reply, CouchError> {
    let client = read::client(state).await?;
    read::database(&client, db).await?;
    let caller = auth::caller(state, &client, db, headers).await?;
    let include_docs = flag(params, "include_docs")?;
    // Every parameter is read before any is used, so a malformed one is a 400 whatever the
    // others are (CouchDB parses them all up front); `keys` ignores limit and skip.
    let limit = number(params, "limit")?.map_or(i64::MAX, |n| i64::try_from(n).unwrap_or(i64::MAX));
    let skip = number(params, "skip")?.map_or(0, |n| i64::try_from(n).unwrap_or(i64::MAX));
    let descending = flag(params, "descending")?;
    let start = json::<String>(params, "startkey")?.or(json::<String>(params, "start_key")?);
    let end = json::<String>(params, "endkey")?.or(json::<String>(params, "end_key")?);
    let key = json::<String>(params, "key")?;
    let inclusive_end = flag_or(params, "inclusive_end", true)?;
    let show = Show {
        conflicts: flag(params, "conflicts")?,
        ..Show::default()
    };
    let total: i64 = client
        .query_one(
            "SELECT count(*) FROM docs.kv WHERE db = $1 AND seq IS NOT NULL AND NOT deleted",
            &[&db],
        )
        .await?
        .get(0);
    let mut rows = Vec::new();
    if let Some(keys) = keys {
        let stored = load_many(&client, db, &keys).await?;
        for key in &keys {
            match stored.get(key) {
                Some(doc) if caller.sees(&doc.sync) == Visibility::Visible => {
                    rows.push(row(key, doc, include_docs, show)?)
                }
                Some(_) => {
                    let mut out = String::from("{\"key\":");
                    push_string(&mut out, key);
                    out.push_str(",\"error\":\"forbidden\"}");
                    rows.push(out);
                }
                None => {
                    let mut out = String::from("{\"key\":");
                    push_string(&mut out, key);
                    out.push_str(",\"error\":\"not_found\"}");
                    rows.push(out);
                }
            }
        }
        return Ok(answer(total, 0, &rows));
    }
    let (start, end) = match key {
        Some(k) => (Some(k.clone()), Some(k)),
        None => (start, end),
    };
    let end_op = match (descending, inclusive_end) {
        (false, true) => "<=",
        (false, false) => "<",
        (true, true) => ">=",
        (true, false) => ">",
    };
    let start_op = if descending { "<=" } else { ">=" };
    let order = if descending { "DESC" } else { "ASC" };
    let sql = format!(
        "SELECT key, value FROM docs.kv WHERE db = $1 AND seq IS NOT NULL AND NOT deleted \
         AND ($2::text IS NULL OR key COLLATE \"C\" {start_op} $2) \
         AND ($3::text IS NULL OR key COLLATE \"C\" {end_op} $3) \
         ORDER BY key COLLATE \"C\" {order} LIMIT $4 OFFSET $5"
    );
    let found = client
        .query(&sql, &[&db, &start, &end, &limit, &skip])
        .await?;
    for r in &found {
        let id: String = r.get(0);
        let doc = StoredDoc::parse(r.get(1))?;
        if caller.sees(&doc.sync) == Visibility::Visible {
            rows.push(row(&id, &doc, include_docs, show)?);
        }
    }
    Ok(answer(total, skip, &rows))
}

fn answer(total: i64, offset: i64, rows: &[String]) -> Reply {
    text_reply(
        StatusCode::OK,
        format!(
            "{{\"total_rows\":{total},\"offset\":{offset},\"rows\":[{}]}}",
            rows.join(",")
        ),
    )
}
