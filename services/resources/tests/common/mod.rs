//! A running resources context for one test: a fresh database, the projector, Deki's API under
//! `/resources` on a random port (behind the platform's Idempotency-Key middleware), API keys
//! for two users, a content store in a temporary folder, and a small HTTP client.

#![allow(dead_code)]

use palimpsest_resources::content::ContentConfig;
use palimpsest_resources::http::{Resources, routes};
use palimpsest_testkit::TestDb;
use palimpsest_web::AppState;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::path::PathBuf;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Ann's API key (user 10).
pub const ANN: &str = "ann-key";
/// Bob's API key (user 11).
pub const BOB: &str = "bob-key";

pub struct Deki {
    pub db: TestDb,
    pub state: AppState,
    pub base: String,
    pub http: reqwest::Client,
    pub content_dir: PathBuf,
    pub admin: String,
    shutdown: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

/// An answer: status, headers, body bytes.
pub struct Answer {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn header(&self, name: &str) -> String {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    }
}

impl Deki {
    /// Starts with content up to 1 KiB inline.
    pub async fn start() -> Deki {
        Self::start_with_inline(1024).await
    }

    pub async fn start_with_inline(inline_max: u64) -> Deki {
        let db = TestDb::create().await;
        let data_dir =
            std::env::temp_dir().join(format!("palimpsest-test-{}", uuid::Uuid::new_v4()));
        let state = AppState::connect(db.url(), data_dir).await.expect("state");
        std::fs::create_dir_all(&state.data_dir).expect("data dir");
        std::fs::write(
            state.data_dir.join("resources-keys.json"),
            format!(r#"{{"{ANN}": {{"user_id": 10}}, "{BOB}": {{"user_id": 11}}}}"#),
        )
        .expect("keys");
        let content_dir =
            std::env::temp_dir().join(format!("resources-store-{}", uuid::Uuid::new_v4()));
        let projection = palimpsest_resources::projection();
        palimpsest_projections::ensure(&state.store, projection.as_ref())
            .await
            .expect("read model");
        let shutdown = CancellationToken::new();
        let runner =
            palimpsest_projections::spawn_runner(state.store.clone(), projection, shutdown.clone());
        let resources = Resources::with_content(
            state.clone(),
            ContentConfig::new(content_dir.clone(), inline_max),
        );
        let app = axum::Router::new()
            .nest("/resources", routes(resources))
            .layer(axum::middleware::from_fn(
                palimpsest_web::command::fingerprint_requests,
            ));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}/resources", listener.local_addr().expect("addr"));
        let stop = shutdown.clone();
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move { stop.cancelled().await })
                .await;
        });
        Deki {
            admin: state.admin_token.as_ref().clone(),
            db,
            state,
            base,
            http: reqwest::Client::new(),
            content_dir,
            shutdown,
            tasks: vec![runner, server],
        }
    }

    pub async fn stop(self) {
        self.shutdown.cancel();
        for t in self.tasks {
            let _ = t.await;
        }
        let _ = std::fs::remove_dir_all(&self.content_dir);
        let _ = std::fs::remove_dir_all(&self.state.data_dir);
        self.db.drop().await;
    }

    /// `path` under `/resources/@api/deki`.
    pub fn url(&self, path: &str) -> String {
        format!("{}/@api/deki{path}", self.base)
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        key: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> Answer {
        let mut request = self.http.request(method, self.url(path));
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = request.send().await.expect("request");
        Answer {
            status: response.status(),
            headers: response.headers().clone(),
            body: response.bytes().await.expect("body").to_vec(),
        }
    }

    pub async fn get(&self, path: &str, key: Option<&str>) -> Answer {
        self.send(Method::GET, path, key, &[], None).await
    }

    pub async fn put(&self, path: &str, key: &str, body: &[u8]) -> Answer {
        self.send(
            Method::PUT,
            path,
            Some(key),
            &[("content-type", "text/plain")],
            Some(body.to_vec()),
        )
        .await
    }

    pub async fn post(&self, path: &str, key: &str) -> Answer {
        self.send(Method::POST, path, Some(key), &[], None).await
    }

    pub async fn delete(&self, path: &str, key: &str) -> Answer {
        self.send(Method::DELETE, path, Some(key), &[], None).await
    }

    /// Uploads a file and returns its JSON (asserting 200).
    pub async fn upload(&self, page: i64, name: &str, body: &[u8]) -> Value {
        let answer = self
            .put(&format!("/pages/{page}/files/{name}"), ANN, body)
            .await;
        assert_eq!(
            answer.status,
            StatusCode::OK,
            "upload {name}: {}",
            answer.text()
        );
        answer.json()
    }

    /// Rows of a query as JSON.
    pub async fn rows(&self, sql: &str) -> Vec<Value> {
        let client = self.state.read.get().await.expect("client");
        let rows = client
            .query(&format!("SELECT to_jsonb(t) FROM ({sql}) t"), &[])
            .await
            .expect("query");
        rows.iter().map(|r| r.get::<_, Value>(0)).collect()
    }

    /// How many events the log holds.
    pub async fn log_size(&self) -> i64 {
        self.state.store.head_position().await.expect("head")
    }

    /// Files stored in the content folder (outside `.tmp`).
    pub fn stored_files(&self) -> usize {
        let Ok(dirs) = std::fs::read_dir(&self.content_dir) else {
            return 0;
        };
        dirs.flatten()
            .filter(|d| d.file_name() != ".tmp")
            .map(|d| std::fs::read_dir(d.path()).map(|f| f.count()).unwrap_or(0))
            .sum()
    }
}

/// An attribute of Deki's JSON (`"@name"`), as text.
pub fn attr(value: &Value, name: &str) -> String {
    value[format!("@{name}")].as_str().unwrap_or("").to_owned()
}
