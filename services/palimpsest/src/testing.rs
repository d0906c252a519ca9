//! The real app for tests: a fresh database, every context and projector, on a random port.

use crate::config::{LimitSettings, Settings};
use crate::contexts;
use crate::processes::{self, Roles, Running};
use palimpsest_testkit::TestDb;
use palimpsest_web::AppState;
use std::net::SocketAddr;

/// A running app owned by one test. Call [`TestApp::stop`] at the end to drop its database.
pub struct TestApp {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its state (the log, the read pool), for assertions beneath HTTP.
    pub state: AppState,
    /// Its database.
    pub db: TestDb,
    running: Running,
}

impl TestApp {
    /// Starts HTTP and every projector (no relay).
    pub async fn start() -> TestApp {
        Self::start_inner(None, LimitSettings::default()).await
    }

    /// Starts HTTP and every projector (no relay), held to `limits` (short timeouts in tests).
    pub async fn start_with_limits(limits: LimitSettings) -> TestApp {
        Self::start_inner(None, limits).await
    }

    /// Starts HTTP, every projector, and the relay to the NATS server at `nats_url`.
    pub async fn start_with_nats(nats_url: &str) -> TestApp {
        Self::start_inner(Some(nats_url.to_owned()), LimitSettings::default()).await
    }

    async fn start_inner(nats_url: Option<String>, limits: LimitSettings) -> TestApp {
        let db = TestDb::create().await;
        let settings = Settings {
            database_url: db.url().to_owned(),
            nats_url: nats_url.clone().unwrap_or_default(),
            nats_replicas: 1,
            data_dir: std::env::temp_dir().join(format!("palimpsest-app-{}", uuid::Uuid::new_v4())),
            limits,
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let running = processes::start(
            &settings,
            contexts::all(),
            Roles {
                http: Some(listener),
                api: true,
                relay: nats_url.is_some(),
                project: true,
            },
        )
        .await
        .unwrap_or_else(|e| panic!("app did not start: {e:#}"));
        TestApp {
            addr: running.addr.unwrap_or_else(|| panic!("no http address")),
            state: running.state.clone(),
            db,
            running,
        }
    }

    /// The absolute URL of `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// The admin bearer token.
    pub fn admin_token(&self) -> String {
        self.state.admin_token.as_ref().clone()
    }

    /// Stops the app, drops its database and removes its data directory.
    pub async fn stop(self) {
        self.running.stop().await;
        self.db.drop().await;
        let dir = &self.state.data_dir;
        if let Err(e) = std::fs::remove_dir_all(dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(dir = %dir.display(), error = %e, "test data directory left behind");
        }
    }
}
