//! Incremental sync from a client's point of view: plus rows, `del` rows, zombies, and the
//! version to store next.

mod common;

use common::Records;
use serde_json::{Value, json};

fn pks(list: &Value) -> Vec<(String, i64, i64)> {
    list["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    (
                        r["pk"].as_str().unwrap_or_default().to_owned(),
                        r["x"].as_i64().unwrap_or(-1),
                        r["del"].as_i64().unwrap_or(-1),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_document_moving_between_collections_tells_both_subscribers() {
    let r = Records::start().await;
    let a1 = r.ok("insertDoc", json!({"org": "demo", "data": {"clazz": "Article", "p1": "a1", "auteur": "Hugo", "auteurs": ["Victor", "Zola"]}})).await;
    let pk = a1["pk"].as_str().expect("pk").to_owned();
    let hugo = r
        .ok(
            "listDocsSk",
            json!({"org": "demo", "cl": "Article", "ik": 1, "val": "Hugo"}),
        )
        .await;
    assert_eq!(pks(&hugo), vec![(pk.clone(), 0, 0)]);
    let since = a1["v"].as_i64().expect("v");

    r.ok("updateDoc", json!({"org": "demo", "v": since, "data": {"clazz": "Article", "p1": "a1", "auteur": "Victor", "auteurs": ["Victor", "Hugo"]}})).await;

    let hugo = r
        .ok(
            "listDocsSk",
            json!({"org": "demo", "cl": "Article", "ik": 1, "val": "Hugo", "v": since}),
        )
        .await;
    assert_eq!(
        pks(&hugo),
        vec![(pk.clone(), 2, 1)],
        "the old collection gets the del row: {hugo}"
    );
    assert!(
        hugo["rows"][0].get("data").is_none(),
        "a minus row carries no data"
    );
    let victor = r
        .ok(
            "listDocsSk",
            json!({"org": "demo", "cl": "Article", "ik": 1, "val": "Victor", "v": since}),
        )
        .await;
    assert_eq!(
        pks(&victor),
        vec![(pk.clone(), 0, 0)],
        "the new one the plus row"
    );
    let zola = r
        .ok(
            "listDocsSk",
            json!({"org": "demo", "cl": "Article", "ik": 0, "val": "Zola", "v": since}),
        )
        .await;
    assert_eq!(
        pks(&zola),
        vec![(pk.clone(), 2, 1)],
        "a value removed from a list collection"
    );
    let still = r
        .ok(
            "listDocsSk",
            json!({"org": "demo", "cl": "Article", "ik": 0, "val": "Victor", "v": since}),
        )
        .await;
    assert_eq!(
        pks(&still),
        vec![(pk.clone(), 0, 0)],
        "a kept list value gets the plus row only"
    );
    let class = r
        .ok(
            "listDocs",
            json!({"org": "demo", "cl": "Article", "v": since}),
        )
        .await;
    assert_eq!(
        pks(&class),
        vec![(pk.clone(), 0, 0)],
        "class reads ignore del rows"
    );
    r.stop().await;
}

#[tokio::test]
async fn a_deleted_sync_document_reaches_subscribers_as_a_zombie() {
    let r = Records::start().await;
    let a1 = r.ok("insertDoc", json!({"org": "demo", "data": {"clazz": "Article", "p1": "a1", "auteur": "Hugo", "code": "C", "titre": "t"}})).await;
    let pk = a1["pk"].as_str().expect("pk").to_owned();
    let since = a1["v"].as_i64().expect("v");
    let zombie = r
        .ok(
            "deleteDoc",
            json!({"org": "demo", "cl": "Article", "pk": pk}),
        )
        .await;
    assert_eq!(zombie["x"], 1);
    let hugo = r
        .ok(
            "listDocsSk",
            json!({"org": "demo", "cl": "Article", "ik": 1, "val": "Hugo", "v": since}),
        )
        .await;
    assert_eq!(pks(&hugo), vec![(pk.clone(), 1, 0)]);
    let data = &hugo["rows"][0]["data"];
    assert_eq!(data["p1"], "a1");
    assert!(
        data.get("titre").is_none(),
        "a zombie keeps only the minimal properties: {data}"
    );
    // The unique value is free again.
    r.ok(
        "insertDoc",
        json!({"org": "demo", "data": {"clazz": "Article", "p1": "a2", "code": "C"}}),
    )
    .await;
    let row = r
        .rows(&format!(
            "SELECT x, z, v FROM records.\"Article\" WHERE pk = '{pk}'"
        ))
        .await;
    assert_eq!(row[0]["z"], row[0]["v"], "z is set on the zombie");
    r.stop().await;
}

#[tokio::test]
async fn a_list_answers_the_version_to_store_next_as_its_time_minus_delta() {
    let r = Records::start().await;
    let before = chrono::Utc::now().timestamp_millis();
    let list = r
        .ok("listDocs", json!({"org": "demo", "cl": "Article"}))
        .await;
    let after = chrono::Utc::now().timestamp_millis();
    let next = list["v"].as_i64().expect("v");
    assert!(
        next >= before - 10_000 && next <= after - 10_000,
        "{next} is t - DELTA"
    );
    r.stop().await;
}

#[tokio::test]
async fn zombies_and_del_rows_are_purged_after_their_retention_then_the_pk_is_free() {
    let r = Records::start().await;
    let a1 = r
        .ok(
            "insertDoc",
            json!({"org": "demo", "data": {"clazz": "Article", "p1": "a1", "auteur": "Hugo"}}),
        )
        .await;
    let a2 = r
        .ok(
            "insertDoc",
            json!({"org": "demo", "data": {"clazz": "Article", "p1": "a2", "auteur": "Hugo"}}),
        )
        .await;
    r.ok("updateDoc", json!({"org": "demo", "v": a2["v"], "data": {"clazz": "Article", "p1": "a2", "auteur": "Zola"}})).await;
    let zombie = r
        .ok(
            "deleteDoc",
            json!({"org": "demo", "cl": "Article", "pk": a1["pk"]}),
        )
        .await;
    let z = zombie["v"].as_i64().expect("v");
    let young = r.ok("purgeOrg", json!({"org": "demo", "z": z})).await;
    assert_eq!(young["purged"], 1, "only the older del row: {young}");
    assert_eq!(
        r.rows("SELECT pk FROM records.\"Article\"").await.len(),
        2,
        "the zombie is kept"
    );
    let old = r.ok("purgeOrgs", json!({"z": z + 1})).await;
    assert_eq!(old["purged"], 1, "{old}");
    let rows = r.rows("SELECT pk, x, del FROM records.\"Article\"").await;
    assert_eq!(rows, vec![json!({"pk": a2["pk"], "x": 0, "del": 0})]);
    r.ok(
        "insertDoc",
        json!({"org": "demo", "data": {"clazz": "Article", "p1": "a1"}}),
    )
    .await;
    let all = r
        .ok("purgeAllDocs", json!({"org": "demo", "cl": "Article"}))
        .await;
    assert_eq!(all["purged"], 2);
    assert!(
        r.rows("SELECT pk FROM records.\"Article\"")
            .await
            .is_empty()
    );
    r.stop().await;
}

#[tokio::test]
async fn deleting_a_nosync_document_purges_it_at_once() {
    let r = Records::start().await;
    r.ok(
        "declareClass",
        json!({"clazz": "Brouillon", "sync": false, "pk": ["id"]}),
    )
    .await;
    let d = r
        .ok(
            "insertDoc",
            json!({"org": "demo", "data": {"clazz": "Brouillon", "id": "b1"}}),
        )
        .await;
    assert_eq!(
        r.ok(
            "deleteDoc",
            json!({"org": "demo", "cl": "Brouillon", "pk": d["pk"]})
        )
        .await,
        Value::Null
    );
    assert!(
        r.rows("SELECT pk FROM records.\"Brouillon\"")
            .await
            .is_empty()
    );
    r.stop().await;
}
