//! A running records context for one test: a fresh database, the projector, the router under
//! `/records` on a random port, and a client for the generic API.

#![allow(dead_code)]

use palimpsest_records::http::context::{Clock, Settings};
use palimpsest_testkit::TestDb;
use palimpsest_web::AppState;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub struct Records {
    pub db: TestDb,
    pub state: AppState,
    pub base: String,
    pub http: reqwest::Client,
    pub admin: String,
    shutdown: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

pub fn article() -> Value {
    json!({"clazz": "Article", "sync": true, "pk": ["p1"],
        "collections": [{"name": "auteurs", "props": ["auteurs"], "list": true}, {"name": "auteur", "props": ["auteur"]}],
        "indexes": [{"name": "taille", "type": "int"}, {"name": "code", "type": "uniq"},
                    {"name": "isbn", "type": "uniq", "scope": "G"}, {"name": "tags", "type": "list"}]})
}

impl Records {
    pub async fn start() -> Records {
        Self::start_with(Settings::default()).await
    }

    pub async fn start_with_clock(clock: Clock) -> Records {
        Self::start_with(Settings {
            clock,
            ..Settings::default()
        })
        .await
    }

    pub async fn start_with(settings: Settings) -> Records {
        let db = TestDb::create().await;
        let state = AppState::connect(
            db.url(),
            std::env::temp_dir().join(format!("palimpsest-records-{}", uuid::Uuid::new_v4())),
        )
        .await
        .expect("state");
        let projection = palimpsest_records::projection();
        palimpsest_projections::ensure(&state.store, projection.as_ref())
            .await
            .expect("read model");
        let shutdown = CancellationToken::new();
        let runner =
            palimpsest_projections::spawn_runner(state.store.clone(), projection, shutdown.clone());
        let app = axum::Router::new()
            .nest(
                "/records",
                palimpsest_records::http::router_with(state.clone(), settings),
            )
            .layer(axum::middleware::from_fn(
                palimpsest_web::command::fingerprint_requests,
            ));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}/records", listener.local_addr().expect("addr"));
        let stop = shutdown.clone();
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move { stop.cancelled().await })
                .await;
        });
        let admin = state.admin_token.as_ref().clone();
        let records = Records {
            db,
            state,
            base,
            http: reqwest::Client::new(),
            admin,
            shutdown,
            tasks: vec![runner, server],
        };
        let (status, body) = records.admin_call("declareClass", article()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        records
    }

    pub async fn stop(self) {
        self.shutdown.cancel();
        for t in self.tasks {
            let _ = t.await;
        }
        let _ = std::fs::remove_dir_all(&self.state.data_dir);
        self.db.drop().await;
    }

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
