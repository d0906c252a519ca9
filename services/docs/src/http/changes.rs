//! `_changes`: every document whose last change is after `since`, in sequence order; normal,
//! longpoll, continuous and eventsource feeds, with heartbeats while a feed waits (a newline;
//! on the eventsource feed CouchDB's `heartbeat` event).
//!
//! A document's sequence is its database's count of changes at its last change (each database
//! counts its own, as CouchDB and Sync Gateway do), so sequences are integers that only grow
//! and a client's `since` is exact.

use super::error::CouchError;
use super::params::{Params, flag, json, number};
use super::render::{Atts, Show, render};
use super::streaming::{self, BodyWriter, StreamError};
use crate::access::auth;
use crate::access::revisions::listed;
use crate::body::push_string;
use crate::design::filter::ChangesFilter;
use crate::projection::NAME;
use crate::read;
use crate::stored::StoredDoc;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use deadpool_postgres::Object;
use futures::TryStreamExt;
use palimpsest_web::AppState;
use palimpsest_web::content::ContentStore;
use serde::Deserialize;
use std::time::Duration;
use tokio::time::Instant;
use tokio_postgres::RowStream;

/// What a `_changes` request asks.
#[derive(Debug, Clone)]
struct Ask {
    db: String,
    since: i64,
    limit: Option<i64>,
    descending: bool,
    all_docs: bool,
    include_docs: bool,
    conflicts: bool,
    /// `attachments=true` (with `include_docs`): where the attachments' bytes are read from.
    attachments: Option<std::sync::Arc<ContentStore>>,
    doc_ids: Option<Vec<String>>,
    /// `filter=sync_gateway/bychannel&channels=a,b`.
    channels: Option<Vec<String>>,
    /// The channels the caller lost through revoked grants (with the sequence of the loss).
    lost: std::collections::BTreeMap<String, i64>,
    /// `filter=<ddoc>/<name>` or `filter=_view`: a design document's function decides.
    by_design: Option<std::sync::Arc<ChangesFilter>>,
}

fn parse_since(text: &str) -> Option<i64> {
    let text = text.trim_matches('"');
    let head = text.split('-').next().unwrap_or(text);
    head.parse().ok()
}

fn row_json(
    key: &str,
    seq: i64,
    stored: &StoredDoc,
    ask: &Ask,
    removed: Option<&[String]>,
    atts: &Atts,
) -> Result<String, CouchError> {
    let tree = stored.tree()?;
    let mut revs: Vec<String> = vec![stored.sync.rev.clone()];
    if ask.all_docs {
        let mut others: Vec<_> = tree
            .leaves()
            .filter(|n| n.rev.to_string() != stored.sync.rev)
            .filter(|n| listed(&stored.sync, &n.rev.to_string(), ask.channels.as_deref()))
            .collect();
        others.sort_by(|a, b| b.rev.cmp(&a.rev));
        revs.extend(others.iter().map(|n| n.rev.to_string()));
    }
    let changes: Vec<_> = revs.iter().map(|r| serde_json::json!({"rev": r})).collect();
    let mut out = format!("{{\"seq\":{seq},\"id\":");
    push_string(&mut out, key);
    out.push_str(",\"changes\":");
    out.push_str(&serde_json::to_string(&changes).map_err(CouchError::internal)?);
    if stored.sync.deleted {
        out.push_str(",\"deleted\":true");
    }
    if let Some(gone) = removed {
        out.push_str(",\"removed\":");
        out.push_str(&serde_json::to_string(gone).map_err(CouchError::internal)?);
        if ask.include_docs {
            let mut doc = crate::body::Outgoing::new(key, &stored.sync.rev, "{}");
            doc = doc.member("_removed", "true");
            out.push_str(",\"doc\":");
            out.push_str(&doc.finish());
        }
        out.push('}');
        return Ok(out);
    }
    if ask.include_docs {
        let show = Show {
            conflicts: ask.conflicts,
            attachments: ask.attachments.is_some(),
            ..Show::default()
        };
        let doc = tree
            .winner()
            .map(|w| render(key, &tree, w, show, atts))
            .unwrap_or_else(|| "null".into());
        out.push_str(",\"doc\":");
        out.push_str(&doc);
    }
    out.push('}');
    Ok(out)
}

