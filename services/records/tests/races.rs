//! Concurrent writers: unique values (org and global scope) go to one of them; REGVER is
//! retried with a new time.

mod common;

use common::Records;
use palimpsest_records::settings::{Clock, Settings};
use reqwest::StatusCode;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

async fn race(r: &Records, orgs: [&str; 2], index: &str) -> Vec<(StatusCode, serde_json::Value)> {
    let calls = (0..8).map(|i| {
        let org = orgs[i % 2];
        r.admin_call(
            "insertDoc",
            json!({"org": org, "data": {"clazz": "Article", "p1": format!("d{i}"), index: "same"}}),
        )
    });
    futures::future::join_all(calls).await
}

#[tokio::test]
async fn two_writers_of_one_unique_value_one_wins_in_org_scope() {
    let r = Records::start().await;
    let results = race(&r, ["demo", "demo"], "code").await;
    let won = results.iter().filter(|(s, _)| *s == StatusCode::OK).count();
    assert_eq!(won, 1, "{results:?}");
    assert!(
        results
            .iter()
            .filter(|(s, _)| *s != StatusCode::OK)
            .all(|(s, b)| *s == StatusCode::CONFLICT && b["error"]["code"] == "UNIQUE"),
        "{results:?}"
    );
    r.stop().await;
}

#[tokio::test]
async fn two_writers_of_one_unique_value_one_wins_in_global_scope_across_orgs() {
    let r = Records::start().await;
    let results = race(&r, ["demo", "other"], "isbn").await;
    let won = results.iter().filter(|(s, _)| *s == StatusCode::OK).count();
    assert_eq!(won, 1, "{results:?}");
    let org_scope = race(&r, ["a", "b"], "code").await;
    let won = org_scope
        .iter()
        .filter(|(s, _)| *s == StatusCode::OK)
        .count();
    assert_eq!(
        won, 2,
        "an O index is unique per organisation: {org_scope:?}"
    );
    r.stop().await;
}

#[tokio::test]
async fn regver_is_retried_with_a_new_time() {
    // A clock that went back 5 ms after the first write: the update finds v >= its time.
    let ticks = Arc::new(AtomicI64::new(1_000_000));
    let clock: Clock = {
        let ticks = ticks.clone();
        Arc::new(move || ticks.fetch_add(1, Ordering::SeqCst))
    };
    let r = Records::start_with(Settings {
        clock,
        ..Settings::default()
    })
    .await;
    let a1 = r
        .ok(
            "insertDoc",
            json!({"org": "demo", "data": {"clazz": "Article", "p1": "a1"}}),
        )
        .await;
    let v = a1["v"].as_i64().expect("v");
    ticks.store(v - 5, Ordering::SeqCst);
    let updated = r
        .ok(
            "updateDoc",
            json!({"org": "demo", "v": v, "data": {"clazz": "Article", "p1": "a1"}}),
        )
        .await;
    assert!(
        updated["v"].as_i64().expect("v") > v,
        "the version never regresses: {updated}"
    );
    ticks.store(v - 100_000, Ordering::SeqCst);
    let stuck = r
        .ok(
            "getDoc",
            json!({"org": "demo", "cl": "Article", "pk": a1["pk"]}),
        )
        .await;
    let (status, body) = r
        .admin_call(
            "updateDoc",
            json!({"org": "demo", "v": stuck["v"], "data": {"clazz": "Article", "p1": "a1"}}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::CONFLICT, json!("REGVER")),
        "{body}"
    );
    r.stop().await;
}

/// A creation is decided without reading its document first (it expects it absent); when the
/// document exists after all, the answer is still the one the stored document gives (`EXISTS`),
/// never a refusal decided on the guess (here `UNIQUE`: as if new, it would claim a value
/// another document holds).
#[tokio::test]
async fn creating_an_existing_document_is_exists_even_when_the_guess_would_refuse_otherwise() {
    let r = Records::start().await;
    r.ok(
        "insertDoc",
        json!({"org": "demo", "data": {"clazz": "Article", "p1": "a1", "code": "x"}}),
    )
    .await;
    r.ok(
        "insertDoc",
        json!({"org": "demo", "data": {"clazz": "Article", "p1": "a2", "code": "y"}}),
    )
    .await;
    let (status, body) = r
        .admin_call(
            "insertDoc",
            json!({"org": "demo", "data": {"clazz": "Article", "p1": "a1", "code": "y"}}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::CONFLICT, json!("EXISTS")),
        "{body}"
    );
    r.stop().await;
}
