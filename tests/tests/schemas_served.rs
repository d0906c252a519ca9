//! The event contract over HTTP: `/v1/schemas` (the index), `/v1/schemas/{path}` (each file, the
//! bytes kept in `events/schemas/`) and `/v1/asyncapi.json`, public (no token).

use palimpsest_events::schema;
use palimpsest_testkit::TestApp;
use serde_json::Value;
use std::path::Path;

async fn get(app: &TestApp, path: &str) -> (u16, String, String) {
    let res = reqwest::get(app.url(path)).await.expect("get");
    let status = res.status().as_u16();
    let kind = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    (status, kind, res.text().await.expect("body"))
}

#[tokio::test]
async fn every_kept_schema_file_is_served_as_it_is_kept() {
    let app = TestApp::start().await;
    let kept = Path::new(env!("CARGO_MANIFEST_DIR")).join("../events/schemas");
    let (status, _, index) = get(&app, "/v1/schemas").await;
    assert_eq!(status, 200);
    let index: Value = serde_json::from_str(&index).expect("index json");
    let entries = index.as_array().expect("an array");
    assert!(entries.len() > 80, "{} entries", entries.len());
    for entry in entries {
        let path = entry["path"].as_str().expect("path");
        let (status, kind, body) = get(&app, &format!("/v1/schemas/{path}")).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(kind, "application/schema+json", "{path}");
        let file = std::fs::read_to_string(kept.join(path)).expect("kept file");
        assert_eq!(body, file, "{path} served as kept");
    }
    let (status, _, body) = get(&app, "/v1/schemas/pads/Nope.v1.json").await;
    assert_eq!(status, 404, "{body}");
    let error: Value = serde_json::from_str(&body).expect("a JSON error");
    assert!(error.to_string().contains("no schema"), "{error}");
    app.stop().await;
}

#[tokio::test]
async fn the_asyncapi_document_is_served_and_refers_to_served_schemas() {
    let app = TestApp::start().await;
    let (status, kind, body) = get(&app, "/v1/asyncapi.json").await;
    assert_eq!(status, 200);
    assert!(kind.starts_with("application/json"), "{kind}");
    let doc: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(doc["asyncapi"], "3.0.0");
    assert_eq!(doc, palimpsest_events::asyncapi::document());
    let payload = &doc["components"]["messages"]["atlas-SectionCreated"]["payload"]["allOf"][1];
    let reference = payload["properties"]["payload"]["$ref"]
        .as_str()
        .expect("a $ref");
    // Relative to /v1/asyncapi.json, `schemas/…` is /v1/schemas/….
    let (status, _, _) = get(&app, &format!("/v1/{reference}")).await;
    assert_eq!(status, 200, "{reference}");
    assert!(schema::catalogue().contains_key(reference.trim_start_matches("schemas/")));
    app.stop().await;
}

#[tokio::test]
async fn the_served_asyncapi_document_names_the_deployments_subject_prefix() {
    let app = TestApp::builder().subject_prefix("acme-eu").start().await;
    let (status, _, body) = get(&app, "/v1/asyncapi.json").await;
    assert_eq!(status, 200);
    let doc: Value = serde_json::from_str(&body).expect("json");
    let channels = doc["channels"].as_object().expect("channels");
    assert!(!channels.is_empty());
    for (name, channel) in channels {
        assert_eq!(
            channel["parameters"]["prefix"]["default"], "acme-eu",
            "{name}"
        );
    }
    app.stop().await;
}
