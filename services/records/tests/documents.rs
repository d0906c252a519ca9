//! The generic API over HTTP: documents in and out as data, errors as the spec's codes.

mod common;

use common::Records;
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn a_document_goes_in_as_data_and_comes_out_decrypted() {
    let r = Records::start().await;
    let stored = r
        .ok("insertDoc", json!({"org": "demo", "data": {"clazz": "Article", "p1": "a1", "auteurs": ["Hugo"], "taille": 3, "titre": "Notre-Dame"}}))
        .await;
    let pk = stored["pk"].as_str().expect("pk").to_owned();
    assert_eq!(pk, palimpsest_records::hash::sha16("a1"));
    assert_eq!(
        (stored["org"].clone(), stored["x"].clone()),
        (json!("demo"), json!(0))
    );
    let v = stored["v"].as_i64().expect("v");

    let got = r
        .ok("getDoc", json!({"org": "demo", "cl": "Article", "pk": pk}))
        .await;
    assert_eq!(got, stored);
    assert_eq!(
        r.ok(
            "getDoc",
            json!({"org": "demo", "cl": "Article", "pk": pk, "v": v})
        )
        .await,
        json!(null),
        "nothing newer than v"
    );

    let (status, body) = r
        .admin_call(
            "insertDoc",
            json!({"org": "demo", "data": {"clazz": "Article", "p1": "a1"}}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::CONFLICT, json!("EXISTS"))
    );

    let (status, body) = r
        .admin_call(
            "updateDoc",
            json!({"org": "demo", "v": v - 1, "data": {"clazz": "Article", "p1": "a1"}}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::CONFLICT, json!("CONFLICT"))
    );

    let updated = r
        .ok(
            "updateDoc",
            json!({"org": "demo", "v": v, "data": {"clazz": "Article", "p1": "a1", "taille": 4}}),
        )
        .await;
    assert!(updated["v"].as_i64().expect("v") > v);

    let rows = r
        .ok(
            "listDocsIdx",
            json!({"org": "demo", "cl": "Article", "ix": "taille", "comp": ">=", "val": 4}),
        )
        .await;
    assert_eq!(rows["rows"].as_array().map(Vec::len), Some(1), "{rows}");
    r.stop().await;
}

