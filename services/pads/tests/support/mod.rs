//! A pads server for tests: the real app ([`TestApp`]: a fresh database, every projector, a random
//! port) and an HTTP client that speaks Etherpad's API under `/pads`.

#![allow(dead_code)]

use palimpsest_testkit::TestApp;
use palimpsest_web::AppState;
use serde_json::Value;
use std::collections::BTreeMap;

/// A running pads server owned by one test.
pub struct Server {
    app: TestApp,
    pub state: AppState,
    pub base: String,
    pub key: String,
    pub http: reqwest::Client,
}

impl Server {
    /// The real app (the platform's one test harness), spoken to under `/pads` with its key.
    pub async fn start() -> Server {
        let app = TestApp::start().await;
        let key = std::fs::read_to_string(app.data_dir().join("APIKEY.txt")).expect("api key file");
        Server {
            state: app.state.clone(),
            base: app.url("/pads"),
            key: key.trim().to_owned(),
            http: reqwest::Client::new(),
            app,
        }
    }

    /// `GET /pads/api/1.3.0/<function>?apikey=…&<params>`, the answer's status and body.
    pub async fn get(&self, function: &str, params: &[(&str, &str)]) -> (u16, Value) {
        self.get_version("1.3.0", function, params).await
    }

    /// Like [`Server::get`] for another API version.
    pub async fn get_version(
        &self,
        version: &str,
        function: &str,
        params: &[(&str, &str)],
    ) -> (u16, Value) {
        let mut query: Vec<(&str, &str)> = vec![("apikey", &self.key)];
        query.extend_from_slice(params);
        let res = self
            .http
            .get(format!("{}/api/{version}/{function}", self.base))
            .query(&query)
            .send()
            .await
            .expect("request");
        let status = res.status().as_u16();
        (status, res.json().await.expect("json body"))
    }

    /// `POST /pads/api/1.3.0/<function>` with a JSON body (and the key in it).
    pub async fn post_json(&self, function: &str, mut body: Value) -> (u16, Value) {
        body["apikey"] = Value::String(self.key.clone());
        let res = self
            .http
            .post(format!("{}/api/1.3.0/{function}", self.base))
            .json(&body)
            .send()
            .await
            .expect("request");
        let status = res.status().as_u16();
        (status, res.json().await.expect("json body"))
    }

    /// `POST /pads/api/1.3.0/<function>` with a form body.
    pub async fn post_form(&self, function: &str, params: &[(&str, &str)]) -> (u16, Value) {
        let mut form: Vec<(&str, &str)> = vec![("apikey", &self.key)];
        form.extend_from_slice(params);
        let body: String = form
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        let res = self
            .http
            .post(format!("{}/api/1.3.0/{function}", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .expect("request");
        let status = res.status().as_u16();
        (status, res.json().await.expect("json body"))
    }

    /// Calls `function` and expects code 0; returns `data`.
    pub async fn ok(&self, function: &str, params: &[(&str, &str)]) -> Value {
        let (status, body) = self.get(function, params).await;
        assert_eq!(status, 200, "{function}: {body}");
        assert_eq!(body["code"], 0, "{function}: {body}");
        body["data"].clone()
    }

    /// Like [`Server::ok`] for another API version.
    pub async fn ok_version(
        &self,
        version: &str,
        function: &str,
        params: &[(&str, &str)],
    ) -> Value {
        let (status, body) = self.get_version(version, function, params).await;
        assert_eq!(status, 200, "{function}: {body}");
        assert_eq!(body["code"], 0, "{function}: {body}");
        body["data"].clone()
    }

    /// Calls `function` and expects code 1; returns the message.
    pub async fn refused(&self, function: &str, params: &[(&str, &str)]) -> String {
        let (status, body) = self.get(function, params).await;
        assert_eq!(status, 200, "{function}: {body}");
        assert_eq!(body["code"], 1, "{function}: {body}");
        assert_eq!(body["data"], Value::Null);
        body["message"].as_str().unwrap_or_default().to_owned()
    }

    /// `POST /pads/ext/submitChangeset`.
    pub async fn submit(&self, body: Value) -> (u16, Value) {
        let mut body = body;
        body["apikey"] = Value::String(self.key.clone());
        let res = self
            .http
            .post(format!("{}/ext/submitChangeset", self.base))
            .json(&body)
            .send()
            .await
            .expect("request");
        let status = res.status().as_u16();
        (status, res.json().await.expect("json body"))
    }

    /// The raw value of a store key.
    pub async fn raw(&self, key: &str) -> Option<String> {
        let client = self.state.read.get().await.expect("client");
        client
            .query_opt("SELECT value FROM pads.store WHERE key = $1", &[&key])
            .await
            .expect("query")
            .map(|r| r.get(0))
    }

    /// Every row of `schema.store`.
    pub async fn dump(&self, schema: &str) -> BTreeMap<String, String> {
        let client = self.state.read.get().await.expect("client");
        client
            .query(&format!("SELECT key, value FROM {schema}.store"), &[])
            .await
            .expect("query")
            .into_iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect()
    }

    /// How many events the log holds.
    pub async fn event_count(&self) -> i64 {
        self.state.store.head_position().await.expect("head")
    }

    /// Stops the server and drops its database.
    pub async fn stop(self) {
        self.app.stop().await;
    }
}

/// Percent-encodes a form value.
pub fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
