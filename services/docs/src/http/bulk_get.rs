//! `_bulk_get`: the revisions a replicator asks for, in CouchDB 3's JSON form or, when the
//! client asks for `multipart/mixed` and not JSON, as multipart parts with the attachments
//! following their documents ([`super::multipart`]). Per entry `atts_since` (CouchDB's rule:
//! [`crate::delivery`]), `revs`, `latest` and `attachments` are honoured; an entry's own error
//! is answered in its place.

use super::bulk::load_many;
use super::doc::show;
use super::error::CouchError;
use super::multipart::{self, Part};
use super::params::{Params, flag};
use super::render::{Atts, Show, render, render_delivered};
use super::streaming;
use crate::access::auth::{self, Caller, Visibility};
use crate::access::scope;
use crate::delivery::{Carry, Following, held_up_to};
use crate::read;
use crate::rev::RevId;
use crate::stored::StoredDoc;
use crate::tree::{Node, RevTree};
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::Response;
use deadpool_postgres::Object;
use palimpsest_web::AppState;
use palimpsest_web::content::ContentStore;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Deserialize)]
struct BulkGet {
    docs: Vec<Value>,
}

/// One `docs` entry of `_bulk_get` as CouchDB reads it: `id`, an optional `rev`, and the
/// optional `atts_since` revisions the client already holds.
struct Wanted {
    id: String,
    rev: Option<String>,
    atts_since: Option<Vec<RevId>>,
}