/// Whether a change row needs the stored document (its `_sync` or its body), or only the
/// columns `kv` keeps beside it.
fn needs_value(ask: &Ask) -> bool {
    ask.all_docs || ask.include_docs || ask.by_design.is_some()
}

/// How many rows the query reads: `limit`, or every row when a design document's filter
/// chooses among them (the limit then counts the rows it keeps).
fn query_limit(ask: &Ask) -> i64 {
    match ask.by_design {
        Some(_) => i64::MAX,
        None => ask.limit.unwrap_or(i64::MAX),
    }
}

/// How many rows a design document's filter decides on with one engine.
const FILTERED_BATCH: usize = 100;

/// Which `rows` a design document's filter keeps (all of them without one); a row the
/// caller reads as removed passes as it is (its body is not the caller's to filter on).
fn kept(ask: &Ask, rows: &[tokio_postgres::Row]) -> Result<Vec<bool>, CouchError> {
    let Some(filter) = &ask.by_design else {
        return Ok(vec![true; rows.len()]);
    };
    let docs = rows
        .iter()
        .map(|row| {
            if row.get::<_, bool>(6) {
                return Ok(None);
            }
            let key: String = row.get(0);
            let stored = StoredDoc::parse(row.get(1))?;
            super::view::map_input(&key, &stored)
        })
        .collect::<Result<Vec<_>, CouchError>>()?;
    filter.keep(&docs)
}

/// A stored document's `_sync` alone (the body is skipped, not kept).
#[derive(Deserialize)]
struct OnlySync {
    #[serde(rename = "_sync")]
    sync: crate::stored::SyncData,
}

/// The leaf revisions of a stored document read from its `_sync` history, without building
/// its tree: the winner first, then the other leaves, highest first (`style=all_docs`).
fn leaf_revs(text: &str, channels: Option<&[String]>) -> Result<Vec<String>, CouchError> {
    let malformed = |e: &dyn std::fmt::Display| {
        CouchError::internal(format!("stored document is malformed: {e}"))
    };
    let OnlySync { sync } = serde_json::from_str(text).map_err(|e| malformed(&e))?;
    let history = &sync.history;
    let mut parent = vec![false; history.revs.len()];
    for &p in &history.parents {
        if let Some(slot) = usize::try_from(p).ok().and_then(|p| parent.get_mut(p)) {
            *slot = true;
        }
    }
    let mut others = Vec::new();
    for (rev, is_parent) in history.revs.iter().zip(parent) {
        if !is_parent && *rev != sync.rev && listed(&sync, rev, channels) {
            others.push(crate::rev::RevId::parse(rev).map_err(|e| malformed(&e))?);
        }
    }
    others.sort_by(|a, b| b.cmp(a));
    let mut revs = vec![sync.rev];
    revs.extend(others.iter().map(ToString::to_string));
    Ok(revs)
}

/// A change row from its revisions (the winner first) and flags: what a replicator's feed is
/// made of.
fn light_row(
    key: &str,
    seq: i64,
    revs: &[String],
    deleted: bool,
    removed: Option<&[String]>,
) -> String {
    let mut out = String::with_capacity(key.len() + 48 * revs.len() + 48);
    out.push_str("{\"seq\":");
    out.push_str(&seq.to_string());
    out.push_str(",\"id\":");
    push_string(&mut out, key);
    out.push_str(",\"changes\":[");
    for (i, rev) in revs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"rev\":");
        push_string(&mut out, rev);
        out.push('}');
    }
    out.push(']');
    if deleted {
        out.push_str(",\"deleted\":true");
    }
    if let Some(gone) = removed {
        out.push_str(",\"removed\":[");
        for (i, channel) in gone.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_string(&mut out, channel);
        }
        out.push(']');
    }
    out.push('}');
    out
}

