//! The resources context of a [`TestApp`] (the real app: fresh database, projectors, random
//! port), with API keys for two users in its data folder as an operator puts them, and a thin
//! client for Deki's API under `/resources`.

#![allow(dead_code)]

use palimpsest_testkit::TestApp;
use palimpsest_web::AppState;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::path::PathBuf;

/// Ann's API key (user 10).
pub const ANN: &str = "ann-key";
/// Bob's API key (user 11).
pub const BOB: &str = "bob-key";

/// The app, and a client for `/resources`.
pub struct Deki {
    /// The running app.
    pub app: TestApp,
    /// The app's state (log, read pool), for assertions beneath HTTP.
    pub state: AppState,
    /// `http://…/resources`.
    pub base: String,
    /// The client.
    pub http: reqwest::Client,
    /// Where content not kept inline is stored.
    pub content_dir: PathBuf,
    /// The admin bearer token.
    pub admin: String,
}

/// An answer: status, headers, body bytes.
pub struct Answer {
    /// The status.
    pub status: StatusCode,
    /// The headers.
    pub headers: reqwest::header::HeaderMap,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON (`null` if it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// A header's value (empty when absent).
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

    /// Starts with content up to `inline_max` bytes inline.
    pub async fn start_with_inline(inline_max: u64) -> Deki {
        let keys = format!(r#"{{"{ANN}": {{"user_id": 10}}, "{BOB}": {{"user_id": 11}}}}"#);
        let app = TestApp::builder()
            .data_file("resources-keys.json", keys)
            .resources_inline_max(inline_max)
            .start()
            .await;
        Deki {
            state: app.state.clone(),
            base: app.url("/resources"),
            http: reqwest::Client::new(),
            content_dir: app.resources_content_dir(),
            admin: app.admin_token(),
            app,
        }
    }

    /// Stops the app and removes what it made (database, data folder and content with it).
    pub async fn stop(self) {
        self.app.stop().await;
    }

    /// `path` under `/resources/@api/deki`.
    pub fn url(&self, path: &str) -> String {
        format!("{}/@api/deki{path}", self.base)
    }

    /// A request with an API key (bearer), extra headers and a body.
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

    /// `GET` with an optional API key.
    pub async fn get(&self, path: &str, key: Option<&str>) -> Answer {
        self.send(Method::GET, path, key, &[], None).await
    }

    /// `PUT` a text body.
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

    /// `POST` without a body.
    pub async fn post(&self, path: &str, key: &str) -> Answer {
        self.send(Method::POST, path, Some(key), &[], None).await
    }

    /// `DELETE`.
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