/// An entry refused before any lookup: the id and rev as sent (JSON), the error and reason.
type Refusal = (Value, Value, &'static str, String);

fn wanted(entry: &Value) -> Result<Wanted, Refusal> {
    let Some(id) = entry.get("id").and_then(Value::as_str) else {
        let id = entry.get("id").cloned().unwrap_or(Value::Null);
        return Err((id, Value::Null, "bad_request", "document id missed".into()));
    };
    let refused = |rev: &Value, reason: String| (json!(id), rev.clone(), "bad_request", reason);
    let rev = match entry.get("rev") {
        None | Some(Value::Null) => None,
        Some(Value::String(rev)) => match RevId::parse(rev) {
            Ok(_) => Some(rev.clone()),
            Err(e) => return Err(refused(&json!(rev), e.to_string())),
        },
        Some(other) => return Err(refused(other, "Invalid rev format".into())),
    };
    let atts_since = match entry.get("atts_since") {
        None | Some(Value::Null) => None,
        Some(Value::Array(revs)) if revs.is_empty() => None,
        Some(Value::Array(revs)) => Some(
            revs.iter()
                .map(|r| {
                    r.as_str()
                        .and_then(|t| RevId::parse(t).ok())
                        .ok_or_else(|| refused(r, "Invalid rev format".into()))
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(other) => {
            return Err(refused(
                other,
                "att_since value must be array of revs.".into(),
            ));
        }
    };
    Ok(Wanted {
        id: id.to_owned(),
        rev,
        atts_since,
    })
}

/// What `_bulk_get` answers for one revision asked for.
enum Answer {
    /// The revision: its rev, its JSON and the attachments whose bytes follow it.
    Doc {
        rev: String,
        json: String,
        following: Vec<Following>,
    },
    /// The document or the revision is not there.
    Missing { rev: String },
    /// Refused: the rev as sent, the error and reason.
    Failed {
        rev: Value,
        error: &'static str,
        reason: String,
    },
}

/// Query parameters `_bulk_get` refuses, as CouchDB does: each entry says its own.
const NOT_ACCEPTABLE: [&str; 5] = ["open_revs", "new_edits", "w", "rev", "atts_since"];

/// How the revisions of one request are read out.
struct Reading<'a> {
    /// The specials asked for (`revs`, `attachments`, …).
    show: Show,
    /// `latest=true`.
    latest: bool,
    /// How carried attachments travel (inline for JSON, following parts for multipart).
    carry: Carry,
    /// The bytes of the attachments that may be carried, by `md5-` digest.
    atts: &'a Atts,
}

impl Reading<'_> {
    /// Whether an entry's attachments carry their bytes.
    fn carries(&self, wanted: &Wanted) -> bool {
        self.show.attachments || wanted.atts_since.is_some()
    }

    /// The answers for a document the caller sees.
    fn visible(&self, wanted: &Wanted, tree: &RevTree) -> Vec<Answer> {
        let plain = Show {
            attachments: false,
            ..self.show
        };
        nodes(tree, wanted.rev.as_deref(), self.latest)
            .into_iter()
            .map(|found| {
                let node = match found {
                    Err(rev) => return Answer::Missing { rev },
                    Ok(node) => node,
                };
                let (json, following) = if self.carries(wanted) {
                    let held = wanted
                        .atts_since
                        .as_deref()
                        .map_or(0, |since| held_up_to(tree, node, since));
                    let (id, atts) = (&wanted.id, self.atts);
                    render_delivered(id, tree, node, plain, atts, held, self.carry)
                } else {
                    let json = render(&wanted.id, tree, node, plain, self.atts);
                    (json, Vec::new())
                };
                Answer::Doc {
                    rev: node.rev.to_string(),
                    json,
                    following,
                }
            })
            .collect()
    }
}

/// The answers for one entry the caller cannot see or the database lacks.
fn unseen(wanted: &Wanted, caller: &Caller, stored: Option<&StoredDoc>) -> Vec<Answer> {
    match stored {
        Some(doc) if caller.sees(&doc.sync) == Visibility::Removed => vec![Answer::Doc {
            rev: doc.sync.rev.clone(),
            json: auth::removed_doc(&wanted.id, &doc.sync.rev),
            following: Vec::new(),
        }],
        Some(_) => vec![Answer::Failed {
            rev: json!(wanted.rev),
            error: "forbidden",
            reason: "missing channel access".into(),
        }],
        None => vec![Answer::Missing {
            rev: wanted.rev.clone().unwrap_or_else(|| "undefined".into()),
        }],
    }
}

/// `POST /{db}/_bulk_get` `{docs: [{id, rev?, atts_since?}]}`: each revision asked for (every
/// leaf when no rev is given), with `revs`, `latest` and `attachments` honoured. The answer is
/// JSON (`{"results": [{"id", "docs": [{"ok": doc} | {"error": …}]}]}`) unless the client asks
/// for `multipart/mixed` and not JSON: then each revision is a part, its attachments following
/// it as parts of their own (see [`super::multipart`]). The entries are read and answered a few
/// at a time, written as they are answered ([`super::streaming`]).
pub async fn bulk_get(
    State(state): State<AppState>,
    Path(db): Path<String>,
    Query(params): Query<Params>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, CouchError> {
    if let Some(name) = NOT_ACCEPTABLE.iter().find(|n| params.contains_key(**n)) {
        return Err(CouchError::bad_request(format!(
            "\"{name}\" query parameter is not acceptable"
        )));
    }
    let request: BulkGet = serde_json::from_slice(&body)
        .map_err(|e| CouchError::bad_request(format!("expected {{\"docs\": [...]}}: {e}")))?;
    drop(body);
    let (show, latest) = (show(&params)?, flag(&params, "latest")?);
    let multipart = multipart::asked(&headers);
    let client = read::client(&state).await?;
    read::database(&client, &db).await?;
    let caller = auth::caller(&state, &client, &db, &headers).await?;
    let entries: Vec<Result<Wanted, Refusal>> = request.docs.iter().map(wanted).collect();
    drop(request);
    let batch = Batch {
        attachments: scope::attachments()?,
        client,
        db,
        caller,
        show,
        latest,
    };
    Ok(match multipart {
        Some(kind) => {
            let outer = multipart::Outer::new();
            let content_type =
                HeaderValue::from_str(&outer.content_type(kind)).map_err(CouchError::internal)?;
            streaming::respond("_bulk_get", content_type, move |mut out| async move {
                let mut parts = 0usize;
                for some in entries.chunks(ENTRIES_PER_READ) {
                    for (id, answers) in batch.answer(some, Carry::Follows).await? {
                        for answer in answers {
                            out.push_bytes(&outer.part(&part(&id, answer))).await?;
                            parts += 1;
                        }
                    }
                }
                if parts > 0 {
                    out.push(&outer.end()).await?;
                }
                Ok(out)
            })
        }
        None => streaming::json("_bulk_get", move |mut out| async move {
            out.push("{\"results\":[").await?;
            let mut first = true;
            for some in entries.chunks(ENTRIES_PER_READ) {
                for (id, answers) in batch.answer(some, Carry::Inline).await? {
                    if !first {
                        out.push(",").await?;
                    }
                    first = false;
                    out.push(&json_result(&id, &answers)).await?;
                }
            }
            out.push("]}").await?;
            Ok(out)
        }),
    })
}

/// Entries answered per read of the read model (their documents and carried attachments are
/// held at once).
const ENTRIES_PER_READ: usize = 50;

/// What a `_bulk_get` answers with: the caller, its connection, and what it asked.
struct Batch {
    attachments: Arc<ContentStore>,
    client: Object,
    db: String,
    caller: Caller,
    show: Show,
    latest: bool,
}

impl Batch {
    /// The answers for some of the entries, in their order.
    async fn answer(
        &self,
        entries: &[Result<Wanted, Refusal>],
        carry: Carry,
    ) -> Result<Vec<(Value, Vec<Answer>)>, CouchError> {
        let ids: Vec<String> = entries
            .iter()
            .filter_map(|e| e.as_ref().ok().map(|w| w.id.clone()))
            .collect();
        let stored = load_many(&self.client, &self.db, &ids).await?;
        let mut trees = HashMap::new();
        for (id, doc) in &stored {
            let tree = crate::access::revisions::readable_tree(&self.caller, doc)?;
            if self.caller.sees(&doc.sync) == Visibility::Visible
                || crate::access::revisions::any_readable(&tree)
            {
                trees.insert(id.clone(), tree);
            }
        }
        let atts = self.carried(entries, &trees).await?;
        let reading = Reading {
            show: self.show,
            latest: self.latest,
            carry,
            atts: &atts,
        };
        Ok(entries
            .iter()
            .map(|entry| match entry {
                Err((id, rev, error, reason)) => (
                    id.clone(),
                    vec![Answer::Failed {
                        rev: rev.clone(),
                        error,
                        reason: reason.clone(),
                    }],
                ),
                Ok(wanted) => {
                    let answers = match trees.get(&wanted.id) {
                        Some(tree) => reading.visible(wanted, tree),
                        None => unseen(wanted, &self.caller, stored.get(&wanted.id)),
                    };
                    (json!(wanted.id), answers)
                }
            })
            .collect())
    }

    /// The bytes of the attachments the entries' revisions carry.
    async fn carried(
        &self,
        entries: &[Result<Wanted, Refusal>],
        trees: &HashMap<String, RevTree>,
    ) -> Result<Atts, CouchError> {
        let carried = |w: &&Wanted| self.show.attachments || w.atts_since.is_some();
        let bodies: Vec<&str> = entries
            .iter()
            .filter_map(|e| e.as_ref().ok())
            .filter(carried)
            .filter_map(|w| trees.get(&w.id).map(|tree| (w, tree)))
            .flat_map(|(w, tree)| nodes(tree, w.rev.as_deref(), self.latest))
            .filter_map(|n| n.ok().and_then(|n| n.body.as_deref()))
            .collect();
        if bodies.is_empty() {
            return Ok(Atts::new());
        }
        let digests = crate::delivery::digests(bodies.into_iter());
        read::attachment_data(&self.attachments, &self.client, &digests).await
    }
}

/// The nodes a `_bulk_get` entry names: `rev` (with `latest`, the leaves descending from it),
/// or every leaf; a rev not held (or whose body was pruned) is `Err(rev)`.
pub(super) fn nodes<'t>(
    tree: &'t RevTree,
    rev: Option<&str>,
    latest: bool,
) -> Vec<Result<&'t Node, String>> {
    let Some(rev) = rev else {
        return tree.leaves().filter(|n| n.body.is_some()).map(Ok).collect();
    };
    let found: Vec<&Node> = match RevId::parse(rev)
        .ok()
        .and_then(|r| tree.get(&r).map(|n| (r, n)))
    {
        Some((parsed, node)) if latest && node.children > 0 => tree.leaves_under(&parsed),
        Some((_, node)) => vec![node],
        None => Vec::new(),
    };
    let found: Vec<_> = found.into_iter().filter(|n| n.body.is_some()).collect();
    if found.is_empty() {
        return vec![Err(rev.to_owned())];
    }
    found.into_iter().map(Ok).collect()
}

/// The nodes `open_revs` names, each revision once: with `latest`, several named revisions of
/// one branch answer its leaf once, as CouchDB answers them.
pub(super) fn open_nodes<'t>(
    tree: &'t RevTree,
    revs: &[String],
    latest: bool,
) -> Vec<Result<&'t Node, String>> {
    let mut seen = std::collections::HashSet::new();
    revs.iter()
        .flat_map(|rev| nodes(tree, Some(rev), latest))
        .filter(|found| match found {
            Ok(node) => seen.insert(node.rev.clone()),
            Err(_) => true,
        })
        .collect()
}

