//! The real app for tests, the one harness every context's tests and the end-to-end tests use:
//! a fresh database, every context and projector (and the relay when given a NATS server), on a
//! random port. It cleans up after itself: [`TestApp::stop`] joins its tasks, drops its
//! database and removes its temporary data folder; a `TestApp` dropped without `stop` (a test
//! that panicked) still drops its database and folder.

use crate::TestDb;
use palimpsest::config::{
    ALL_READ_MODELS, LimitSettings, ReadModelPartitions, ReadModelUrl, Settings,
};
use palimpsest::contexts::{self, ContextSettings};
use palimpsest::processes::{self, Roles, Running};
use palimpsest_events::{RecordedEvent, StreamName};
use palimpsest_records::settings::Settings as RecordsSettings;
use palimpsest_resources::content::{ContentConfig, DEFAULT_INLINE_MAX};
use palimpsest_web::AppState;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Mutex;

/// The folder inside the data folder where a test app's resources content goes.
const RESOURCES_CONTENT: &str = "resources-content";

/// A running app owned by one test.
pub struct TestApp {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its state (the log, the read pool, the command runner), for assertions beneath HTTP.
    pub state: AppState,
    db: Option<TestDb>,
    /// The database of the read models, when they live apart from the log.
    read_db: Option<TestDb>,
    database_url: String,
    data_dir: Option<tempfile::TempDir>,
    running: Option<Running>,
    contexts: ContextSettings,
    /// Streams whose events a test wrote invalid on purpose (beneath the API).
    unchecked: Mutex<BTreeSet<StreamName>>,
}

/// How a [`TestApp`] is started: which roles run, the HTTP limits, files put in its data folder
/// before it starts (what an operator puts in `PALIMPSEST_DATA_DIR`: resources' API keys, a
/// records site key) and the contexts' settings (what the binary reads from its flags and
/// environment). Everything goes through the binary's own `processes::start`.
pub struct TestAppBuilder {
    nats_url: Option<String>,
    project: bool,
    limits: LimitSettings,
    files: Vec<(String, Vec<u8>)>,
    records: RecordsSettings,
    docs: palimpsest_docs::Settings,
    inline_max: u64,
    database_url: Option<String>,
    subject_prefix: Option<String>,
    stream_name: Option<String>,
    relay_stuck_after: Option<std::time::Duration>,
    read_models_apart: bool,
    read_database: Option<String>,
    read_replica: Option<String>,
    replica_unchecked: bool,
    partitions: Vec<ReadModelPartitions>,
    console_dir: Option<PathBuf>,
}

impl TestAppBuilder {
    /// Keeps every read model in the database at `url` (a test's own server; the app leaves it
    /// in place).
    pub fn read_database(mut self, url: &str) -> Self {
        self.read_database = Some(url.to_owned());
        self
    }

    /// Reads every read model through the streaming replica at `url` (`--read-replica-url
    /// all=URL`).
    pub fn read_replica(mut self, url: &str) -> Self {
        self.read_replica = Some(url.to_owned());
        self
    }

