//! Automatic zombie retention: with a retention set, the server itself purges zombies and `del`
//! rows once they are older than it, and leaves live documents and young zombies alone.

mod common;

use common::Records;
use palimpsest_records::settings::Settings;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn zombies_older_than_the_retention_are_purged_by_the_server() {
    let r = Records::start_with(Settings {
        zombie_retention_ms: Some(300),
        retention_every_ms: 100,
        ..Settings::default()
    })
    .await;
    let gone = r
        .ok(
            "insertDoc",
            json!({"org": "demo", "data": {"clazz": "Article", "p1": "gone", "auteur": "Hugo"}}),
        )
        .await;
    let kept = r
        .ok(
            "insertDoc",
            json!({"org": "demo", "data": {"clazz": "Article", "p1": "kept", "auteur": "Hugo"}}),
        )
        .await;
    let gone_pk = gone["pk"].as_str().expect("pk").to_owned();
    r.ok(
        "deleteDoc",
        json!({"org": "demo", "cl": "Article", "pk": gone_pk}),
    )
    .await;
    let zombie = r
        .rows(&format!(
            "SELECT x FROM records.\"Article\" WHERE pk = '{gone_pk}'"
        ))
        .await;
    assert_eq!(zombie, vec![json!({"x": 1})], "a zombie first");

    let mut waited = Duration::ZERO;
    loop {
        let left = r
            .rows(&format!(
                "SELECT pk FROM records.\"Article\" WHERE pk = '{gone_pk}'"
            ))
            .await;
        if left.is_empty() {
            break;
        }
        assert!(
            waited < Duration::from_secs(20),
            "the zombie was never purged"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += Duration::from_millis(100);
    }
    let live = r
        .ok(
            "getDoc",
            json!({"org": "demo", "cl": "Article", "pk": kept["pk"]}),
        )
        .await;
    assert_eq!(live["p1"], "kept", "a live document stays");
    let actors = r.actors_after(0).await;
    assert!(
        actors.iter().any(|a| a == "system:retention"),
        "the purge names the retention: {actors:?}"
    );
    assert!(
        actors
            .iter()
            .all(|a| a == "admin" || a == "system:retention"),
        "every event names who caused it: {actors:?}"
    );
    r.stop().await;
}

#[tokio::test]
async fn without_a_retention_zombies_stay() {
    let r = Records::start_with(Settings {
        retention_every_ms: 50,
        ..Settings::default()
    })
    .await;
    let doc = r
        .ok(
            "insertDoc",
            json!({"org": "demo", "data": {"clazz": "Article", "p1": "z", "auteur": "Hugo"}}),
        )
        .await;
    r.ok(
        "deleteDoc",
        json!({"org": "demo", "cl": "Article", "pk": doc["pk"]}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let rows = r
        .rows("SELECT x FROM records.\"Article\" WHERE x = 1")
        .await;
    assert_eq!(rows.len(), 1, "the zombie is still there");
    r.stop().await;
}
