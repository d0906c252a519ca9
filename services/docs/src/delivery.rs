//! How a revision's attachments go out to a client: as stubs, with their data inline (base64
//! in the JSON), or as stubs marked `"follows": true` whose bytes travel as the parts after the
//! JSON in a `multipart/related` body.
//!
//! CouchDB's `atts_since` rule decides which attachments carry their bytes: the client names
//! revisions it already holds; the newest of them on the revision's own path (the revision
//! itself included) has generation `N`, and only attachments whose `revpos` is above `N` are
//! sent whole, the others as stubs (the client has them). No named revision on the path: `N`
//! is 0 and everything is sent. Attachments whose bytes are unknown stay stubs.

use crate::attachments::stubs;
use crate::body::Members;
use crate::rev::RevId;
use crate::tree::{Node, RevTree};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use std::collections::HashMap;

/// How attachments that carry their bytes are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carry {
    /// `"data": base64` in the JSON.
    Inline,
    /// `"follows": true` in the JSON, the bytes in a part of their own.
    Follows,
}

/// An attachment whose bytes follow the JSON, in the order of the `_attachments` members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Following {
    /// Its name.
    pub name: String,
    /// Its media type.
    pub content_type: String,
    /// Its bytes.
    pub data: Vec<u8>,
}

/// The generation below which `node`'s attachments are already held by a client that holds
/// the revisions `since`: the newest of them on `node`'s path, 0 when none is.
pub fn held_up_to(tree: &RevTree, node: &Node, since: &[RevId]) -> u64 {
    tree.path(&node.rev)
        .iter()
        .find(|n| since.contains(&n.rev))
        .map_or(0, |n| n.rev.generation)
}

/// `body` with the attachments whose `revpos` is above `held` carrying their bytes (from `data`,
/// by `md5-` digest) as `carry` says, the others as stubs; and, for [`Carry::Follows`], the
/// attachments whose bytes follow.
pub fn deliver(
    body: &str,
    data: &HashMap<String, Vec<u8>>,
    held: u64,
    carry: Carry,
) -> (String, Vec<Following>) {
    let Ok(mut members) = serde_json::from_str::<Members>(body) else {
        return (body.to_owned(), Vec::new());
    };
    let Some(slot) = members.0.iter().position(|(k, _)| k == "_attachments") else {
        return (body.to_owned(), Vec::new());
    };
    let mut entries: Vec<_> = stubs(body).into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = serde_json::Map::new();
    let mut following = Vec::new();
    for (name, stub) in entries {
        let bytes = (stub.revpos > held)
            .then(|| data.get(&stub.digest))
            .flatten();
        let value = match (bytes, carry) {
            (None, _) => serde_json::to_value(&stub).unwrap_or_default(),
            (Some(bytes), Carry::Inline) => serde_json::json!({
                "content_type": stub.content_type, "digest": stub.digest, "length": stub.length,
                "revpos": stub.revpos, "data": STANDARD.encode(bytes)
            }),
            (Some(bytes), Carry::Follows) => {
                following.push(Following {
                    name: name.clone(),
                    content_type: stub.content_type.clone(),
                    data: bytes.clone(),
                });
                serde_json::json!({
                    "content_type": stub.content_type, "digest": stub.digest, "length": stub.length,
                    "revpos": stub.revpos, "follows": true
                })
            }
        };
        out.insert(name, value);
    }
    match serde_json::value::to_raw_value(&out) {
        Ok(value) => members.0[slot].1 = value,
        Err(e) => tracing::error!(error = %e, "attachments did not serialise"),
    }
    (members.to_json(), following)
}

/// The `md5-` digests of the attachments of these bodies.
pub fn digests<'a>(bodies: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = bodies
        .filter(|body| body.contains("\"_attachments\""))
        .flat_map(|body| stubs(body).into_values().map(|s| s.digest))
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(text: &str) -> RevId {
        RevId::parse(text).expect("valid")
    }

    const BODY: &str = r#"{"a":1,"_attachments":{"old":{"content_type":"text/plain","digest":"md5-o","length":1,"revpos":1,"stub":true},"new":{"content_type":"image/png","digest":"md5-n","length":2,"revpos":3,"stub":true}}}"#;

    fn data() -> HashMap<String, Vec<u8>> {
        HashMap::from([
            ("md5-o".to_owned(), b"o".to_vec()),
            ("md5-n".to_owned(), b"nn".to_vec()),
        ])
    }

    fn tree() -> RevTree {
        let mut tree = RevTree::default();
        tree.insert(rev("1-a"), &[], "{}".into(), false);
        tree.insert(rev("2-b"), &[rev("1-a")], "{}".into(), false);
        tree.insert(rev("3-c"), &[rev("2-b"), rev("1-a")], BODY.into(), false);
        tree.insert(rev("2-x"), &[rev("1-a")], "{}".into(), false);
        tree
    }

    #[test]
    fn the_newest_held_revision_on_the_path_sets_what_is_held() {
        let tree = tree();
        let leaf = tree.get(&rev("3-c")).expect("leaf");
        assert_eq!(held_up_to(&tree, leaf, &[rev("2-b"), rev("1-a")]), 2);
        assert_eq!(held_up_to(&tree, leaf, &[rev("1-a")]), 1);
        assert_eq!(held_up_to(&tree, leaf, &[rev("2-x")]), 0, "not on the path");
        assert_eq!(held_up_to(&tree, leaf, &[]), 0);
        assert_eq!(
            held_up_to(&tree, leaf, &[rev("3-c")]),
            3,
            "the revision itself"
        );
    }

    #[test]
    fn attachments_newer_than_what_is_held_carry_their_bytes_older_ones_are_stubs() {
        let (body, following) = deliver(BODY, &data(), 2, Carry::Inline);
        assert!(following.is_empty());
        assert_eq!(
            body,
            r#"{"a":1,"_attachments":{"new":{"content_type":"image/png","data":"bm4=","digest":"md5-n","length":2,"revpos":3},"old":{"content_type":"text/plain","digest":"md5-o","length":1,"revpos":1,"stub":true}}}"#
        );
        let (body, _) = deliver(BODY, &data(), 0, Carry::Inline);
        assert!(body.contains(r#""data":"bw==""#), "{body}");
    }

    #[test]
    fn following_attachments_are_marked_and_listed_in_name_order() {
        let (body, following) = deliver(BODY, &data(), 0, Carry::Follows);
        assert_eq!(
            body,
            r#"{"a":1,"_attachments":{"new":{"content_type":"image/png","digest":"md5-n","follows":true,"length":2,"revpos":3},"old":{"content_type":"text/plain","digest":"md5-o","follows":true,"length":1,"revpos":1}}}"#
        );
        let names: Vec<&str> = following.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["new", "old"]);
        assert_eq!(following[0].data, b"nn");
        let (_, none) = deliver(BODY, &HashMap::new(), 0, Carry::Follows);
        assert!(none.is_empty(), "unknown bytes stay stubs");
    }
}
