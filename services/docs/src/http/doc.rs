//! One document: `GET|PUT|DELETE /{db}/{doc}` and `POST /{db}`.

use super::error::CouchError;
use super::params::{Params, flag, flag_or, json};
use super::render::{Atts, Show, render, render_delivered};
use crate::access::auth::{self, Visibility};
use crate::access::{revisions, scope};
use crate::body::Incoming;
use crate::command::{Reply, text_reply};
use crate::document::command::{Item, Shape, write};
use crate::read;
use crate::rev::RevId;
use crate::tree::RevTree;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;

/// The specials a read asked for.
pub fn show(params: &Params) -> Result<Show, CouchError> {
    let meta = flag(params, "meta")?;
    Ok(Show {
        revs: flag(params, "revs")?,
        revs_info: flag(params, "revs_info")?,
        conflicts: flag(params, "conflicts")? || meta,
        deleted_conflicts: flag(params, "deleted_conflicts")? || meta,
        attachments: flag(params, "attachments")?,
    })
}

/// The revisions `open_revs` names: `all` (every leaf) or a JSON list of revision ids (one
/// that is not a revision id is CouchDB's 400).
fn open_revs(params: &Params, tree: &RevTree) -> Result<Option<Vec<String>>, CouchError> {
    match params.get("open_revs").map(String::as_str) {
        None => Ok(None),
        Some("all") => Ok(Some(
            tree.leaves()
                .filter(|n| !revisions::withheld(n))
                .map(|n| n.rev.to_string())
                .collect(),
        )),
        Some(_) => {
            let revs = json::<Vec<String>>(params, "open_revs")?.unwrap_or_default();
            for rev in &revs {
                RevId::parse(rev).map_err(|e| CouchError::bad_request(e.to_string()))?;
            }
            Ok(Some(revs))
        }
    }
}

/// The revisions a read names (`rev`, an `open_revs` list) that have no body in the tree:
/// older revisions, whose bodies the read model keeps until compaction.
fn named_without_body(
    rev: Option<&String>,
    open: Option<&[String]>,
    tree: &RevTree,
) -> Vec<String> {
    rev.into_iter()
        .chain(open.unwrap_or_default())
        .filter(|rev| {
            RevId::parse(rev)
                .ok()
                .and_then(|parsed| tree.get(&parsed))
                .is_some_and(|node| node.body.is_none())
        })
        .cloned()
        .collect()
}

/// The revisions `atts_since` names (a JSON list): the client holds their attachments.
fn atts_since(params: &Params) -> Result<Option<Vec<RevId>>, CouchError> {
    json::<Vec<String>>(params, "atts_since")?
        .map(|revs| {
            revs.iter()
                .map(|r| RevId::parse(r).map_err(|e| CouchError::bad_request(e.to_string())))
                .collect()
        })
        .transpose()
}

/// `node` as JSON; with `atts_since`, CouchDB's rule: attachments added after the newest held
/// revision on its path come inline, the others as stubs.
fn render_node(
    doc_id: &str,
    tree: &RevTree,
    node: &crate::tree::Node,
    show: Show,
    atts: &Atts,
    since: Option<&[RevId]>,
) -> String {
    match since {
        None => render(doc_id, tree, node, show, atts),
        Some(since) => {
            let held = crate::delivery::held_up_to(tree, node, since);
            let show = Show {
                attachments: false,
                ..show
            };
            let carry = crate::delivery::Carry::Inline;
            render_delivered(doc_id, tree, node, show, atts, held, carry).0
        }
    }
}

/// The `{"ok": doc}` / `{"missing": rev}` items of `open_revs` (with `latest`, a superseded
/// revision answers with the leaves that descend from it, each leaf once).
pub fn open_items(
    doc_id: &str,
    tree: &RevTree,
    revs: &[String],
    latest: bool,
    show: Show,
    atts: &Atts,
    since: Option<&[RevId]>,
) -> Vec<Result<String, String>> {
    super::bulk_get::open_nodes(tree, revs, latest)
        .into_iter()
        .map(|found| found.map(|node| render_node(doc_id, tree, node, show, atts, since)))
        .collect()
}