/// One row of a change query (`key, value or null, seq, rev, deleted`) as its JSON; with
/// `attachments=true` its document's attachment bytes are read on `reader`, a connection of
/// its own (the query's is busy streaming the rows).
async fn change_row(
    reader: Option<&Object>,
    row: &tokio_postgres::Row,
    ask: &Ask,
    removed: Option<&[String]>,
) -> Result<(i64, String), CouchError> {
    let key: String = row.get(0);
    let seq: i64 = row.get(2);
    let deleted: bool = row.get::<_, Option<bool>>(4).unwrap_or(false);
    if !needs_value(ask) {
        let rev: String = row.get(3);
        return Ok((seq, light_row(&key, seq, &[rev], deleted, removed)));
    }
    let value: String = row.get(1);
    if !ask.include_docs {
        let revs = leaf_revs(&value, ask.channels.as_deref())?;
        return Ok((seq, light_row(&key, seq, &revs, deleted, removed)));
    }
    let stored = StoredDoc::parse(&value)?;
    let atts = match (&ask.attachments, reader) {
        (Some(store), Some(reader))
            if removed.is_none() && stored.body.contains("\"_attachments\"") =>
        {
            let tree = stored.tree()?;
            read::attachment_data(store, reader, &read::digests(std::iter::once(&tree))).await?
        }
        _ => Atts::new(),
    };
    Ok((seq, row_json(&key, seq, &stored, ask, removed, &atts)?))
}

/// A change query under way: its rows as Postgres sends them, and the rows of the channels the
/// caller lost (each once, as `removed`: [`crate::revocation`]), rendered, in sequence order.
struct Scan {
    rows: RowStream,
    lost: std::collections::VecDeque<(i64, String)>,
}

/// Starts the change query `ask` asks: a query Postgres refuses is an error here, before an
/// answer starts.
async fn start(client: &Object, ask: &Ask) -> Result<Scan, CouchError> {
    let Some(channels) = &ask.channels else {
        return Ok(Scan {
            rows: start_all(client, ask).await?,
            lost: Default::default(),
        });
    };
    let limit = query_limit(ask);
    let rows = streaming::query(
        client,
        "SELECT k.key, CASE WHEN $6 THEN k.value END, c.seq, k.rev, k.deleted, c.gone, c.all_removed FROM ( \
           SELECT key, max(seq) AS seq, bool_and(removed) AS all_removed, \
                  array_agg(channel ORDER BY channel) FILTER (WHERE removed) AS gone \
           FROM docs.channels WHERE db = $1 AND channel = ANY($5) AND seq > $2 GROUP BY key) c \
         JOIN docs.kv k ON k.db = $1 AND k.key = c.key \
         WHERE ($4::text[] IS NULL OR k.key = ANY($4)) ORDER BY c.seq LIMIT $3",
        &[
            &ask.db,
            &ask.since,
            &limit,
            &ask.doc_ids,
            channels,
            &needs_value(ask),
        ],
    )
    .await?;
    Ok(Scan {
        rows,
        lost: lost_rows(client, ask, channels).await?,
    })
}

/// The rows of the documents of the channels the caller lost after `since`, in sequence order.
async fn lost_rows(
    client: &Object,
    ask: &Ask,
    channels: &[String],
) -> Result<std::collections::VecDeque<(i64, String)>, CouchError> {
    if ask.lost.is_empty() {
        return Ok(Default::default());
    }
    let removed = crate::revocation::removed_since(
        client,
        &ask.db,
        ask.since,
        &ask.lost,
        channels,
        ask.doc_ids.as_ref(),
    )
    .await?;
    let mut rows = Vec::with_capacity(removed.len());
    for gone in removed {
        let removed = Some(gone.channels.as_slice());
        let row = row_json(
            &gone.key,
            gone.seq,
            &gone.stored,
            ask,
            removed,
            &Atts::new(),
        )?;
        rows.push((gone.seq, row));
    }
    rows.sort_by_key(|(seq, _)| *seq);
    Ok(rows.into())
}

/// Starts the change query of every document (no channel filter).
async fn start_all(client: &Object, ask: &Ask) -> Result<RowStream, CouchError> {
    let limit = query_limit(ask);
    let order = if ask.descending { "DESC" } else { "ASC" };
    let since_clause = if ask.descending { "" } else { "AND seq > $2" };
    let ids_clause = if ask.doc_ids.is_some() {
        "AND key = ANY($4)"
    } else {
        "AND $4::text[] IS NULL"
    };
    let sql = format!(
        "SELECT key, {value}, seq, rev, deleted, NULL::text[], false FROM docs.kv WHERE db = $1 \
         AND seq IS NOT NULL {since_clause} AND $2::bigint IS NOT NULL {ids_clause} \
         ORDER BY seq {order} LIMIT $3",
        value = if needs_value(ask) {
            "value"
        } else {
            "NULL::text"
        },
    );
    // Prepared once per connection: a pull asks it every batch; its generic plan reads the
    // sequence index from `since` on, as a custom one does.
    streaming::query_prepared(client, &sql, &[&ask.db, &ask.since, &limit, &ask.doc_ids]).await
}