    /// Serves the console's built assets from `dir` (`--console-dir`).
    pub fn console_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.console_dir = Some(dir.into());
        self
    }

    /// Splits read model `name` into `count` partitions (`--partitions NAME=N`).
    pub fn partitions(mut self, name: &str, count: u32) -> Self {
        self.partitions.push(ReadModelPartitions {
            model: name.to_owned(),
            count,
        });
        self
    }

    /// Reads the replica without checking how far it has replayed: only to show what the
    /// check prevents.
    pub fn read_replica_unchecked(mut self) -> Self {
        self.replica_unchecked = true;
        self
    }

    /// Keeps every read model in a fresh database of its own (`--read-database-url
    /// all=URL`), apart from the log's; the app drops it with its own.
    pub fn read_models_apart(mut self) -> Self {
        self.read_models_apart = true;
        self
    }

    /// Also runs the relay to the NATS server at `url`.
    pub fn nats(mut self, url: &str) -> Self {
        self.nats_url = Some(url.to_owned());
        self
    }

    /// Publishes under subject prefix `prefix` (`--nats-subject-prefix`) instead of
    /// `palimpsest`, so that several apps share one NATS server.
    pub fn subject_prefix(mut self, prefix: &str) -> Self {
        self.subject_prefix = Some(prefix.to_owned());
        self
    }

    /// Publishes into JetStream stream `name` (`--nats-stream`) instead of `PALIMPSEST`.
    pub fn stream_name(mut self, name: &str) -> Self {
        self.stream_name = Some(name.to_owned());
        self
    }

    /// Readiness fails once the relay has failed for the same reason this long
    /// (`--relay-stuck-after`; short in tests).
    pub fn relay_stuck_after(mut self, after: std::time::Duration) -> Self {
        self.relay_stuck_after = Some(after);
        self
    }

    /// Runs no projector, so a test can show what holds while read models lag (start them
    /// later with [`TestApp::start_projectors`]).
    pub fn without_projectors(mut self) -> Self {
        self.project = false;
        self
    }

    /// Holds HTTP to `limits` (short timeouts in tests).
    pub fn limits(mut self, limits: LimitSettings) -> Self {
        self.limits = limits;
        self
    }

    /// Writes `bytes` to the file `name` of the data folder before the app starts (e.g.
    /// `resources-keys.json`, `records-key`).
    pub fn data_file(mut self, name: &str, bytes: impl Into<Vec<u8>>) -> Self {
        self.files.push((name.to_owned(), bytes.into()));
        self
    }

    /// The records context's settings (clock, DELTA, task handlers, site key, schema), as the
    /// binary gives them from `--records-schema`.
    pub fn records(mut self, settings: RecordsSettings) -> Self {
        self.records = settings;
        self
    }

    /// The docs context's settings (the administrator's Basic name, the password keys), as the
    /// binary gives them from `--docs-admin-name` and the data folder.
    pub fn docs(mut self, settings: palimpsest_docs::Settings) -> Self {
        self.docs = settings;
        self
    }

    /// Resources content up to `bytes` is stored inline (`PALIMPSEST_RESOURCES_INLINE_MAX`);
    /// the rest goes to `resources-content` inside the data folder.
    pub fn resources_inline_max(mut self, bytes: u64) -> Self {
        self.inline_max = bytes;
        self
    }

    /// Serves the log and read models of `other` (a second process against the same
    /// database). This app does not drop that database: `other` does.
    pub fn database_of(mut self, other: &TestApp) -> Self {
        self.database_url = Some(other.database_url());
        self
    }

    /// Starts the app.
    pub async fn start(self) -> TestApp {
        let db = match &self.database_url {
            Some(_) => None,
            None => Some(TestDb::create().await),
        };
        let database_url = match (&db, &self.database_url) {
            (Some(db), _) => db.url().to_owned(),
            (None, url) => url.clone().unwrap_or_default(),
        };
        let data_dir = tempfile::Builder::new()
            .prefix("palimpsest-app-")
            .tempdir()
            .unwrap_or_else(|e| panic!("temp dir: {e}"));
        for (name, bytes) in &self.files {
            std::fs::write(data_dir.path().join(name), bytes)
                .unwrap_or_else(|e| panic!("data file {name}: {e}"));
        }
        let defaults = Settings::for_database(database_url, data_dir.path().to_path_buf());
        let read_db = match self.read_models_apart {
            true => Some(TestDb::create().await),
            false => None,
        };
        let every = |url: &str| ReadModelUrl {
            model: ALL_READ_MODELS.to_owned(),
            url: url.to_owned(),
        };
        let read_database_urls = read_db
            .iter()
            .map(|db| db.url())
            .chain(self.read_database.as_deref())
            .map(every)
            .collect();
        let settings = Settings {
            read_database_urls,
            read_replica_urls: self
                .read_replica
                .as_deref()
                .map(every)
                .into_iter()
                .collect(),
            read_replica_unchecked: self.replica_unchecked,
            partitions: self.partitions,
            console_dir: self.console_dir.unwrap_or(defaults.console_dir.clone()),
            nats_url: self.nats_url.clone().unwrap_or_default(),
            limits: self.limits,
            nats_stream: self.stream_name.clone(),
            nats_subject_prefix: self
                .subject_prefix
                .clone()
                .unwrap_or_else(|| defaults.nats_subject_prefix.clone()),
            relay_stuck_after: self.relay_stuck_after.unwrap_or(defaults.relay_stuck_after),
            ..defaults
        };
        let contexts = ContextSettings {
            records: self.records,
            docs: self.docs,
            resources_content: ContentConfig::new(
                data_dir.path().join(RESOURCES_CONTENT),
                self.inline_max,
            ),
            pads: Default::default(),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let running = processes::start(
            &settings,
            contexts::configured(contexts.clone()),
            Roles {
                http: Some(listener),
                api: true,
                relay: self.nats_url.is_some(),
                project: self.project,
                tree: self.project,
            },
        )
        .await
        .unwrap_or_else(|e| panic!("app did not start: {e:#}"));
        TestApp {
            addr: running.addr.unwrap_or_else(|| panic!("no http address")),
            state: running.state.clone(),
            db,
            read_db,
            database_url: settings.database_url,
            data_dir: Some(data_dir),
            running: Some(running),
            contexts,
            unchecked: Mutex::default(),
        }
    }
}

impl TestApp {
    /// How to start an app other than the default one.
    pub fn builder() -> TestAppBuilder {
        TestAppBuilder {
            nats_url: None,
            project: true,
            limits: LimitSettings::default(),
            files: Vec::new(),
            records: RecordsSettings::default(),
            docs: palimpsest_docs::Settings::default(),
            inline_max: DEFAULT_INLINE_MAX,
            database_url: None,
            subject_prefix: None,
            stream_name: None,
            relay_stuck_after: None,
            read_models_apart: false,
            read_database: None,
            read_replica: None,
            replica_unchecked: false,
            partitions: Vec::new(),
            console_dir: None,
        }
    }

