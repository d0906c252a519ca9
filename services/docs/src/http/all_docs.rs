//! `_all_docs`: the live documents by id (byte order), with `keys`, ranges, `limit`, `skip`,
//! `descending`, `include_docs` (with `attachments`, `conflicts`) and `update_seq`, written as the rows are read ([`super::streaming`]).

use super::bulk::load_many;
use super::error::CouchError;
use super::params::{Params, flag, flag_or, json, number};
use super::render::{Atts, Show, render};
use super::streaming::{self, BodyWriter, StreamError};
use crate::access::auth::{self, Caller, Visibility};
use crate::body::push_string;
use crate::read;
use crate::stored::StoredDoc;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use deadpool_postgres::Object;
use futures::TryStreamExt;
use palimpsest_web::AppState;
use palimpsest_web::content::ContentStore;
use serde::Deserialize;
use tokio_postgres::RowStream;

fn row(
    id: &str,
    stored: &StoredDoc,
    include_docs: bool,
    show: Show,
    atts: &Atts,
) -> Result<String, CouchError> {
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
                out.push_str(&render(id, &tree, winner, show, atts));
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
) -> Result<Response, CouchError> {
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
) -> Result<Response, CouchError> {
    let body: KeysBody = super::params::body_or_default(&body)?;
    all_docs(&state, &db, &params, body.keys, &headers).await
}

