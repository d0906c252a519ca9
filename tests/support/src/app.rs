//! The real app for tests, the one harness every context's tests and the end-to-end tests use:
//! a fresh database, every context and projector (and the relay when given a NATS server), on a
//! random port. It cleans up after itself: [`TestApp::stop`] joins its tasks, drops its
//! database and removes its temporary data folder; a `TestApp` dropped without `stop` (a test
//! that panicked) still drops its database and folder.

use crate::TestDb;
use palimpsest::config::Settings;
use palimpsest::contexts;
use palimpsest::processes::{self, Roles, Running};
use palimpsest_web::AppState;
use std::net::SocketAddr;

/// A running app owned by one test.
pub struct TestApp {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its state (the log, the read pool, the command runner), for assertions beneath HTTP.
    pub state: AppState,
    db: Option<TestDb>,
    data_dir: Option<tempfile::TempDir>,
    running: Option<Running>,
}

impl TestApp {
    /// Starts HTTP and every projector (no relay).
    pub async fn start() -> TestApp {
        Self::launch(None, true).await
    }

    /// Starts HTTP, every projector, and the relay to the NATS server at `nats_url`.
    pub async fn start_with_nats(nats_url: &str) -> TestApp {
        Self::launch(Some(nats_url.to_owned()), true).await
    }

    /// Starts HTTP only: no projector runs, so a test can show what holds while read models
    /// lag (start one later with [`TestApp::start_projectors`]).
    pub async fn start_without_projectors() -> TestApp {
        Self::launch(None, false).await
    }

    async fn launch(nats_url: Option<String>, project: bool) -> TestApp {
        let db = TestDb::create().await;
        let data_dir = tempfile::Builder::new()
            .prefix("palimpsest-app-")
            .tempdir()
            .unwrap_or_else(|e| panic!("temp dir: {e}"));
        let settings = Settings {
            database_url: db.url().to_owned(),
            nats_url: nats_url.clone().unwrap_or_default(),
            nats_replicas: 1,
            data_dir: data_dir.path().to_path_buf(),
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
                project,
            },
        )
        .await
        .unwrap_or_else(|e| panic!("app did not start: {e:#}"));
        TestApp {
            addr: running.addr.unwrap_or_else(|| panic!("no http address")),
            state: running.state.clone(),
            db: Some(db),
            data_dir: Some(data_dir),
            running: Some(running),
        }
    }

    /// Starts every projector of every context beside a running app (after
    /// [`TestApp::start_without_projectors`]); they stop with the app.
    pub fn start_projectors(&mut self) {
        let Some(running) = &mut self.running else {
            return;
        };
        for projection in contexts::projections(&contexts::all()) {
            running.spawn(palimpsest_projections::spawn_runner(
                self.state.store.clone(),
                projection,
                running.shutdown.clone(),
            ));
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

    /// The folder of the app's generated secrets (e.g. pads' `APIKEY.txt`).
    pub fn data_dir(&self) -> std::path::PathBuf {
        self.data_dir
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .unwrap_or_default()
    }

    /// The app's database URL (for a second process against the same log).
    pub fn database_url(&self) -> String {
        self.db
            .as_ref()
            .map(|d| d.url().to_owned())
            .unwrap_or_default()
    }

    /// Stops the app, waits for every task, drops its database and removes its folder.
    pub async fn stop(mut self) {
        if let Some(running) = self.running.take() {
            running.stop().await;
        }
        if let Some(db) = self.db.take() {
            db.drop().await;
        }
        self.data_dir.take();
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(running) = self.running.take() {
            running.shutdown.cancel();
        }
        if let Some(db) = self.db.take() {
            // Not stopped (the test panicked): drop the database from a thread of its own, as
            // this runtime may be shutting down.
            let dropped = std::thread::spawn(move || {
                match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime.block_on(db.drop()),
                    Err(e) => eprintln!("test database not dropped: {e}"),
                }
            });
            if dropped.join().is_err() {
                eprintln!("test database clean-up panicked");
            }
        }
    }
}
