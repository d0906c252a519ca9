//! A running atlas for one test: the real app ([`TestApp`]: a fresh database, every projector,
//! a random port) and a small HTTP client for `/atlas`.

#![allow(dead_code)]

use palimpsest_testkit::TestApp;
use palimpsest_web::AppState;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;

/// The fields under which a request names its acting user: the client below authenticates as
/// the user a request names (issuing it a token with both roles the first time), as the
/// History Map's clients send their own name; a request naming nobody goes as the admin.
const ACTOR_FIELDS: [&str; 7] = [
    "user_id",
    "actor",
    "created_by",
    "locked_by",
    "unlocked_by",
    "submitted_by",
    "reviewed_by",
];

pub struct Atlas {
    app: TestApp,
    pub state: AppState,
    pub base: String,
    pub http: reqwest::Client,
    pub admin: String,
    tokens: Mutex<HashMap<String, String>>,
}

/// The user a body names, if any.
fn named_in(body: &Value) -> Option<String> {
    ACTOR_FIELDS.iter().find_map(|field| match &body[*field] {
        Value::String(name) if !name.trim().is_empty() => Some(name.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    })
}

/// The user a path's query names (`?user_id=` or `?actor=`), if any.
fn named_in_query(path: &str) -> Option<String> {
    let query = path.split_once('?')?.1;
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (ACTOR_FIELDS.contains(&key) && !value.is_empty()).then(|| value.to_owned())
    })
}

impl Atlas {
    /// The real app (the platform's one test harness), spoken to under `/atlas`.
    pub async fn start() -> Atlas {
        let atlas = Atlas::on(TestApp::start().await);
        atlas.users().await;
        atlas
    }

    /// Issues the users the tests name (editors and reviewers), so that issuing them does not
    /// happen in the middle of a test that counts the log's events.
    pub async fn users(&self) {
        for user in ["ann", "bob", "rev", "rev1", "rev2"] {
            self.token(user).await;
        }
    }

    /// Speaks to `app`.
    pub fn on(app: TestApp) -> Atlas {
        Atlas {
            state: app.state.clone(),
            base: app.url("/atlas"),
            http: reqwest::Client::new(),
            admin: app.admin_token(),
            tokens: Mutex::new(HashMap::new()),
            app,
        }
    }

    /// Issues `user` a token with `roles` (as the administrator) and returns it.
    pub async fn issue(&self, user: &str, roles: &[&str]) -> String {
        let res = self
            .http
            .put(format!("{}/admin/users/{user}", self.base))
            .bearer_auth(&self.admin)
            .json(&json!({ "roles": roles }))
            .send()
            .await
            .expect("issue");
        let status = res.status();
        let body: Value = res.json().await.expect("issue answer");
        assert!(status.is_success(), "issuing {user}: {status} {body}");
        let token = body["token"].as_str().expect("token").to_owned();
        self.tokens
            .lock()
            .expect("tokens")
            .insert(user.to_owned(), token.clone());
        token
    }

    /// The token of `user` (an editor and reviewer), issued on first use.
    pub async fn token(&self, user: &str) -> String {
        let known = self.tokens.lock().expect("tokens").get(user).cloned();
        match known {
            Some(token) => token,
            None => self.issue(user, &["editor", "reviewer"]).await,
        }
    }

    /// The token a request naming `user` (or no one: the admin) is sent with.
    async fn token_of(&self, user: Option<String>) -> String {
        match user {
            Some(user) => self.token(&user).await,
            None => self.admin.clone(),
        }
    }

    pub async fn stop(self) {
        self.app.stop().await;
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let token = self.token_of(named_in_query(path)).await;
        self.get_as(&token, path).await
    }

    /// `GET` with `token`.
    pub async fn get_as(&self, token: &str, path: &str) -> (StatusCode, Value) {
        let res = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(token)
            .send()
            .await
            .expect("request");
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let user = named_in(&body).or_else(|| named_in_query(path));
        let token = self.token_of(user).await;
        self.post_as(&token, path, body).await
    }

    /// `POST` with `token`.
    pub async fn post_as(&self, token: &str, path: &str, body: Value) -> (StatusCode, Value) {
        let res = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .expect("request");
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    pub async fn post_raw(&self, path: &str, body: &'static str) -> (StatusCode, Value) {
        let admin = self.admin.clone();
        self.post_raw_as(&admin, path, body).await
    }

    /// `POST` of raw JSON text with `token`.
    pub async fn post_raw_as(
        &self,
        token: &str,
        path: &str,
        body: &'static str,
    ) -> (StatusCode, Value) {
        let res = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(token)
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
