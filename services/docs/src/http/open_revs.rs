//! `GET /{db}/{doc}?open_revs=…` answered as `multipart/mixed` for a replicator that names it in
//! `Accept` (CouchDB's replicator fetches revisions this way when `_bulk_get` is not used):
//! each revision a part, its carried attachments following it ([`super::multipart`]), a revision
//! not held an `application/json; error="true"` part `{"missing": rev}`.

use super::bulk_get::open_nodes;
use super::multipart::{self, Part};
use super::render::{Atts, Show, render, render_delivered};
use crate::command::Reply;
use crate::delivery::{Carry, held_up_to};
use crate::rev::RevId;
use crate::tree::RevTree;
use axum::http::StatusCode;

/// What an `open_revs` read asks for.
pub struct Asked<'a> {
    /// The revisions named (`all`: every leaf, already listed).
    pub revs: &'a [String],
    /// `latest=true`.
    pub latest: bool,
    /// The specials asked for; `attachments` carries every attachment's bytes.
    pub show: Show,
    /// `atts_since`: the revisions whose attachments the client holds.
    pub since: Option<&'a [RevId]>,
}

/// The multipart answer for `doc_id`'s revisions `asked.revs`.
pub fn multipart_reply(doc_id: &str, tree: &RevTree, asked: &Asked<'_>, atts: &Atts) -> Reply {
    let carries = asked.show.attachments || asked.since.is_some();
    let plain = Show {
        attachments: false,
        ..asked.show
    };
    let mut parts = Vec::new();
    for found in open_nodes(tree, asked.revs, asked.latest) {
        parts.push(match found {
            Err(rev) => Part::Error(serde_json::json!({ "missing": rev }).to_string()),
            Ok(node) => {
                let (json, following) = if carries {
                    let held = asked.since.map_or(0, |since| held_up_to(tree, node, since));
                    render_delivered(doc_id, tree, node, plain, atts, held, Carry::Follows)
                } else {
                    (render(doc_id, tree, node, plain, atts), Vec::new())
                };
                Part::Doc {
                    id: doc_id.to_owned(),
                    rev: node.rev.to_string(),
                    json,
                    following,
                }
            }
        });
    }
    let (content_type, body) = multipart::body("multipart/mixed", &parts);
    Reply::new(StatusCode::OK, content_type, body)
}