async fn all_docs(
    state: &AppState,
    db: &str,
    params: &Params,
    keys: Option<Vec<String>>,
    headers: &HeaderMap,
) -> Result<Response, CouchError> {
    let client = read::client(state).await?;
    read::database(&client, db).await?;
    let caller = auth::caller(state, &client, db, headers).await?;
    let include_docs = flag(params, "include_docs")?;
    // Every parameter is read before any is used, so a malformed one is a 400 whatever the
    // others are (CouchDB parses them all up front).
    let limit = number(params, "limit")?.map_or(i64::MAX, |n| i64::try_from(n).unwrap_or(i64::MAX));
    let skip = number(params, "skip")?.map_or(0, |n| i64::try_from(n).unwrap_or(i64::MAX));
    let descending = flag(params, "descending")?;
    let start = json::<String>(params, "startkey")?.or(json::<String>(params, "start_key")?);
    let end = json::<String>(params, "endkey")?.or(json::<String>(params, "end_key")?);
    let key = json::<String>(params, "key")?;
    let inclusive_end = flag_or(params, "inclusive_end", true)?;
    let show = Show {
        conflicts: flag(params, "conflicts")?,
        attachments: flag(params, "attachments")?,
        ..Show::default()
    };
    let update_seq = flag(params, "update_seq")?;
    if keys.is_some() && (key.is_some() || start.is_some() || end.is_some()) {
        return Err(CouchError::new(
            axum::http::StatusCode::BAD_REQUEST,
            "query_parse_error",
            "`keys` is incompatible with `key`, `start_key` and `end_key`",
        ));
    }
    let total: i64 = client
        .query_one(
            "SELECT count(*) FROM docs.kv WHERE db = $1 AND seq IS NOT NULL AND NOT deleted",
            &[&db],
        )
        .await?
        .get(0);
    let store = crate::access::scope::attachments()?;
    let seq = if update_seq {
        Some(read::update_seq(&client, db).await?)
    } else {
        None
    };
    let reader = if include_docs && show.attachments {
        Some(read::client(state).await?)
    } else {
        None
    };
    let form = Form {
        include_docs,
        show,
        store,
        reader,
    };
    if let Some(keys) = keys {
        let keys = page_of_keys(keys, skip, limit, descending);
        let (head, db) = (head(total, skip, seq), db.to_owned());
        return Ok(streaming::json("_all_docs", move |mut out| async move {
            out.push(&head).await?;
            by_keys(&client, &db, &keys, &caller, &form, &mut out).await?;
            out.push("]}").await?;
            Ok(out)
        }));
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
    let found = streaming::query(&client, &sql, &[&db, &start, &end, &limit, &skip]).await?;
    let head = head(total, skip, seq);
    Ok(streaming::json("_all_docs", move |mut out| async move {
        out.push(&head).await?;
        in_range(found, &caller, &form, &mut out).await?;
        out.push("]}").await?;
        drop(client);
        Ok(out)
    }))
}

/// How each row is written: with the document or not, its specials, and where attachment
/// bytes are read from (`attachments=true`).
struct Form {
    include_docs: bool,
    show: Show,
    store: std::sync::Arc<ContentStore>,
    /// A connection of its own to read attachment bytes on (the range's is busy streaming).
    reader: Option<Object>,
}

impl Form {
    /// Whether a row's document carries its attachments' bytes.
    fn inlines(&self) -> bool {
        self.include_docs && self.show.attachments
    }
}

/// The keys a `keys` query answers: CouchDB (and PouchDB's own adapters) apply `skip` and
/// `limit` to the list, then `descending` reverses it.
fn page_of_keys(keys: Vec<String>, skip: i64, limit: i64, descending: bool) -> Vec<String> {
    let skip = usize::try_from(skip).unwrap_or(usize::MAX);
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut page: Vec<String> = keys.into_iter().skip(skip).take(limit).collect();
    if descending {
        page.reverse();
    }
    page
}

/// What comes before the rows (`update_seq` when asked).
fn head(total: i64, offset: i64, update_seq: Option<i64>) -> String {
    let seq = update_seq.map_or(String::new(), |seq| format!(",\"update_seq\":{seq}"));
    format!("{{\"total_rows\":{total},\"offset\":{offset}{seq},\"rows\":[")
}

/// The attachment bytes a row's document carries (none unless `attachments=true`).
async fn atts_of(form: &Form, doc: &StoredDoc) -> Result<Atts, CouchError> {
    let Some(reader) = &form.reader else {
        return Ok(Atts::new());
    };
    if !form.inlines() || doc.sync.deleted || !doc.body.contains("\"_attachments\"") {
        return Ok(Atts::new());
    }
    let tree = doc.tree()?;
    read::attachment_data(&form.store, reader, &read::digests(std::iter::once(&tree))).await
}

/// The rows of a range as Postgres sends them: those the caller sees.
async fn in_range(
    found: RowStream,
    caller: &Caller,
    form: &Form,
    out: &mut BodyWriter,
) -> Result<(), StreamError> {
    let mut found = std::pin::pin!(found);
    let mut first = true;
    while let Some(found) = found.try_next().await? {
        let id: String = found.get(0);
        let doc = StoredDoc::parse(found.get(1)).map_err(CouchError::from)?;
        if caller.sees(&doc.sync) == Visibility::Visible {
            if !first {
                out.push(",").await?;
            }
            first = false;
            let atts = atts_of(form, &doc).await?;
            out.push(&row(&id, &doc, form.include_docs, form.show, &atts)?)
                .await?;
        }
    }
    Ok(())
}

/// Keys looked up per query by [`by_keys`] (the documents of one lookup are held at once).
const KEYS_PER_READ: usize = 100;

/// A row per key asked (a document, `forbidden` or `not_found`), the documents read a few
/// at a time.
async fn by_keys(
    client: &Object,
    db: &str,
    keys: &[String],
    caller: &Caller,
    form: &Form,
    out: &mut BodyWriter,
) -> Result<(), StreamError> {
    for (n, some) in keys.chunks(KEYS_PER_READ).enumerate() {
        let stored = load_many(client, db, some).await?;
        for (i, key) in some.iter().enumerate() {
            if n > 0 || i > 0 {
                out.push(",").await?;
            }
            let atts = match stored.get(key) {
                Some(doc) => atts_of(form, doc).await?,
                None => Atts::new(),
            };
            out.push(&keyed_row(key, stored.get(key), caller, form, &atts)?)
                .await?;
        }
    }
    Ok(())
}

/// The row of a key asked: its document if the caller sees it, else the error.
fn keyed_row(
    key: &str,
    stored: Option<&StoredDoc>,
    caller: &Caller,
    form: &Form,
    atts: &Atts,
) -> Result<String, CouchError> {
    let error = match stored {
        Some(doc) if caller.sees(&doc.sync) == Visibility::Visible => {
            return row(key, doc, form.include_docs, form.show, atts);
        }
        Some(_) => "forbidden",
        None => "not_found",
    };
    let mut out = String::from("{\"key\":");
    push_string(&mut out, key);
    out.push_str(",\"error\":\"");
    out.push_str(error);
    out.push_str("\"}");
    Ok(out)
}
