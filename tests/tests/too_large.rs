//! An event larger than the log carries is refused before the append with 413 in every context
//! that can make one, each in its own error format: the log's typed refusal stays typed through
//! the runner to HTTP (records once answered 400 with a size limit of its own).

use palimpsest_testkit::TestApp;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A text well inside the HTTP body limit (2 MiB) whose event is past the log's (900 KiB).
fn big() -> String {
    "x".repeat(1_000_000)
}

async fn head(app: &TestApp) -> Value {
    reqwest::Client::new()
        .get(app.url("/v1/head"))
        .bearer_auth(app.admin_token())
        .send()
        .await
        .expect("head")
        .json()
        .await
        .expect("head json")
}

#[tokio::test]
async fn records_answers_an_event_too_large_with_413_and_its_code() {
    let app = TestApp::start().await;
    let http = reqwest::Client::new();
    let call = |function: &str, body: Value| {
        http.post(app.url(&format!("/records/api/{function}")))
            .bearer_auth(app.admin_token())
            .json(&body)
            .send()
    };
    let declared = call(
        "declareClass",
        json!({"clazz": "Book", "sync": true, "pk": ["p1"], "collections": [], "indexes": []}),
    )
    .await
    .expect("declare");
    assert_eq!(declared.status(), StatusCode::OK);
    let before = head(&app).await;
    let res = call(
        "insertDoc",
        json!({"org": "o1", "data": {"clazz": "Book", "p1": "b1", "text": big()}}),
    )
    .await
    .expect("insert");
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["error"]["code"], "BADREQUEST", "{body}");
    assert_eq!(head(&app).await, before, "nothing appended");
    app.stop().await;
}

#[tokio::test]
async fn pads_answers_an_event_too_large_with_413_in_its_envelope() {
    let app = TestApp::start().await;
    let key = std::fs::read_to_string(app.data_dir().join("APIKEY.txt"))
        .expect("APIKEY.txt")
        .trim()
        .to_owned();
    let http = reqwest::Client::new();
    let call = |function: &str, params: Vec<(&'static str, String)>| {
        let mut form = vec![("apikey", key.clone())];
        form.extend(params);
        http.post(app.url(&format!("/pads/api/1.3.0/{function}")))
            .form(&form)
            .send()
    };
    let created = call("createPad", vec![("padID", "big".into())])
        .await
        .expect("create");
    assert_eq!(created.status(), StatusCode::OK);
    let before = head(&app).await;
    let res = call("appendText", vec![("padID", "big".into()), ("text", big())])
        .await
        .expect("append");
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["code"], 1, "{body}");
    assert_eq!(head(&app).await, before, "nothing appended");
    app.stop().await;
}

#[tokio::test]
async fn docs_answers_an_event_too_large_with_413_in_couchdbs_shape() {
    let app = TestApp::start().await;
    let http = reqwest::Client::new();
    let made = http
        .put(app.url("/docs/big"))
        .bearer_auth(app.admin_token())
        .send()
        .await
        .expect("create db");
    assert!(made.status().is_success(), "{}", made.status());
    let before = head(&app).await;
    let res = http
        .put(app.url("/docs/big/d1"))
        .bearer_auth(app.admin_token())
        .json(&json!({ "text": big() }))
        .send()
        .await
        .expect("put");
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["error"], "too_large", "{body}");
    assert_eq!(head(&app).await, before, "nothing appended");
    app.stop().await;
}