/// Writes the rows of a started query (the lost ones merged in by sequence, a query row
/// first at an equal one), at most `limit` of them.
async fn write_rows(
    reader: Option<&Object>,
    mut scan: Scan,
    ask: &Ask,
    out: &mut Rows<'_>,
) -> Result<(), StreamError> {
    let limit = ask.limit.unwrap_or(i64::MAX);
    let batch = if ask.by_design.is_some() {
        FILTERED_BATCH
    } else {
        1
    };
    let mut rows = std::pin::pin!(scan.rows);
    // A finished row stream is not polled again (it would answer "connection closed").
    let mut finished = false;
    'rows: while out.count < limit && !finished {
        let mut read = Vec::with_capacity(batch);
        while read.len() < batch {
            match rows.try_next().await? {
                Some(row) => read.push(row),
                None => {
                    finished = true;
                    break;
                }
            }
        }
        let kept = kept(ask, &read)?;
        for (row, _) in read.iter().zip(kept).filter(|(_, kept)| *kept) {
            if out.count >= limit {
                break 'rows;
            }
            let gone: Option<Vec<String>> = row.get(5);
            let all_removed: bool = row.get(6);
            let removed = all_removed.then(|| gone.unwrap_or_default());
            let (seq, text) = change_row(reader, row, ask, removed.as_deref()).await?;
            while out.count < limit && scan.lost.front().is_some_and(|(lost, _)| *lost < seq) {
                if let Some((lost, text)) = scan.lost.pop_front() {
                    out.row(lost, &text).await?;
                }
            }
            if out.count < limit {
                out.row(seq, &text).await?;
            }
        }
    }
    while out.count < limit
        && let Some((lost, text)) = scan.lost.pop_front()
    {
        out.row(lost, &text).await?;
    }
    Ok(())
}

/// The last sequence of an answer that sent `count` rows, the last at `last_row`.
fn last_seq(ask: &Ask, last_row: Option<i64>) -> i64 {
    match last_row {
        Some(seq) => seq,
        None if ask.descending && ask.channels.is_none() => 0,
        None => ask.since,
    }
}

/// How many changes a limited answer left after `last_seq` (0 when no limit was asked, or
/// in descending order, by channel or through a design document's filter, as before).
async fn pending(client: &Object, ask: &Ask, last_seq: i64) -> Result<i64, CouchError> {
    if ask.channels.is_some() || ask.descending || ask.limit.is_none() || ask.by_design.is_some() {
        return Ok(0);
    }
    let ids_clause = if ask.doc_ids.is_some() {
        "AND key = ANY($3)"
    } else {
        "AND $3::text[] IS NULL"
    };
    let sql = format!(
        "SELECT count(*) FROM docs.kv WHERE db = $1 AND seq > $2 AND seq IS NOT NULL {ids_clause}"
    );
    // Prepared once per connection: asked after every limited batch of a pull.
    let statement = client.prepare_cached(&sql).await?;
    Ok(client
        .query_one(&statement, &[&ask.db, &last_seq, &ask.doc_ids])
        .await?
        .get(0))
}

/// Where the rows of an answer go, framed as its feed frames them.
struct Rows<'w> {
    out: &'w mut BodyWriter,
    feed: Feed,
    /// Rows written.
    count: i64,
    /// The sequence of the last row written.
    last: Option<i64>,
}

impl<'w> Rows<'w> {
    fn new(out: &'w mut BodyWriter, feed: Feed) -> Self {
        Rows {
            out,
            feed,
            count: 0,
            last: None,
        }
    }

