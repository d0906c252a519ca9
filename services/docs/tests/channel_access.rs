//! Channel access on every read route a replicating user has: `_changes`, `_all_docs`,
//! `_bulk_get` and document reads, before and after each way access ends: the document leaves
//! the user's channels, and the grant that opened a channel is revoked. Either way the user's
//! `_changes` shows the document once as `removed`, and it then reads as `{"_removed": true}`.

mod common;

use common::Docs;
use serde_json::{Value, json};

const SYNC: &str = "function(doc) { channel(doc.channels); access(doc.grant_to, doc.grant); }";

/// What user `ann` sees of one document on each read route.
#[derive(Debug, PartialEq)]
struct Seen {
    /// In `_all_docs`.
    listed: bool,
    /// `_bulk_get`'s answer: `"ok"`, `"removed"` (a `_removed` stub), or the error's name.
    bulk: String,
    /// The document GET's status and whether it reads as `_removed`.
    read: (u16, bool),
}

async fn seen(docs: &Docs, id: &str) -> Seen {
    let (_, all) = docs
        .as_user("ann", "pw", "GET", "/db/_all_docs", None)
        .await;
    let listed = all["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .any(|row| row["id"] == id);
    let (_, bulk) = docs
        .as_user(
            "ann",
            "pw",
            "POST",
            "/db/_bulk_get",
            Some(json!({"docs": [{"id": id}]})),
        )
        .await;
    let answer = &bulk["results"][0]["docs"][0];
    let bulk = if answer["ok"]["_removed"] == json!(true) {
        "removed".to_owned()
    } else if answer["ok"].is_object() {
        "ok".to_owned()
    } else {
        answer["error"]["error"]
            .as_str()
            .unwrap_or("none")
            .to_owned()
    };
    let (status, body) = docs
        .as_user("ann", "pw", "GET", &format!("/db/{id}"), None)
        .await;
    Seen {
        listed,
        bulk,
        read: (status, body["_removed"] == json!(true)),
    }
}

/// The `_changes` entries for `id` after `since`, as ann sees them.
async fn changes_of(docs: &Docs, since: i64, id: &str) -> Vec<Value> {
    let (status, changes) = docs
        .as_user(
            "ann",
            "pw",
            "GET",
            &format!("/db/_changes?since={since}"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{changes}");
    changes["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|change| change["id"] == id)
        .cloned()
        .collect()
}

async fn put(docs: &Docs, id: &str, body: Value) -> String {
    let (status, answer) = docs
        .admin("PUT", &format!("/db/{id}"), &body.to_string())
        .await;
    assert_eq!(status, 201, "{answer}");
    let answer: Value = serde_json::from_str(&answer).expect("json");
    answer["rev"].as_str().expect("rev").to_owned()
}

async fn started() -> Docs {
    let docs = Docs::start().await;
    let config = json!({"sync": SYNC}).to_string();
    assert_eq!(docs.admin("PUT", "/_admin/db", &config).await.0, 201);
    let ann = json!({"password": "pw", "admin_channels": ["a"]}).to_string();
    assert_eq!(docs.admin("PUT", "/_admin/db/_user/ann", &ann).await.0, 200);
    docs
}

fn visible() -> Seen {
    Seen {
        listed: true,
        bulk: "ok".into(),
        read: (200, false),
    }
}

/// A document the user could read and can no longer: Sync Gateway's `_removed` stub.
fn removed() -> Seen {
    Seen {
        listed: false,
        bulk: "removed".into(),
        read: (200, true),
    }
}

fn forbidden() -> Seen {
    Seen {
        listed: false,
        bulk: "forbidden".into(),
        read: (403, false),
    }
}

#[tokio::test]
async fn a_document_outside_the_users_channels_is_hidden_on_every_route() {
    let docs = started().await;
    put(&docs, "in-a", json!({"channels": ["a"]})).await;
    put(&docs, "in-b", json!({"channels": ["b"]})).await;
    assert_eq!(seen(&docs, "in-a").await, visible());
    assert_eq!(seen(&docs, "in-b").await, forbidden());
    assert!(changes_of(&docs, 0, "in-b").await.is_empty());
    assert_eq!(changes_of(&docs, 0, "in-a").await.len(), 1);
    docs.stop().await;
}

#[tokio::test]
async fn a_document_that_leaves_the_users_channels_is_removed_once_then_hidden() {
    let docs = started().await;
    let rev = put(&docs, "moving", json!({"channels": ["a"]})).await;
    let since = docs.head().await;
    assert_eq!(seen(&docs, "moving").await, visible());
    put(&docs, "moving", json!({"_rev": rev, "channels": ["c"]})).await;
    let removal = changes_of(&docs, 0, "moving").await;
    assert_eq!(removal.len(), 1, "{removal:?}");
    assert_eq!(removal[0]["removed"], json!(["a"]));
    assert_eq!(changes_of(&docs, since, "moving").await.len(), 1);
    assert_eq!(seen(&docs, "moving").await, removed());
    docs.stop().await;
}

#[tokio::test]
async fn a_revoked_grant_closes_the_channel_on_every_route() {
    let docs = started().await;
    put(&docs, "in-b", json!({"channels": ["b"]})).await;
    assert_eq!(seen(&docs, "in-b").await, forbidden());
    let grant = put(&docs, "grant", json!({"grant_to": "ann", "grant": "b"})).await;
    assert_eq!(seen(&docs, "in-b").await, visible());
    let (_, changes) = docs.as_user("ann", "pw", "GET", "/db/_changes", None).await;
    let since = changes["last_seq"].as_i64().expect("last_seq");
    assert!(
        changes["results"]
            .as_array()
            .expect("results")
            .iter()
            .any(|change| change["id"] == "in-b"),
        "the grant backfills in-b: {changes}"
    );
    // The grant is revoked by deleting the document that made it.
    let (status, _) = docs
        .admin("DELETE", &format!("/db/grant?rev={grant}"), "")
        .await;
    assert_eq!(status, 200);
    assert_eq!(seen(&docs, "in-b").await, removed());
    let (_, all) = docs
        .as_user("ann", "pw", "GET", "/db/_all_docs", None)
        .await;
    assert!(
        !all.to_string().contains("in-b"),
        "nothing of in-b is listed: {all}"
    );
    let after = changes_of(&docs, since, "in-b").await;
    assert_eq!(after.len(), 1, "in-b is removed once: {after:?}");
    assert_eq!(after[0]["removed"], json!(["b"]));
    let (_, doc) = docs.as_user("ann", "pw", "GET", "/db/in-b", None).await;
    assert!(
        !doc.to_string().contains("channels"),
        "no body of in-b reaches ann after the revocation: {doc}"
    );
    docs.stop().await;
}