    /// Starts HTTP and every projector (no relay).
    pub async fn start() -> TestApp {
        Self::builder().start().await
    }

    /// Starts HTTP and every projector (no relay), held to `limits` (short timeouts in tests).
    pub async fn start_with_limits(limits: LimitSettings) -> TestApp {
        Self::builder().limits(limits).start().await
    }

    /// Starts HTTP, every projector, and the relay to the NATS server at `nats_url`.
    pub async fn start_with_nats(nats_url: &str) -> TestApp {
        Self::builder().nats(nats_url).start().await
    }

    /// Starts HTTP only: no projector runs, so a test can show what holds while read models
    /// lag (start one later with [`TestApp::start_projectors`]).
    pub async fn start_without_projectors() -> TestApp {
        Self::builder().without_projectors().start().await
    }

    /// Starts every projector of every context beside a running app (after
    /// [`TestApp::start_without_projectors`]); they stop with the app.
    pub fn start_projectors(&mut self) {
        let Some(running) = &mut self.running else {
            return;
        };
        let configured = contexts::configured(self.contexts.clone());
        for runner in processes::projectors(&self.state, &configured, None, &running.shutdown) {
            running.spawn(runner);
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
    pub fn data_dir(&self) -> PathBuf {
        self.data_dir
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .unwrap_or_default()
    }

    /// Where the resources context stores content it does not keep inline (inside
    /// [`TestApp::data_dir`], removed with it).
    pub fn resources_content_dir(&self) -> PathBuf {
        self.data_dir().join(RESOURCES_CONTENT)
    }

    /// The app's database URL (for a second process against the same log).
    pub fn database_url(&self) -> String {
        self.database_url.clone()
    }

    /// The binary's settings for a tool run beside this app (`replay`, `audit`): its log, its
    /// data folder and its read models' own database, if any.
    pub fn tool_settings(&self) -> Settings {
        Settings {
            read_database_urls: self
                .read_database_url()
                .map(|url| ReadModelUrl {
                    model: ALL_READ_MODELS.to_owned(),
                    url,
                })
                .into_iter()
                .collect(),
            ..Settings::for_database(self.database_url(), self.data_dir())
        }
    }

    /// The URL of the read models' own database, when they live apart from the log
    /// ([`TestAppBuilder::read_models_apart`]).
    pub fn read_database_url(&self) -> Option<String> {
        self.read_db.as_ref().map(|db| db.url().to_owned())
    }

    /// Leaves the events of `stream` out of the schema check at [`TestApp::stop`]: a test that
    /// appends an invalid event on purpose (beneath the API) says so.
    pub fn allow_invalid_events(&self, stream: &StreamName) {
        if let Ok(mut unchecked) = self.unchecked.lock() {
            unchecked.insert(stream.clone());
        }
    }

    /// Stops the app, waits for every task, checks every event of its log against its schema
    /// ([`crate::schema_check`]; panics naming those that do not match), drops its database
    /// and removes its folder.
    pub async fn stop(mut self) {
        if let Some(running) = self.running.take() {
            running.stop().await;
        }
        if self.db.is_some() {
            self.check_schemas().await;
        }
        if let Some(db) = self.db.take() {
            db.drop().await;
        }
        if let Some(db) = self.read_db.take() {
            db.drop().await;
        }
        self.data_dir.take();
    }
}

impl TestApp {
    /// Reads the whole log and panics, naming them, on events that do not match their schema.
    async fn check_schemas(&mut self) {
        let mut events = Vec::new();
        loop {
            let after = events.last().map_or(0, |e: &RecordedEvent| e.position);
            match self.state.store.read_all(after, 1000).await {
                Ok(page) if page.is_empty() => break,
                Ok(page) => events.extend(page),
                Err(e) => panic!("schema check: the log does not read: {e}"),
            }
        }
        let unchecked = self.unchecked.lock().map(|u| u.clone()).unwrap_or_default();
        let wrong = crate::schema_check::mismatches(&events, &unchecked);
        if !wrong.is_empty() {
            // Drop the database first: the panic below skips the rest of `stop`.
            if let Some(db) = self.db.take() {
                db.drop().await;
            }
            panic!(
                "{} of {} events do not match their schema (events/schemas/):\n{}",
                wrong.len(),
                events.len(),
                wrong
                    .iter()
                    .take(20)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(running) = self.running.take() {
            running.shutdown.cancel();
        }
        let databases: Vec<TestDb> = self
            .db
            .take()
            .into_iter()
            .chain(self.read_db.take())
            .collect();
        if !databases.is_empty() {
            // Not stopped (the test panicked): drop the databases from a thread of their own,
            // as this runtime may be shutting down.
            let dropped = std::thread::spawn(move || {
                match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime.block_on(async {
                        for db in databases {
                            db.drop().await;
                        }
                    }),
                    Err(e) => eprintln!("test database not dropped: {e}"),
                }
            });
            if dropped.join().is_err() {
                eprintln!("test database clean-up panicked");
            }
        }
    }
}