    async fn row(&mut self, seq: i64, row: &str) -> Result<(), StreamError> {
        match self.feed {
            Feed::Normal | Feed::Longpoll => {
                self.out
                    .push(if self.count == 0 {
                        "{\"results\":["
                    } else {
                        ","
                    })
                    .await?;
                self.out.push(row).await?;
            }
            Feed::Continuous | Feed::EventSource => self.out.push(&self.feed.row(seq, row)).await?,
        }
        self.count += 1;
        self.last = Some(seq);
        Ok(())
    }

    /// Ends a `{"results"}` answer (normal and longpoll feeds).
    async fn finish(self, last_seq: i64, pending: i64) -> Result<(), StreamError> {
        if self.count == 0 {
            self.out.push("{\"results\":[").await?;
        }
        self.out
            .push(&format!(
                "],\"last_seq\":{last_seq},\"pending\":{pending}}}"
            ))
            .await
    }
}

/// The normal feed: the rows of the query started on `client`, then `last_seq` and
/// `pending`.
async fn normal(
    client: Object,
    reader: Option<Object>,
    scan: Scan,
    ask: Ask,
    mut out: BodyWriter,
) -> Result<BodyWriter, StreamError> {
    let mut rows = Rows::new(&mut out, Feed::Normal);
    write_rows(reader.as_ref(), scan, &ask, &mut rows).await?;
    let last_seq = last_seq(&ask, rows.last);
    let pending = pending(&client, &ask, last_seq).await?;
    rows.finish(last_seq, pending).await?;
    Ok(out)
}

/// The body of a POST `_changes` (`doc_ids` for `filter=_doc_ids`).
#[derive(Deserialize, Default)]
struct ChangesBody {
    #[serde(default)]
    doc_ids: Option<Vec<String>>,
}

async fn ask_of(
    client: &Object,
    db: String,
    params: &Params,
    body: Option<ChangesBody>,
    caller: &auth::Caller,
) -> Result<Ask, CouchError> {
    let since = match params.get("since").map(String::as_str) {
        None => 0,
        Some("now") => read::update_seq(client, &db).await?,
        Some(text) => parse_since(text).ok_or_else(|| {
            CouchError::bad_request(format!(
                "Malformed sequence supplied in 'since' parameter: {text}"
            ))
        })?,
    };
    let mut channels: Option<Vec<String>> = None;
    let by_design = by_design(client, &db, params, caller).await?;
    let doc_ids = match params.get("filter").map(String::as_str) {
        None => None,
        Some(_) if by_design.is_some() => None,
        Some("sync_gateway/bychannel") => {
            let list = params
                .get("channels")
                .ok_or_else(|| CouchError::bad_request("bychannel filter needs channels"))?;
            channels = Some(list.split(',').map(str::to_owned).collect());
            None
        }
        Some("_doc_ids") => match body.and_then(|b| b.doc_ids) {
            Some(ids) => Some(ids),
            None => Some(
                json::<Vec<String>>(params, "doc_ids")?
                    .ok_or_else(|| CouchError::bad_request("filter=_doc_ids needs doc_ids"))?,
            ),
        },
        Some(other) => {
            return Err(CouchError::bad_request(format!(
                "unsupported filter `{other}`"
            )));
        }
    };
    // A channel filter asks for those channels only: the lost ones are not among them.
    let lost = if caller.sees_all() || channels.is_some() {
        Default::default()
    } else {
        caller.lost.clone()
    };
    if let Some(allowed) = caller.filter() {
        channels = Some(match channels {
            Some(asked) => asked.into_iter().filter(|c| allowed.contains(c)).collect(),
            None => allowed,
        });
    }
    let include_docs = flag(params, "include_docs")?;
    let attachments = if flag(params, "attachments")? && include_docs {
        Some(crate::access::scope::attachments()?)
    } else {
        None
    };
    Ok(Ask {
        db,
        since,
        limit: number(params, "limit")?.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
        descending: flag(params, "descending")?,
        all_docs: params.get("style").is_some_and(|s| s == "all_docs"),
        include_docs,
        conflicts: flag(params, "conflicts")?,
        attachments,
        doc_ids,
        channels,
        lost,
        by_design,
    })
}

