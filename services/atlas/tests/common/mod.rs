//! A running atlas for one test: a fresh database, the projector, the router under `/atlas` on
//! a random port, and a small HTTP client.

#![allow(dead_code)]

use palimpsest_testkit::TestDb;
use palimpsest_web::AppState;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub struct Atlas {
    pub db: TestDb,
    pub state: AppState,
    pub base: String,
    pub http: reqwest::Client,
    shutdown: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl Atlas {
    pub async fn start() -> Atlas {
        let db = TestDb::create().await;
        let state = AppState::for_tests(db.url()).await.expect("state");
        let projection = palimpsest_atlas::projection();
        palimpsest_projections::ensure(&state.store, projection.as_ref())
            .await
            .expect("read model");
        let shutdown = CancellationToken::new();
        let runner =
            palimpsest_projections::spawn_runner(state.store.clone(), projection, shutdown.clone());
        let app = axum::Router::new().nest("/atlas", palimpsest_atlas::router(state.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}/atlas", listener.local_addr().expect("addr"));
        let stop = shutdown.clone();
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move { stop.cancelled().await })
                .await;
        });
        Atlas {
            db,
            state,
            base,
            http: reqwest::Client::new(),
            shutdown,
            tasks: vec![runner, server],
        }
    }

    pub async fn stop(self) {
        self.shutdown.cancel();
        for t in self.tasks {
            let _ = t.await;
        }
        self.db.drop().await;
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
