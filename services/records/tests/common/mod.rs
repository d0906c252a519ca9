//! The records context of a [`TestApp`] (the real app: fresh database, projectors, random port)
//! with the `Article` class declared, and a thin client for the generic API under `/records`.

#![allow(dead_code)]

use palimpsest_records::settings::Settings;
use palimpsest_testkit::TestApp;
use palimpsest_web::AppState;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The app, and a client for `/records`.
pub struct Records {
    /// The running app.
    pub app: TestApp,
    /// The app's state (log, read pool), for assertions beneath HTTP.
    pub state: AppState,
    /// `http://…/records`.
    pub base: String,
    /// The client.
    pub http: reqwest::Client,
    /// The admin bearer token.
    pub admin: String,
}

/// The class every test declares first.
pub fn article() -> Value {
    json!({"clazz": "Article", "sync": true, "pk": ["p1"],
        "collections": [{"name": "auteurs", "props": ["auteurs"], "list": true}, {"name": "auteur", "props": ["auteur"]}],
        "indexes": [{"name": "taille", "type": "int"}, {"name": "code", "type": "uniq"},
                    {"name": "isbn", "type": "uniq", "scope": "G"}, {"name": "tags", "type": "list"}]})
}

impl Records {
    /// An app with the default settings.
    pub async fn start() -> Records {
        Self::start_with(Settings::default()).await
    }

    /// An app with the records `settings`, given as the binary gives them.
    pub async fn start_with(settings: Settings) -> Records {
        Self::over(TestApp::builder().records(settings).start().await).await
    }

    /// The client over a started app; declares `Article`.
    pub async fn over(app: TestApp) -> Records {
        let records = Records {
            state: app.state.clone(),
            base: app.url("/records"),
            http: reqwest::Client::new(),
            admin: app.admin_token(),
            app,
        };
        let (status, body) = records.admin_call("declareClass", article()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        records
    }

    /// Stops the app and removes what it made.
    pub async fn stop(self) {
        self.app.stop().await;
    }

    /// `POST /api/{function}` with `token`: the status and the JSON answer.
    pub async fn call_as(&self, token: &str, function: &str, body: Value) -> (StatusCode, Value) {
        let res = self
            .http
            .post(format!("{}/api/{function}", self.base))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .expect("request");
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// An admin call: the status and the JSON answer.
    pub async fn admin_call(&self, function: &str, body: Value) -> (StatusCode, Value) {
        self.call_as(&self.admin.clone(), function, body).await
    }

    /// The result of an admin call that must succeed.
    pub async fn ok(&self, function: &str, body: Value) -> Value {
        let (status, reply) = self.admin_call(function, body).await;
        assert_eq!(status, StatusCode::OK, "{function}: {reply}");
        reply["result"].clone()
    }

    /// A token for `org`.
    pub async fn token(&self, org: &str) -> String {
        let result = self.ok("issueOrgToken", json!({"org": org})).await;
        result["token"].as_str().expect("token").to_owned()
    }

    /// The actor of every event after position `after`, in log order (`""` for none).
    pub async fn actors_after(&self, after: i64) -> Vec<String> {
        let events = self.state.store.read_all(after, 10_000).await.expect("log");
        events
            .iter()
            .map(|e| e.metadata.actor.clone().unwrap_or_default())
            .collect()
    }

    /// The log's head position.
    pub async fn head(&self) -> i64 {
        self.state.store.head_position().await.expect("head")
    }

    /// Runs SQL and returns the rows as JSON objects.
    pub async fn rows(&self, sql: &str) -> Vec<Value> {
        let client = self.state.read.get().await.expect("client");
        let rows = client
            .query(&format!("SELECT to_jsonb(t) FROM ({sql}) t"), &[])
            .await
            .expect("query");
        rows.iter().map(|r| r.get(0)).collect()
    }
}
