//! A revision as a client sees it: `_id`, `_rev`, the body, and the specials it asked for.

use crate::body::Outgoing;
use crate::delivery::{Carry, Following, deliver};
use crate::tree::{Node, RevTree};
use serde_json::json;
use std::collections::HashMap;

/// Which specials to add (`revs`, `revs_info`, `conflicts`, `deleted_conflicts`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Show {
    /// `_revisions`.
    pub revs: bool,
    /// `_revs_info`.
    pub revs_info: bool,
    /// `_conflicts`.
    pub conflicts: bool,
    /// `_deleted_conflicts`.
    pub deleted_conflicts: bool,
    /// Attachments inline (`attachments=true`) rather than stubs.
    pub attachments: bool,
}

/// Attachment bytes by `md5-` digest, for `attachments=true`.
pub type Atts = HashMap<String, Vec<u8>>;

/// The JSON text of `node` of document `doc_id`.
pub fn render(doc_id: &str, tree: &RevTree, node: &Node, show: Show, atts: &Atts) -> String {
    let body = node.body.as_deref().unwrap_or("{}");
    let inlined;
    let body = if show.attachments && body.contains("\"_attachments\"") {
        inlined = crate::attachments::inline(body, atts);
        inlined.as_str()
    } else {
        body
    };
    with_specials(doc_id, tree, node, show, body)
}

/// The JSON text of `node` with the attachments newer than generation `held` carrying their
/// bytes as `carry` says (CouchDB's `atts_since`), and the attachments whose bytes follow.
pub fn render_delivered(
    doc_id: &str,
    tree: &RevTree,
    node: &Node,
    show: Show,
    atts: &Atts,
    held: u64,
    carry: Carry,
) -> (String, Vec<Following>) {
    let body = node.body.as_deref().unwrap_or("{}");
    if !body.contains("\"_attachments\"") {
        return (with_specials(doc_id, tree, node, show, body), Vec::new());
    }
    let (body, following) = deliver(body, atts, held, carry);
    (with_specials(doc_id, tree, node, show, &body), following)
}

/// `body` with `_id`, `_rev` and the specials `show` asks for.
fn with_specials(doc_id: &str, tree: &RevTree, node: &Node, show: Show, body: &str) -> String {
    let mut out = Outgoing::new(doc_id, &node.rev.to_string(), body);
    if node.deleted {
        out = out.member("_deleted", "true");
    }
    if show.revs {
        out = out.value("_revisions", &revisions(tree, node));
    }
    if show.revs_info {
        let info: Vec<_> = tree
            .path(&node.rev)
            .iter()
            .map(|n| {
                let status = if n.deleted {
                    "deleted"
                } else if n.body.is_some() {
                    "available"
                } else {
                    "missing"
                };
                json!({"rev": n.rev.to_string(), "status": status})
            })
            .collect();
        out = out.value("_revs_info", &info);
    }
    if show.conflicts {
        let conflicts: Vec<String> = tree.conflicts().iter().map(|n| n.rev.to_string()).collect();
        if !conflicts.is_empty() {
            out = out.value("_conflicts", &conflicts);
        }
    }
    if show.deleted_conflicts {
        let deleted: Vec<String> = tree
            .deleted_conflicts()
            .iter()
            .map(|n| n.rev.to_string())
            .collect();
        if !deleted.is_empty() {
            out = out.value("_deleted_conflicts", &deleted);
        }
    }
    out.finish()
}

/// `_revisions`: `{start, ids}` along the path while generations are consecutive.
pub fn revisions(tree: &RevTree, node: &Node) -> serde_json::Value {
    let mut ids = Vec::new();
    let mut expected = node.rev.generation;
    for n in tree.path(&node.rev) {
        if n.rev.generation != expected {
            break;
        }
        ids.push(n.rev.digest.clone());
        expected = expected.saturating_sub(1);
    }
    json!({"start": node.rev.generation, "ids": ids})
}
