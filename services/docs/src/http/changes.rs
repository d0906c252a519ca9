//! `_changes`: every document whose last change is after `since`, in sequence order; normal,
//! longpoll, continuous and eventsource feeds, with heartbeats while a feed waits (a newline;
//! on the eventsource feed CouchDB's `heartbeat` event).
//!
//! A document's sequence is the log position of its last event, so sequences are integers that
//! only grow and a client's `since` is exact.

use super::auth;
use super::error::CouchError;
use super::params::{Params, flag, json, number};
use super::read;
use super::render::{Atts, Show, render};
use super::revision_access::listed;
use crate::body::push_string;
use crate::projection::NAME;
use crate::stored::StoredDoc;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use deadpool_postgres::Object;
use palimpsest_web::AppState;
use serde::Deserialize;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

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
    doc_ids: Option<Vec<String>>,
    /// `filter=sync_gateway/bychannel&channels=a,b`.
    channels: Option<Vec<String>>,
    /// The channels the caller lost through revoked grants (with the sequence of the loss).
    lost: std::collections::BTreeMap<String, i64>,
}

/// One page of changes.
struct Page {
    rows: Vec<(i64, String)>,
    last_seq: i64,
    pending: i64,
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
            ..Show::default()
        };
        let doc = tree
            .winner()
            .map(|w| render(key, &tree, w, show, &Atts::new()))
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
    ask.all_docs || ask.include_docs
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

/// One row of a change query (`key, value or null, seq, rev, deleted`) as its JSON.
fn change_row(
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
    Ok((seq, row_json(&key, seq, &stored, ask, removed)?))
}

/// A page of changes in the asked channels (a document removed from all of them appears once
/// as `removed`).
async fn fetch_channels(
    client: &Object,
    ask: &Ask,
    channels: &[String],
) -> Result<Page, CouchError> {
    let limit = ask.limit.unwrap_or(i64::MAX);
    let rows = client
        .query(
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
                &channels,
                &needs_value(ask),
            ],
        )
        .await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        let gone: Option<Vec<String>> = row.get(5);
        let all_removed: bool = row.get(6);
        let removed = all_removed.then(|| gone.unwrap_or_default());
        out.push(change_row(row, ask, removed.as_deref())?);
    }
    with_lost(client, ask, channels, &mut out).await?;
    let last_seq = out.last().map(|(s, _)| *s).unwrap_or(ask.since);
    Ok(Page {
        rows: out,
        last_seq,
        pending: 0,
    })
}

/// Adds the documents of the channels the caller lost after `since` (each once, at the loss,
/// as `removed`: [`super::revoked`]) to a page, in sequence order and within its limit.
async fn with_lost(
    client: &Object,
    ask: &Ask,
    channels: &[String],
    rows: &mut Vec<(i64, String)>,
) -> Result<(), CouchError> {
    if ask.lost.is_empty() {
        return Ok(());
    }
    let removed = super::revoked::removed_since(
        client,
        &ask.db,
        ask.since,
        &ask.lost,
        channels,
        ask.doc_ids.as_ref(),
    )
    .await?;
    for gone in removed {
        let row = row_json(&gone.key, gone.seq, &gone.stored, ask, Some(&gone.channels))?;
        rows.push((gone.seq, row));
    }
    rows.sort_by_key(|(seq, _)| *seq);
    if let Some(limit) = ask.limit {
        rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    }
    Ok(())
}

async fn fetch(client: &Object, ask: &Ask) -> Result<Page, CouchError> {
    if let Some(channels) = &ask.channels {
        return fetch_channels(client, ask, channels).await;
    }
    let limit = ask.limit.unwrap_or(i64::MAX);
    let order = if ask.descending { "DESC" } else { "ASC" };
    let since_clause = if ask.descending { "" } else { "AND seq > $2" };
    let ids_clause = if ask.doc_ids.is_some() {
        "AND key = ANY($4)"
    } else {
        "AND $4::text[] IS NULL"
    };
    let sql = format!(
        "SELECT key, {value}, seq, rev, deleted FROM docs.kv WHERE db = $1 AND seq IS NOT NULL \
         {since_clause} AND $2::bigint IS NOT NULL {ids_clause} ORDER BY seq {order} LIMIT $3",
        value = if needs_value(ask) {
            "value"
        } else {
            "NULL::text"
        },
    );
    let rows = client
        .query(&sql, &[&ask.db, &ask.since, &limit, &ask.doc_ids])
        .await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        out.push(change_row(row, ask, None)?);
    }
    let last_seq = if ask.descending {
        out.last().map(|(s, _)| *s).unwrap_or(0)
    } else {
        out.last().map(|(s, _)| *s).unwrap_or(ask.since)
    };
    let pending = if ask.descending || ask.limit.is_none() {
        0
    } else {
        client
            .query_one(
                &format!(
                    "SELECT count(*) FROM docs.kv WHERE db = $1 AND seq > $2 AND seq IS NOT NULL {}",
                    if ask.doc_ids.is_some() { "AND key = ANY($3)" } else { "AND $3::text[] IS NULL" }
                ),
                &[&ask.db, &last_seq, &ask.doc_ids],
            )
            .await?
            .get(0)
    };
    Ok(Page {
        rows: out,
        last_seq,
        pending,
    })
}

