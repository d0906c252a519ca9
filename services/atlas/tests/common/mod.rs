//! A running atlas for one test: the real app ([`TestApp`]: a fresh database, every projector,
//! a random port) and a small HTTP client for `/atlas`.

#![allow(dead_code)]

use palimpsest_testkit::TestApp;
use palimpsest_web::AppState;
use reqwest::StatusCode;
use serde_json::{Value, json};

pub struct Atlas {
    app: TestApp,
    pub state: AppState,
    pub base: String,
    pub http: reqwest::Client,
}

impl Atlas {
    /// The real app (the platform's one test harness), spoken to under `/atlas`.
    pub async fn start() -> Atlas {
        let app = TestApp::start().await;
        Atlas {
            state: app.state.clone(),
            base: app.url("/atlas"),
            http: reqwest::Client::new(),
            app,
        }
    }

    pub async fn stop(self) {
        self.app.stop().await;
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let res = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .expect("request");
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let res = self
            .http
            .post(format!("{}{path}", self.base))
            .json(&body)
            .send()
            .await
            .expect("request");
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    pub async fn post_raw(&self, path: &str, body: &'static str) -> (StatusCode, Value) {
        let res = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("request");
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// How many events the log holds.
    pub async fn log_size(&self) -> i64 {
        self.state.store.head_position().await.expect("head")
    }

    /// Creates a section and returns its id.
    pub async fn section(&self, title: &str) -> String {
        let (status, body) = self
            .post("/sections", json!({"title": title, "created_by": "ann"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().expect("id").to_owned()
    }

    /// Commits `snapshot` as `actor`, expecting success; returns the commit id.
    pub async fn commit(&self, section: &str, actor: &str, snapshot: Value) -> String {
        let (status, body) = self
            .post(
                &format!("/sections/{section}/commits"),
                json!({"created_by": actor, "snapshot": snapshot}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["commit"]["id"].as_str().expect("commit id").to_owned()
    }

    /// Submits the head as `actor`; returns the submission id.
    pub async fn submit(&self, section: &str, actor: &str) -> String {
        let (status, body) = self
            .post(
                &format!("/sections/{section}/submit"),
                json!({"submitted_by": actor}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["submission"]["id"]
            .as_str()
            .expect("submission id")
            .to_owned()
    }

    /// Creates a section, commits `snapshot`, submits it; returns (section, submission).
    pub async fn submitted(&self, actor: &str, snapshot: Value) -> (String, String) {
        let section = self.section("s").await;
        self.commit(&section, actor, snapshot).await;
        let submission = self.submit(&section, actor).await;
        (section, submission)
    }

    /// Approves, expecting success.
    pub async fn approve(&self, submission: &str) -> Value {
        let (status, body) = self
            .post(
                &format!("/submissions/{submission}/approve"),
                json!({"reviewed_by": "rev"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }

    /// Runs SQL on the read model and returns the rows as JSON objects.
    pub async fn rows(&self, sql: &str) -> Vec<Value> {
        let client = self.state.read.get().await.expect("client");
        let rows = client
            .query(&format!("SELECT to_jsonb(t) FROM ({sql}) t"), &[])
            .await
            .expect("query");
        rows.iter().map(|r| r.get(0)).collect()
    }
}

pub fn polygon(lng: f64, lat: f64) -> Value {
    json!({"type": "Polygon", "coordinates": [[[lng, lat], [lng + 1.0, lat], [lng + 1.0, lat + 1.0], [lng, lat]]]})
}
