//! Key rotation: after the site key changes, rotateKey reseals everything by new events, and
//! the new key alone opens every row.

mod common;

use common::Records;
use palimpsest_records::seal::SiteKey;
use palimpsest_records::settings::Settings;
use palimpsest_testkit::TestApp;
use serde_json::json;

#[tokio::test]
async fn rotate_key_reseals_rows_and_tasks_so_the_new_key_alone_opens_them() {
    let old = "0a".repeat(32);
    let new = "0b".repeat(32);
    let r = Records::start_with(Settings {
        site_key: Some(SiteKey::from_hex(&old).expect("old")),
        ..Settings::default()
    })
    .await;
    let a1 = r
        .ok(
            "insertDoc",
            json!({"org": "demo", "data": {"clazz": "Article", "p1": "a1", "auteur": "Hugo"}}),
        )
        .await;
    r.ok("updateDoc", json!({"org": "demo", "v": a1["v"], "data": {"clazz": "Article", "p1": "a1", "auteur": "Zola"}})).await;
    r.ok(
        "insertDoc",
        json!({"org": "demo", "data": {"clazz": "Article", "p1": "a2"}}),
    )
    .await;
    r.ok("setTask", json!({"org": "demo", "data": {"process": "P", "pk": ["a1"], "startTime": "20300101000000000"}})).await;

    // The same store served by a second process with the new key, the old one kept as
    // previous.
    let rotated = SiteKey::from_hex(&new)
        .and_then(|k| k.with_previous([old.as_str()]))
        .expect("keys");
    let second = TestApp::builder()
        .database_of(&r.app)
        .without_projectors()
        .records(Settings {
            site_key: Some(rotated),
            ..Settings::default()
        })
        .start()
        .await;
    let base = second.url("/records");
    let admin = second.admin_token();
    let call = |function: &str, body: serde_json::Value| {
        r.http
            .post(format!("{base}/api/{function}"))
            .bearer_auth(&admin)
            .json(&body)
            .send()
    };
    let before: serde_json::Value = call(
        "getDoc",
        json!({"org": "demo", "cl": "Article", "pk": a1["pk"]}),
    )
    .await
    .expect("get")
    .json()
    .await
    .expect("json");
    assert_eq!(
        before["result"]["auteur"], "Zola",
        "the old key still opens: {before}"
    );
    let head = r.state.store.head_position().await.expect("head");
    let rotation: serde_json::Value = call("rotateKey", json!({}))
        .await
        .expect("rotate")
        .json()
        .await
        .expect("json");
    assert_eq!(
        rotation["result"]["resealed"], 3,
        "two documents and a task: {rotation}"
    );
    assert!(
        r.state.store.head_position().await.expect("head") > head,
        "by new events"
    );

    let only_new = SiteKey::from_hex(&new).expect("new");
    let rows = r
        .state
        .read
        .get()
        .await
        .expect("client")
        .query(
            "SELECT data FROM records.\"Article\" UNION ALL SELECT data FROM records.\"Task\"",
            &[],
        )
        .await
        .expect("rows");
    assert_eq!(rows.len(), 4, "two rows, a del row, a task");
    for row in rows {
        let sealed: Vec<u8> = row.get(0);
        assert!(only_new.open_bytes(&sealed).is_ok());
    }
    let again: serde_json::Value = call("rotateKey", json!({}))
        .await
        .expect("rotate")
        .json()
        .await
        .expect("json");
    assert_eq!(again["result"]["resealed"], 0);
    second.stop().await;
    r.stop().await;
}
