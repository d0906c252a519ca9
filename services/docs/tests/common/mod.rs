//! The real app on a random port, and a small CouchDB client for the tests.

#![allow(dead_code)]

use palimpsest_testkit::TestApp;
use serde_json::Value;

/// The app and an HTTP client pointed at `/docs`.
pub struct Docs {
    /// The running app.
    pub app: TestApp,
    client: reqwest::Client,
}

impl Docs {
    /// Starts the app on a fresh database.
    pub async fn start() -> Docs {
        Docs {
            app: TestApp::start().await,
            client: reqwest::Client::new(),
        }
    }

    /// A client for an app started otherwise (`TestApp::builder`).
    pub fn from_app(app: TestApp) -> Docs {
        Docs {
            app,
            client: reqwest::Client::new(),
        }
    }

    /// The absolute URL of `/docs{path}`.
    pub fn url(&self, path: &str) -> String {
        self.app.url(&format!("/docs{path}"))
    }

    /// The URL of `/docs{path}` with the administrator's credentials in it (`admin:<token>@`),
    /// as PouchDB takes them.
    pub fn admin_url(&self, path: &str) -> String {
        let credentials = format!("http://admin:{}@", self.app.admin_token());
        self.url(path).replacen("http://", &credentials, 1)
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> (u16, String) {
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        (status, response.text().await.expect("body"))
    }

    /// A request with a raw body; the status and the body text.
    pub async fn raw(&self, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = self.client.request(method, self.url(path));
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_owned());
        }
        self.send(request).await
    }

    /// An admin request (bearer token) with a raw body; the status and the body text.
    pub async fn admin(&self, method: &str, path: &str, body: &str) -> (u16, String) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let request = self
            .client
            .request(method, self.url(path))
            .bearer_auth(self.app.admin_token())
            .body(body.to_owned());
        self.send(request).await
    }

    /// A request as the administrator (HTTP Basic `admin:<admin token>`, as CouchDB clients
    /// send a server admin's credentials) with a JSON body (or none).
    pub async fn as_admin(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let token = self.app.admin_token();
        self.as_user("admin", &token, method, path, body).await
    }

    /// A request as user `name` (HTTP Basic) with a JSON body (or none).
    pub async fn as_user(
        &self,
        name: &str,
        password: &str,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = self
            .client
            .request(method, self.url(path))
            .basic_auth(name, Some(password));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let (status, text) = self.send(request).await;
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// The log's head position.
    pub async fn head(&self) -> i64 {
        self.app.state.store.head_position().await.expect("head")
    }

    /// A request with a JSON body (or none); the status and the parsed body.
    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let text = body.map(|b| b.to_string());
        let (status, text) = self.raw(method, path, text.as_deref()).await;
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, value)
    }

    /// Rows of a read-model query as JSON objects.
    pub async fn rows(&self, sql: &str) -> Vec<Value> {
        let client = self.app.state.read.get().await.expect("client");
        let rows = client
            .query(&format!("SELECT to_json(t)::text FROM ({sql}) t"), &[])
            .await
            .expect("query");
        rows.iter()
            .map(|r| serde_json::from_str(r.get::<_, &str>(0)).expect("json"))
            .collect()
    }

    /// Drops the docs read model and rebuilds it by replaying the log (then compare it with
    /// what the live projector wrote).
    pub async fn rebuild(&self) {
        palimpsest_projections::rebuild(
            &self.app.state.store,
            palimpsest_docs::projection().as_ref(),
            |_, _| {},
        )
        .await
        .expect("rebuild");
    }

    /// Stops the app and drops its database.
    pub async fn stop(self) {
        self.app.stop().await;
    }
}