/// Reads document `doc_id` of `db` as `GET` answers it.
pub async fn read_doc(
    state: &AppState,
    db: &str,
    doc_id: &str,
    params: &Params,
    headers: &HeaderMap,
) -> Result<Reply, CouchError> {
    let client = read::client(state).await?;
    read::database(&client, db).await?;
    let caller = auth::caller(state, &client, db, headers).await?;
    let stored = read::document(&client, db, doc_id)
        .await?
        .ok_or_else(|| CouchError::not_found("missing"))?;
    let mut tree = revisions::readable_tree(&caller, &stored)?;
    let open = open_revs(params, &tree)?;
    let older = named_without_body(params.get("rev"), open.as_deref(), &tree);
    if !older.is_empty() {
        let kept = read::old_revisions(&client, db, doc_id, &older).await?;
        revisions::restore_old(&caller, &mut tree, kept);
    }
    let by_revision = params.contains_key("rev") || params.contains_key("open_revs");
    match caller.sees(&stored.sync) {
        _ if by_revision && revisions::any_readable(&tree) => {}
        Visibility::Visible => {}
        Visibility::Removed => {
            return Ok(text_reply(
                StatusCode::OK,
                auth::removed_doc(doc_id, &stored.sync.rev),
            ));
        }
        Visibility::Hidden => return Err(auth::forbidden()),
    }
    let since = atts_since(params)?;
    let atts = if flag(params, "attachments")? || since.is_some() {
        {
            let store = scope::attachments()?;
            read::attachment_data(&store, &client, &read::digests(std::iter::once(&tree))).await?
        }
    } else {
        Atts::new()
    };
    if let Some(revs) = open {
        if super::multipart::named(headers, "multipart/mixed") {
            let asked = super::open_revs::Asked {
                revs: &revs,
                latest: flag(params, "latest")?,
                show: show(params)?,
                since: since.as_deref(),
            };
            return Ok(super::open_revs::multipart_reply(
                doc_id, &tree, &asked, &atts,
            ));
        }
        let items: Vec<String> = open_items(
            doc_id,
            &tree,
            &revs,
            flag(params, "latest")?,
            show(params)?,
            &atts,
            since.as_deref(),
        )
        .into_iter()
        .map(|item| match item {
            Ok(doc) => format!("{{\"ok\":{doc}}}"),
            Err(rev) => serde_json::json!({"missing": rev}).to_string(),
        })
        .collect();
        return Ok(text_reply(StatusCode::OK, format!("[{}]", items.join(","))));
    }
    let node = match params.get("rev") {
        Some(rev) => {
            let rev = RevId::parse(rev).map_err(|e| CouchError::bad_request(e.to_string()))?;
            let node = tree
                .get(&rev)
                .ok_or_else(|| CouchError::not_found("missing"))?;
            let node = match flag(params, "latest")? {
                // The newest leaf descending from it (CouchDB's `latest` on one `rev`).
                true if node.children > 0 => {
                    tree.leaves_under(&rev).into_iter().next().unwrap_or(node)
                }
                _ => node,
            };
            Some(node)
                .filter(|n| n.body.is_some())
                .ok_or_else(|| CouchError::not_found("missing"))?
        }
        None => {
            let winner = tree
                .winner()
                .ok_or_else(|| CouchError::not_found("missing"))?;
            if winner.deleted {
                return Err(CouchError::not_found("deleted"));
            }
            winner
        }
    };
    Ok(text_reply(
        StatusCode::OK,
        render_node(doc_id, &tree, node, show(params)?, &atts, since.as_deref()),
    ))
}

/// `GET /{db}/{doc}` with `rev`, `revs`, `revs_info`, `open_revs`, `latest`, `conflicts`,
/// `attachments`, `atts_since`.
pub async fn get(
    State(state): State<AppState>,
    Path((db, doc_id)): Path<(String, String)>,
    Query(params): Query<Params>,
    headers: HeaderMap,
) -> Result<Reply, CouchError> {
    read_doc(&state, &db, &doc_id, &params, &headers).await
}