#[tokio::test]
async fn bad_input_is_a_badrequest_naming_the_field_and_appends_nothing() {
    let r = Records::start().await;
    let before = r.state.store.head_position().await.expect("head");
    for (function, body, needle) in [
        (
            "insertDoc",
            json!({"org": "demo", "data": {"clazz": "Article"}}),
            "data.p1",
        ),
        (
            "insertDoc",
            json!({"org": "demo", "data": {"clazz": "Article", "p1": "a", "taille": "big"}}),
            "data.taille",
        ),
        (
            "insertDoc",
            json!({"org": "demo", "data": {"clazz": "Nope", "p1": "a"}}),
            "Nope",
        ),
        (
            "insertDoc",
            json!({"org": "de:mo", "data": {"clazz": "Article", "p1": "a"}}),
            "org",
        ),
        (
            "insertDoc",
            json!({"data": {"clazz": "Article", "p1": "a"}}),
            "org",
        ),
        (
            "listDocsSk",
            json!({"org": "demo", "cl": "Article", "ik": 9, "val": "x"}),
            "ik",
        ),
        (
            "listDocsIdx",
            json!({"org": "demo", "cl": "Article", "ix": "taille", "comp": "~", "val": 1}),
            "comp",
        ),
    ] {
        let (status, reply) = r.admin_call(function, body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{function}: {reply}");
        assert_eq!(reply["error"]["code"], "BADREQUEST");
        let message = reply["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(needle), "{message} names {needle}");
    }
    let (status, reply) = r.admin_call("nope", json!({})).await;
    assert_eq!(
        (status, reply["error"]["code"].clone()),
        (StatusCode::NOT_FOUND, json!("NOTFOUND"))
    );
    assert_eq!(r.state.store.head_position().await.expect("head"), before);
    r.stop().await;
}

#[tokio::test]
async fn an_org_token_is_scoped_to_its_org_and_admin_calls_are_forbidden_to_it() {
    let r = Records::start().await;
    let token = r.token("demo").await;
    let id = palimpsest_records::hash::sha32(&token);
    let head = r.head().await;
    let (status, body) = r
        .call_as(
            &token,
            "insertDoc",
            json!({"data": {"clazz": "Article", "p1": "a1"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["org"], "demo");
    let actors = r.actors_after(head).await;
    assert!(
        !actors.is_empty() && actors.iter().all(|a| *a == format!("org:demo/token:{id}")),
        "the org's events name its token: {actors:?}"
    );
    let (status, body) = r
        .call_as(&token, "listDocs", json!({"org": "other", "cl": "Article"}))
        .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::FORBIDDEN, json!("FORBIDDEN"))
    );
    for (function, body) in [
        ("insertHdr", json!({"data": {"etat": 1}})),
        ("declareClass", common::article()),
        ("listOrgs", json!({})),
        (
            "listDocsIdx",
            json!({"cl": "Article", "ix": "isbn", "comp": "=", "val": "x"}),
        ),
    ] {
        let (status, reply) = r.call_as(&token, function, body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{function}: {reply}");
    }
    let (status, _) = r
        .call_as("wrong", "listDocs", json!({"cl": "Article"}))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    r.stop().await;
}

#[tokio::test]
async fn hdr_and_org_are_special_singletons() {
    let r = Records::start().await;
    let hdr = r.ok("insertHdr", json!({"data": {"etat": "ouvert"}})).await;
    assert_eq!(
        (hdr["pk"].clone(), hdr["clazz"].clone()),
        (json!("1"), json!("Hdr"))
    );
    let updated = r
        .ok(
            "updateHdr",
            json!({"data": {"etat": "fermé"}, "v": hdr["v"]}),
        )
        .await;
    assert_eq!(r.ok("getHdr", json!({})).await, updated);
    let org = r
        .ok(
            "insertOrg",
            json!({"data": {"org": "demo", "statut": "actif"}}),
        )
        .await;
    assert_eq!(org["pk"], "demo");
    let token = r.token("demo").await;
    let (status, got) = r.call_as(&token, "getOrg", json!({})).await;
    assert_eq!(
        (status, got["result"].clone()),
        (StatusCode::OK, org.clone())
    );
    let listed = r.ok("listOrgs", json!({})).await;
    assert_eq!(listed["rows"][0]["pk"], "demo");
    r.stop().await;
}

#[tokio::test]
async fn an_operation_writes_several_documents_at_one_version_or_none() {
    let r = Records::start().await;
    let result = r
        .ok(
            "operation",
            json!({"org": "demo", "writes": [
            {"op": "insert", "data": {"clazz": "Article", "p1": "a1", "code": "C"}},
            {"op": "insert", "data": {"clazz": "Article", "p1": "a2"}}]}),
        )
        .await;
    assert_eq!(result[0]["v"], result[1]["v"]);
    let before = r.state.store.head_position().await.expect("head");
    let (status, body) = r
        .admin_call(
            "operation",
            json!({"org": "demo", "writes": [
            {"op": "insert", "data": {"clazz": "Article", "p1": "a3"}},
            {"op": "insert", "data": {"clazz": "Article", "p1": "a4", "code": "C"}}]}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::CONFLICT, json!("UNIQUE"))
    );
    assert_eq!(
        r.state.store.head_position().await.expect("head"),
        before,
        "nothing appended"
    );
    r.stop().await;
}

#[tokio::test]
async fn a_repeated_idempotency_key_gets_the_first_answer() {
    let r = Records::start().await;
    let send = || {
        r.http
            .post(format!("{}/api/insertDoc", r.base))
            .bearer_auth(&r.admin)
            .header("Idempotency-Key", "k-1")
            .json(&json!({"org": "demo", "data": {"clazz": "Article", "p1": "a1"}}))
            .send()
    };
    let first: serde_json::Value = send().await.expect("first").json().await.expect("json");
    let head = r.state.store.head_position().await.expect("head");
    let again = send().await.expect("again");
    assert_eq!(again.status(), StatusCode::OK);
    assert_eq!(
        again.json::<serde_json::Value>().await.expect("json"),
        first
    );
    assert_eq!(r.state.store.head_position().await.expect("head"), head);

    // The same key and body from another organisation never gets the first one's answer.
    let (a, b) = (r.token("a").await, r.token("b").await);
    let as_org = |token: String| {
        r.http
            .post(format!("{}/api/insertDoc", r.base))
            .bearer_auth(token)
            .header("Idempotency-Key", "k-2")
            .json(&json!({"data": {"clazz": "Article", "p1": "x"}}))
            .send()
    };
    assert_eq!(as_org(a).await.expect("a").status(), StatusCode::OK);
    let other = as_org(b).await.expect("b");
    assert_eq!(other.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: serde_json::Value = other.json().await.expect("json");
    assert!(!body.to_string().contains("\"org\":\"a\""), "{body}");
    r.stop().await;
}

#[tokio::test]
async fn files_to_purge_are_listed_by_day_and_purged() {
    let r = Records::start().await;
    let token = r.token("demo").await;
    let (status, body) = r
        .call_as(
            &token,
            "setFTP",
            json!({"path": "dossier/a/f1", "dp": 20260101}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    r.ok(
        "setFTP",
        json!({"org": "other", "path": "f2", "dp": 20260301}),
    )
    .await;
    let (status, _) = r.call_as(&token, "listFTP", json!({"dp": 20261231})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let listed = r.ok("listFTP", json!({"dp": 20260201})).await;
    assert_eq!(
        listed["rows"],
        json!([{"org": "demo", "path": "dossier/a/f1", "p": 20260101}])
    );
    let purged = r.ok("purgeAllFTP", json!({"dp": 20260201})).await;
    assert_eq!(purged["purged"], 1);
    r.ok("purgeFTP", json!({"org": "other", "path": "f2"}))
        .await;
    assert_eq!(
        r.ok("listFTP", json!({"dp": 20261231})).await["rows"],
        json!([])
    );
    r.stop().await;
}

#[tokio::test]
async fn an_org_exported_and_imported_into_another_org_reads_the_same_rekeyed() {
    let r = Records::start().await;
    r.ok("declareClass", json!({"clazz": "Note", "sync": true, "pk": ["n"], "indexes": [{"name": "code", "type": "uniq"}]})).await;
    r.ok("insertDoc", json!({"org": "a", "data": {"clazz": "Article", "p1": "a1", "auteurs": ["Hugo"], "taille": 3, "texte": "é"}})).await;
    let gone = r
        .ok(
            "insertDoc",
            json!({"org": "a", "data": {"clazz": "Article", "p1": "a2"}}),
        )
        .await;
    r.ok(
        "deleteDoc",
        json!({"org": "a", "cl": "Article", "pk": gone["pk"]}),
    )
    .await;
    r.ok(
        "insertDoc",
        json!({"org": "a", "data": {"clazz": "Note", "n": "1", "code": "C"}}),
    )
    .await;

    let only_articles = r
        .ok("exportOrg", json!({"org": "a", "cl": "Article"}))
        .await;
    assert_eq!(
        only_articles["docs"].as_array().map(Vec::len),
        Some(1),
        "zombies are not exported"
    );
    let exported = r.ok("exportOrg", json!({"org": "a"})).await;
    let docs = exported["docs"].as_array().expect("docs").clone();
    assert_eq!(docs.len(), 2);
    let imported = r.ok("importOrg", json!({"org": "b", "docs": docs})).await;
    assert_eq!(imported["imported"], 2);
    let back = r.ok("exportOrg", json!({"org": "b"})).await;
    let strip = |docs: &serde_json::Value| -> Vec<serde_json::Value> {
        docs.as_array()
            .expect("docs")
            .iter()
            .map(|d| {
                let mut d = d.clone();
                d.as_object_mut().expect("object").remove("v");
                d.as_object_mut().expect("object").remove("org");
                d
            })
            .collect()
    };
    assert_eq!(strip(&back["docs"]), strip(&exported["docs"]));
    assert!(
        back["docs"]
            .as_array()
            .expect("docs")
            .iter()
            .all(|d| d["org"] == "b")
    );
    let (status, body) = r
        .admin_call("importOrg", json!({"org": "b", "docs": exported["docs"]}))
        .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::CONFLICT, json!("EXISTS"))
    );
    r.stop().await;
}

#[tokio::test]
async fn the_openapi_document_is_served_and_names_every_function() {
    let r = Records::start().await;
    let doc: serde_json::Value = r
        .http
        .get(format!("{}/openapi.json", r.base))
        .send()
        .await
        .expect("openapi")
        .json()
        .await
        .expect("json");
    assert_eq!(doc["servers"][0]["url"], "/records");
    for function in palimpsest_records::http::api::FUNCTIONS {
        assert!(
            doc["paths"][format!("/api/{function}")]["post"].is_object(),
            "{function}"
        );
    }
    assert!(doc["paths"]["/feed"]["get"].is_object());
    let (status, body) = r
        .admin_call(
            "listDocsIdx",
            json!({"org": "demo", "cl": "Article", "ix": "taille", "comp": "in", "val": []}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!("BADREQUEST"))
    );
    r.stop().await;
}

/// Issue #25: a unique value held in another organisation (a global index) is refused without
/// naming the holder; within the writer's own organisation the holder is still named.
#[tokio::test]
async fn a_unique_conflict_names_no_document_of_another_organisation() {
    let r = Records::start().await;
    let orga = r.token("orga").await;
    let orgb = r.token("orgb").await;
    let (status, body) = r
        .call_as(
            &orga,
            "insertDoc",
            json!({"data": {"clazz": "Article", "p1": "held-a1", "code": "C-7", "isbn": "I-7"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let before = r.state.store.head_position().await.expect("head");
    let (status, body) = r
        .call_as(
            &orgb,
            "insertDoc",
            json!({"data": {"clazz": "Article", "p1": "b1", "isbn": "I-7"}}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::CONFLICT, json!("UNIQUE")),
        "{body}"
    );
    let message = body["error"]["message"].as_str().expect("message");
    assert!(
        !message.contains("\"orga\"") && !message.contains('['),
        "another organisation's key is not named: {message}"
    );
    assert_eq!(
        r.state.store.head_position().await.expect("head"),
        before,
        "nothing appended"
    );
    let (status, body) = r
        .call_as(
            &orga,
            "insertDoc",
            json!({"data": {"clazz": "Article", "p1": "a2", "code": "C-7"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let message = body["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("[\"orga\", \"Article\", "),
        "the holder is named within its own organisation: {message}"
    );
    r.stop().await;
}