fn normal_body(page: &Page) -> String {
    let rows: Vec<&str> = page.rows.iter().map(|(_, r)| r.as_str()).collect();
    format!(
        "{{\"results\":[{}],\"last_seq\":{},\"pending\":{}}}",
        rows.join(","),
        page.last_seq,
        page.pending
    )
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
    let doc_ids = match params.get("filter").map(String::as_str) {
        None => None,
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
    Ok(Ask {
        db,
        since,
        limit: number(params, "limit")?.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
        descending: flag(params, "descending")?,
        all_docs: params.get("style").is_some_and(|s| s == "all_docs"),
        include_docs: flag(params, "include_docs")?,
        conflicts: flag(params, "conflicts")?,
        doc_ids,
        channels,
        lost,
    })
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
    let body: ChangesBody = if body.is_empty() {
        ChangesBody::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| CouchError::bad_request(e.to_string()))?
    };
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
    read::database(&client, &db).await?;
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
    let purged: i64 = client
        .query_one(
            "SELECT purged_seq FROM docs.databases WHERE name = $1",
            &[&ask.db],
        )
        .await?
        .get(0);
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
    if feed == "normal" {
        let page = fetch(&client, &ask).await?;
        return Ok(json_response(normal_body(&page)));
    }
    let feed = match feed {
        "longpoll" => Feed::Longpoll,
        "continuous" => Feed::Continuous,
        "eventsource" => Feed::EventSource,
        other => {
            return Err(CouchError::bad_request(format!(
                "unsupported feed `{other}`"
            )));
        }
    };
    drop(client);
    let (sender, receiver) = mpsc::channel::<Bytes>(16);
    tokio::spawn(async move {
        if let Err(e) = follow(&state, ask, timeout, heartbeat, feed, &sender).await {
            tracing::warn!(error = ?e, "changes feed ended early");
        }
    });
    let stream = futures::stream::unfold(receiver, |mut rx| async move {
        rx.recv()
            .await
            .map(|chunk| (Ok::<_, std::convert::Infallible>(chunk), rx))
    });
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, feed.content_type()),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(stream),
    )
        .into_response())
}

/// A feed that stays open: its framing of rows, heartbeats and end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Feed {
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
            Feed::Longpoll | Feed::Continuous => "application/json",
        }
    }

    /// One change as this feed frames it.
    fn row(self, seq: i64, row: &str) -> String {
        match self {
            Feed::EventSource => format!("data: {row}\nid: {seq}\n\n"),
            Feed::Longpoll | Feed::Continuous => format!("{row}\n"),
        }
    }

    /// What keeps the connection alive: CouchDB's newline, or its `heartbeat` event (which an
    /// `EventSource`'s message handler never sees; a client may listen for it).
    fn heartbeat(self) -> &'static str {
        match self {
            Feed::EventSource => "event: heartbeat\ndata: \n\n",
            Feed::Longpoll | Feed::Continuous => "\n",
        }
    }

    /// The last words of a streaming feed: `{"last_seq"}` on the continuous one; an event
    /// stream just ends (its last `id` is the client's checkpoint).
    fn end(self, last_seq: i64) -> Option<String> {
        match self {
            Feed::Continuous => Some(format!("{{\"last_seq\":{last_seq}}}\n")),
            Feed::EventSource | Feed::Longpoll => None,
        }
    }
}

fn json_response(text: String) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        text,
    )
        .into_response()
}

/// Feeds a longpoll, continuous or eventsource response until it has rows (longpoll), sent
/// `limit` rows, or times out.
async fn follow(
    state: &AppState,
    mut ask: Ask,
    timeout: Duration,
    heartbeat: Option<Duration>,
    feed: Feed,
    sender: &mpsc::Sender<Bytes>,
) -> Result<(), CouchError> {
    let deadline = Instant::now() + timeout;
    let mut next_beat = heartbeat.map(|h| Instant::now() + h);
    let mut sent = 0i64;
    let asked = ask.limit;
    loop {
        let client = read::client(state).await?;
        let page = fetch(&client, &ask).await?;
        drop(client);
        if !page.rows.is_empty() {
            if feed == Feed::Longpoll {
                return send(sender, normal_body(&page)).await;
            }
            for (seq, row) in &page.rows {
                send(sender, feed.row(*seq, row)).await?;
            }
            sent += page.rows.len() as i64;
            ask.since = page.last_seq;
            if asked.is_some_and(|l| sent >= l) {
                return end(sender, feed, ask.since).await;
            }
            ask.limit = asked.map(|l| l - sent);
            continue;
        }
        let now = Instant::now();
        if now >= deadline {
            return if feed == Feed::Longpoll {
                send(sender, normal_body(&page)).await
            } else {
                end(sender, feed, ask.since).await
            };
        }
        if let Some(beat) = next_beat
            && now >= beat
        {
            send(sender, feed.heartbeat().into()).await?;
            next_beat = heartbeat.map(|h| now + h);
        }
        let head = state.store.head_position().await?;
        let wake = deadline
            .min(next_beat.unwrap_or(deadline))
            .min(now + Duration::from_millis(500));
        state
            .watch
            .wait_for(NAME, head + 1, wake.saturating_duration_since(now))
            .await;
    }
}

async fn end(sender: &mpsc::Sender<Bytes>, feed: Feed, last_seq: i64) -> Result<(), CouchError> {
    match feed.end(last_seq) {
        Some(text) => send(sender, text).await,
        None => Ok(()),
    }
}

async fn send(sender: &mpsc::Sender<Bytes>, text: String) -> Result<(), CouchError> {
    sender
        .send(Bytes::from(text))
        .await
        .map_err(|_| CouchError::bad_request("the client went away"))
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
            doc_ids: None,
            channels: None,
            lost: Default::default(),
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
            row_json("k", 7, &stored, &all_docs, None).expect("row")
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
                row_json(key, 42, &stored, &ask(), removed.as_deref()).expect("row"),
            );
        }
    }
}