/// One entry's `{"id", "docs": [...]}` object.
fn json_result(id: &Value, answers: &[Answer]) -> String {
    let mut out = String::from("{\"id\":");
    out.push_str(&id.to_string());
    out.push_str(",\"docs\":[");
    for (j, answer) in answers.iter().enumerate() {
        if j > 0 {
            out.push(',');
        }
        match answer {
            Answer::Doc { json, .. } => {
                out.push_str("{\"ok\":");
                out.push_str(json);
                out.push('}');
            }
            Answer::Missing { rev } => out.push_str(
                &json!({"error": {"id": id, "rev": rev, "error": "not_found", "reason": "missing"}})
                    .to_string(),
            ),
            Answer::Failed { rev, error, reason } => out.push_str(
                &json!({"error": {"id": id, "rev": rev, "error": error, "reason": reason}})
                    .to_string(),
            ),
        }
    }
    out.push_str("]}");
    out
}

/// One answer as a multipart part.
fn part(id: &Value, answer: Answer) -> Part {
    match answer {
        Answer::Doc {
            rev,
            json,
            following,
        } => Part::Doc {
            id: id.as_str().unwrap_or_default().to_owned(),
            rev,
            json,
            following,
        },
        Answer::Missing { rev } => {
            Part::Error(json!({"rev": rev, "error": "not_found", "reason": "missing"}).to_string())
        }
        Answer::Failed { rev, error, reason } => {
            Part::Error(json!({"id": id, "rev": rev, "error": error, "reason": reason}).to_string())
        }
    }
}