/// The design document's filter `filter=<ddoc>/<name>` or `filter=_view&view=<ddoc>/<name>`
/// (`view` alone implies `_view`) names, read before the answer starts: a missing design
/// document, filter or view is CouchDB's 404, `_view` without `view` its 400.
async fn by_design(
    client: &Object,
    db: &str,
    params: &Params,
    caller: &auth::Caller,
) -> Result<Option<std::sync::Arc<ChangesFilter>>, CouchError> {
    let filter = params.get("filter").map(String::as_str);
    let view = params.get("view").map(String::as_str);
    let split = |named: &str| {
        named
            .split_once('/')
            .map(|(ddoc, name)| (ddoc.to_owned(), name.to_owned()))
            .ok_or_else(|| CouchError::bad_request(format!("`{named}` is not <design doc>/<name>")))
    };
    let found = match (filter, view) {
        (Some("_view"), None) => {
            return Err(CouchError::bad_request(
                "`view` filter parameter is not provided.",
            ));
        }
        (Some("_view") | None, Some(view)) => {
            let (ddoc, name) = split(view)?;
            let design = super::view::design_doc(client, db, &ddoc).await?;
            let source = design
                .view(&name)
                .ok_or_else(|| crate::design::missing(format!("missing json key: {name}")))?;
            ChangesFilter::View { map: source.map }
        }
        (Some(named), _) if named.contains('/') && !named.starts_with("sync_gateway/") => {
            let (ddoc, name) = split(named)?;
            let design = super::view::design_doc(client, db, &ddoc).await?;
            let source = design
                .filter(&name)
                .ok_or_else(|| crate::design::missing(format!("missing json key: {name}")))?;
            ChangesFilter::function(source, params, db, caller.name.as_deref(), &caller.roles)
        }
        _ => return Ok(None),
    };
    Ok(Some(std::sync::Arc::new(found)))
}

/// `GET /{db}/_changes`.
pub async fn get(
    State(state): State<AppState>,
    Path(db): Path<String>,
    Query(params): Query<Params>,
    headers: HeaderMap,
) -> Result<Response, CouchError> {
    changes(state, db, params, None, headers).await
}