/// `PUT /{db}/{doc}`: a new revision (`_rev` or `?rev=` names its parent), or with
/// `?new_edits=false` a replicated one.
pub async fn put(
    State(state): State<AppState>,
    Path((db, doc_id)): Path<(String, String)>,
    Query(params): Query<Params>,
    headers: HeaderMap,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, CouchError> {
    let mut doc = Incoming::parse(&body)?;
    if doc.rev.is_none() {
        doc.rev = params.get("rev").cloned().or_else(|| if_match(&headers));
    }
    let new_edits = flag_or(&params, "new_edits", true)?;
    let writer = auth::caller_of(&state, &db, &headers).await?.writer();
    let items = vec![Item {
        doc_id,
        doc,
        attachment: None,
    }];
    write(
        &state,
        &request,
        &writer,
        &db,
        items,
        new_edits,
        Shape::Single(StatusCode::CREATED),
    )
    .await
}

fn if_match(headers: &HeaderMap) -> Option<String> {
    headers
        .get("if-match")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim_matches('"').to_owned())
}

/// `DELETE /{db}/{doc}?rev=`: a tombstone on that revision.
pub async fn delete(
    State(state): State<AppState>,
    Path((db, doc_id)): Path<(String, String)>,
    Query(params): Query<Params>,
    headers: HeaderMap,
    request: CommandRequest,
) -> Result<Reply, CouchError> {
    let doc = Incoming {
        id: None,
        rev: params.get("rev").cloned().or_else(|| if_match(&headers)),
        revisions: None,
        deleted: true,
        body: "{}".into(),
    };
    if doc.rev.is_none() {
        return Err(CouchError::conflict());
    }
    let writer = auth::caller_of(&state, &db, &headers).await?.writer();
    let items = vec![Item {
        doc_id,
        doc,
        attachment: None,
    }];
    write(
        &state,
        &request,
        &writer,
        &db,
        items,
        true,
        Shape::Single(StatusCode::OK),
    )
    .await
}

/// `POST /{db}`: a new document, its id from `_id` or a fresh uuid.
pub async fn post(
    State(state): State<AppState>,
    Path(db): Path<String>,
    headers: HeaderMap,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, CouchError> {
    let writer = auth::caller_of(&state, &db, &headers).await?.writer();
    let doc = Incoming::parse(&body)?;
    let doc_id = doc
        .id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string());
    let items = vec![Item {
        doc_id,
        doc,
        attachment: None,
    }];
    write(
        &state,
        &request,
        &writer,
        &db,
        items,
        true,
        Shape::Single(StatusCode::CREATED),
    )
    .await
}

/// `GET /{db}/_design/{name}`: a design document (id `_design/{name}`), stored as any other.
pub async fn get_design(
    state: State<AppState>,
    Path((db, name)): Path<(String, String)>,
    params: Query<Params>,
    headers: HeaderMap,
) -> Result<Reply, CouchError> {
    get(
        state,
        Path((db, format!("_design/{name}"))),
        params,
        headers,
    )
    .await
}

/// `PUT /{db}/_design/{name}`.
pub async fn put_design(
    state: State<AppState>,
    Path((db, name)): Path<(String, String)>,
    params: Query<Params>,
    headers: HeaderMap,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, CouchError> {
    put(
        state,
        Path((db, format!("_design/{name}"))),
        params,
        headers,
        request,
        body,
    )
    .await
}

/// `DELETE /{db}/_design/{name}?rev=`.
pub async fn delete_design(
    state: State<AppState>,
    Path((db, name)): Path<(String, String)>,
    params: Query<Params>,
    headers: HeaderMap,
    request: CommandRequest,
) -> Result<Reply, CouchError> {
    delete(
        state,
        Path((db, format!("_design/{name}"))),
        params,
        headers,
        request,
    )
    .await
}
