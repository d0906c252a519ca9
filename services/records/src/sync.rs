//! The session rules of incremental sync, as a client applies them (spec, "Collections:
//! mises à jour incrémentales en sessions"). The server does not run this: it is the reference a
//! client follows, and what the tests use to check that following it converges with the store.
//!
//! A session keeps one memory of documents (by pk, each with its version) and one per
//! collection (`v` and its pks). Applying a collection's answer: a row not newer than the
//! document in memory is ignored; a plus row replaces the document; a minus row puts the bare
//! document (no data) in memory if it is newer (at equal versions the plus row wins); then the document is in the collection if and
//! only if the document in memory belongs to it. The collection's `v` becomes the answer's.

use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// A document as the session holds it: version and data (`None` after a minus row).
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    /// Its version.
    pub v: i64,
    /// Its data, if a plus row brought it.
    pub data: Option<Value>,
}

/// One collection in the session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Collection {
    /// The version to ask from next (0: never loaded).
    pub v: i64,
    /// Its documents.
    pub pks: BTreeSet<String>,
}

/// A client session.
#[derive(Debug, Clone, Default)]
pub struct Session {
    /// Documents by pk.
    pub docs: HashMap<String, Held>,
    /// Collections by name (`Article/auteur/Hugo`).
    pub collections: HashMap<String, Collection>,
}

impl Session {
    /// The version to ask collection `name` from.
    pub fn since(&self, name: &str) -> i64 {
        self.collections.get(name).map(|c| c.v).unwrap_or(0)
    }

    /// Applies a list answer (`{"rows": [...], "v": next}`) for collection `name`, whose
    /// membership `belongs` tells from a document's data.
    pub fn apply(&mut self, name: &str, answer: &Value, belongs: impl Fn(&Value) -> bool) {
        let rows = answer["rows"].as_array().cloned().unwrap_or_default();
        let mut collection = self.collections.remove(name).unwrap_or_default();
        for row in rows {
            let (Some(pk), Some(v)) = (row["pk"].as_str(), row["v"].as_i64()) else {
                continue;
            };
            let plus = row["del"].as_i64() != Some(1);
            // Newer wins; at the same version a plus row wins over a minus row (the spec keeps
            // the row of x = 0 or 1 when several remain).
            let newer = self
                .docs
                .get(pk)
                .is_none_or(|held| v > held.v || (v == held.v && plus && held.data.is_none()));
            if newer {
                let data = plus.then(|| row["data"].clone());
                self.docs.insert(pk.to_owned(), Held { v, data });
            }
            let member = self
                .docs
                .get(pk)
                .and_then(|h| h.data.as_ref())
                .is_some_and(&belongs);
            if member {
                collection.pks.insert(pk.to_owned());
            } else {
                collection.pks.remove(pk);
            }
        }
        if let Some(next) = answer["v"].as_i64() {
            collection.v = next;
        }
        self.collections.insert(name.to_owned(), collection);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn by_hugo(data: &Value) -> bool {
        data["auteur"] == "Hugo" && data["x"] == 0
    }

    #[test]
    fn a_minus_row_takes_the_document_out_and_an_older_plus_row_does_not_bring_it_back() {
        let mut s = Session::default();
        s.apply("hugo", &json!({"rows": [{"pk": "a", "v": 10, "x": 0, "del": 0, "data": {"auteur": "Hugo", "x": 0}}], "v": 5}), by_hugo);
        assert!(s.collections["hugo"].pks.contains("a"));
        s.apply(
            "hugo",
            &json!({"rows": [{"pk": "a", "v": 20, "x": 2, "del": 1}], "v": 15}),
            by_hugo,
        );
        assert!(!s.collections["hugo"].pks.contains("a"));
        s.apply("hugo", &json!({"rows": [{"pk": "a", "v": 10, "x": 0, "del": 0, "data": {"auteur": "Hugo", "x": 0}}], "v": 15}), by_hugo);
        assert!(
            !s.collections["hugo"].pks.contains("a"),
            "an update arriving twice is ignored"
        );
        assert_eq!(s.since("hugo"), 15);
    }

    #[test]
    fn a_plus_row_at_the_version_of_a_minus_row_wins() {
        let mut s = Session::default();
        s.apply(
            "hugo",
            &json!({"rows": [{"pk": "a", "v": 20, "x": 2, "del": 1}], "v": 15}),
            by_hugo,
        );
        s.apply("zola", &json!({"rows": [{"pk": "a", "v": 20, "x": 0, "del": 0, "data": {"auteur": "Zola", "x": 0}}], "v": 15}), |d| d["auteur"] == "Zola");
        assert!(s.collections["zola"].pks.contains("a"));
    }

    #[test]
    fn a_zombie_leaves_the_collection() {
        let mut s = Session::default();
        s.apply("hugo", &json!({"rows": [{"pk": "a", "v": 10, "x": 0, "del": 0, "data": {"auteur": "Hugo", "x": 0}}], "v": 5}), by_hugo);
        s.apply(
            "hugo",
            &json!({"rows": [{"pk": "a", "v": 11, "x": 1, "del": 0, "data": {"x": 1}}], "v": 6}),
            by_hugo,
        );
        assert!(s.collections["hugo"].pks.is_empty());
    }
}