/// `POST /{db}/_changes` (`{"doc_ids": [...]}` with `filter=_doc_ids`).
pub async fn post(
    State(state): State<AppState>,
    Path(db): Path<String>,
    Query(params): Query<Params>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, CouchError> {
    let body: ChangesBody = super::params::body_or_default(&body)?;
    changes(state, db, params, Some(body), headers).await
}

/// A duration in milliseconds (clamped to 100 ms-10 min); `heartbeat=true` is `default`.
fn duration(
    params: &Params,
    name: &str,
    default: Option<u64>,
) -> Result<Option<Duration>, CouchError> {
    match (params.get(name).map(String::as_str), default) {
        (None, _) => Ok(None),
        (Some("true"), Some(default)) => Ok(Some(Duration::from_millis(default))),
        (Some(_), _) => {
            Ok(number(params, name)?.map(|ms| Duration::from_millis(ms.clamp(100, 600_000))))
        }
    }
}

async fn changes(
    state: AppState,
    db: String,
    params: Params,
    body: Option<ChangesBody>,
    headers: HeaderMap,
) -> Result<Response, CouchError> {
    let client = read::client(&state).await?;
    let database = read::database(&client, &db).await?;
    let caller = auth::caller(&state, &client, &db, &headers).await?;
    let mut ask = ask_of(&client, db, &params, body, &caller).await?;
    let feed = params.get("feed").map(String::as_str).unwrap_or("normal");
    if feed == "eventsource"
        && let Some(last) = headers.get("last-event-id").and_then(|v| v.to_str().ok())
    {
        // A reconnecting EventSource resumes after the last event it saw (CouchDB does too).
        ask.since = parse_since(last)
            .ok_or_else(|| CouchError::bad_request(format!("Malformed Last-Event-ID: {last}")))?;
    }
    // The database's row read first already holds both counters (a second read of it cost
    // two round trips of every `_changes`).
    let (purged, counted) = (database.purged_seq, database.last_seq);
    if ask.since > counted {
        // A checkpoint of another numbering (the log positions sequences were before each
        // database counted its own, or an earlier incarnation's): the changes start over,
        // which a replicator survives (it skips what it holds), rather than none being listed
        // until the count passes it.
        ask.since = 0;
    }
    if ask.since > 0 && ask.since < purged {
        return Err(CouchError::new(
            StatusCode::GONE,
            "checkpoint_expired",
            format!(
                "deletions after sequence {} were purged (tombstone retention); replicate again from scratch",
                ask.since
            ),
        ));
    }
    // Read whatever the feed, so a malformed one is a 400 on every feed.
    let timeout = duration(&params, "timeout", None)?.unwrap_or(Duration::from_secs(60));
    let heartbeat = duration(&params, "heartbeat", Some(60_000))?;
    let feed = match feed {
        "normal" => Feed::Normal,
        "longpoll" => Feed::Longpoll,
        "continuous" => Feed::Continuous,
        "eventsource" => Feed::EventSource,
        other => {
            return Err(CouchError::bad_request(format!(
                "unsupported feed `{other}`"
            )));
        }
    };
    if feed == Feed::Normal {
        let reader = attachment_reader(&state, &ask).await?;
        let scan = start(&client, &ask).await?;
        return Ok(streaming::json("_changes", move |out| {
            normal(client, reader, scan, ask, out)
        }));
    }
    drop(client);
    let mut response = streaming::respond(
        "_changes feed",
        HeaderValue::from_static(feed.content_type()),
        move |out| async move { follow(&state, ask, timeout, heartbeat, feed, out).await },
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(response)
}

/// A connection of its own to read attachment bytes on, when `attachments=true` asks for them.
async fn attachment_reader(state: &AppState, ask: &Ask) -> Result<Option<Object>, CouchError> {
    match ask.attachments {
        Some(_) => Ok(Some(read::client(state).await?)),
        None => Ok(None),
    }
}

/// How a `_changes` answer frames its rows, heartbeats and end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Feed {
    /// `{"results": [rows], "last_seq", "pending"}` at once.
    Normal,
    /// One normal answer, sent once there is a change (or at the timeout).
    Longpoll,
    /// One JSON row per line, `{"last_seq"}` at the end.
    Continuous,
    /// Server-sent events: `data: {row}` with `id: <seq>`, as CouchDB frames them.
    EventSource,
}

impl Feed {
    fn content_type(self) -> &'static str {
        match self {
            Feed::EventSource => "text/event-stream",
            Feed::Normal | Feed::Longpoll | Feed::Continuous => "application/json",
        }
    }

    /// One change as a streaming feed frames it (the `{"results"}` feeds join them with
    /// commas: [`Rows`]).
    fn row(self, seq: i64, row: &str) -> String {
        match self {
            Feed::EventSource => format!("data: {row}\nid: {seq}\n\n"),
            Feed::Normal | Feed::Longpoll | Feed::Continuous => format!("{row}\n"),
        }
    }

    /// What keeps the connection alive: CouchDB's newline, or its `heartbeat` event (which an
    /// `EventSource`'s message handler never sees; a client may listen for it).
    fn heartbeat(self) -> &'static str {
        match self {
            Feed::EventSource => "event: heartbeat\ndata: \n\n",
            Feed::Normal | Feed::Longpoll | Feed::Continuous => "\n",
        }
    }

    /// The last words of a streaming feed: `{"last_seq"}` on the continuous one; an event
    /// stream just ends (its last `id` is the client's checkpoint).
    fn end(self, last_seq: i64) -> Option<String> {
        match self {
            Feed::Continuous => Some(format!("{{\"last_seq\":{last_seq}}}\n")),
            Feed::Normal | Feed::EventSource | Feed::Longpoll => None,
        }
    }
}

/// Feeds a longpoll, continuous or eventsource response until it has rows (longpoll), sent
/// `limit` rows, or times out; each round's rows are written as Postgres sends them.
async fn follow(
    state: &AppState,
    mut ask: Ask,
    timeout: Duration,
    heartbeat: Option<Duration>,
    feed: Feed,
    mut out: BodyWriter,
) -> Result<BodyWriter, StreamError> {
    let deadline = Instant::now() + timeout;
    let mut next_beat = heartbeat.map(|h| Instant::now() + h);
    let mut sent = 0i64;
    let asked = ask.limit;
    loop {
        let client = read::client(state).await?;
        let reader = attachment_reader(state, &ask).await?;
        let scan = start(&client, &ask).await?;
        let mut rows = Rows::new(&mut out, feed);
        write_rows(reader.as_ref(), scan, &ask, &mut rows).await?;
        let (count, last) = (rows.count, rows.last);
        let now = Instant::now();
        if feed == Feed::Longpoll && (count > 0 || now >= deadline) {
            let last_seq = last_seq(&ask, last);
            let pending = pending(&client, &ask, last_seq).await?;
            rows.finish(last_seq, pending).await?;
            return Ok(out);
        }
        drop(client);
        if count > 0 {
            out.flush().await?;
            sent += count;
            ask.since = last_seq(&ask, last);
            if asked.is_some_and(|l| sent >= l) {
                return end(out, feed, ask.since).await;
            }
            ask.limit = asked.map(|l| l - sent);
            continue;
        }
        if now >= deadline {
            return end(out, feed, ask.since).await;
        }
        if let Some(beat) = next_beat
            && now >= beat
        {
            out.push(feed.heartbeat()).await?;
            out.flush().await?;
            next_beat = heartbeat.map(|h| now + h);
        }
        let head = state
            .store
            .head_position()
            .await
            .map_err(CouchError::from)?;
        let wake = deadline
            .min(next_beat.unwrap_or(deadline))
            .min(now + Duration::from_millis(500));
        state
            .watch
            .wait_for(NAME, head + 1, wake.saturating_duration_since(now))
            .await;
    }
}

/// Writes a feed's last words (if it has any).
async fn end(mut out: BodyWriter, feed: Feed, last_seq: i64) -> Result<BodyWriter, StreamError> {
    if let Some(text) = feed.end(last_seq) {
        out.push(&text).await?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rev::RevId;
    use crate::tree::RevTree;

    fn ask() -> Ask {
        Ask {
            db: "db".into(),
            since: 0,
            limit: None,
            descending: false,
            all_docs: false,
            include_docs: false,
            conflicts: false,
            attachments: None,
            doc_ids: None,
            channels: None,
            lost: Default::default(),
            by_design: None,
        }
    }

    #[test]
    fn all_docs_rows_from_the_history_are_the_rows_from_the_tree() {
        let mut tree = RevTree::default();
        let parse = |r: &str| RevId::parse(r).expect("rev");
        tree.insert(parse("1-aaa"), &[], "{}".into(), false);
        tree.insert(parse("2-bbb"), &[parse("1-aaa")], "{}".into(), false);
        tree.insert(parse("2-ccc"), &[parse("1-aaa")], "{}".into(), false);
        tree.insert(parse("3-ddd"), &[parse("2-bbb")], "{}".into(), true);
        tree.insert(parse("2-abc"), &[parse("1-aaa")], "{}".into(), false);
        let stored = StoredDoc::of_tree(&tree, 7).expect("stored");
        let text = stored.to_text().expect("text");
        let all_docs = Ask {
            all_docs: true,
            ..ask()
        };
        let revs = leaf_revs(&text, None).expect("leaves");
        assert_eq!(revs, ["2-ccc", "3-ddd", "2-abc"]);
        assert_eq!(
            light_row("k", 7, &revs, stored.sync.deleted, None),
            row_json("k", 7, &stored, &all_docs, None, &Atts::new()).expect("row")
        );
    }

    #[test]
    fn a_row_from_the_columns_is_the_row_from_the_stored_document() {
        for (deleted, removed) in [
            (false, None),
            (true, None),
            (false, Some(vec!["a\"b".to_owned(), "c".to_owned()])),
        ] {
            let mut tree = RevTree::default();
            let rev = RevId::parse("1-0123456789abcdef0123456789abcdef").expect("rev");
            tree.insert(rev, &[], r#"{"n":1}"#.to_owned(), deleted);
            let stored = StoredDoc::of_tree(&tree, 42).expect("stored");
            let key = "id \u{1} \"é\"";
            assert_eq!(
                light_row(
                    key,
                    42,
                    std::slice::from_ref(&stored.sync.rev),
                    stored.sync.deleted,
                    removed.as_deref()
                ),
                row_json(key, 42, &stored, &ask(), removed.as_deref(), &Atts::new()).expect("row"),
            );
        }
    }
}
