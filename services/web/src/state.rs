//! The application state every context's router receives.

use crate::background::Background;
use crate::command::{CommandError, CommandRunner};
use crate::read_databases::ReadDatabases;
use crate::read_pool::ReadPool;
use crate::{ApiError, secret};
use palimpsest_log::relay::RelayHealth;
use palimpsest_log::tree::LogSigner;
use palimpsest_log::tree::maker::TreeHealth;
use palimpsest_log::{EventStore, Limits, LogError};
use palimpsest_projections::{ProjectionWatch, Stall};
use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

/// Shared by every handler: the log, a pool for read-model queries, the projection watch for
/// read-your-writes, where secrets live, and the admin token. A context whose read models live
/// in a database of their own gets the state of that database ([`AppState::for_read_model`]).
#[derive(Clone)]
pub struct AppState {
    /// The event log (writes go here).
    pub store: EventStore,
    /// Connections for read-model queries: the read database's, or a caught-up replica's
    /// ([`ReadPool`]); it dereferences to the read database's pool.
    pub read: ReadPool,
    /// The read models that live apart from the log, and their databases.
    pub read_databases: ReadDatabases,
    /// Where generated secrets are kept (`PALIMPSEST_DATA_DIR`, default `.data`).
    pub data_dir: PathBuf,
    /// Follows projection checkpoints.
    pub watch: ProjectionWatch,
    /// The bearer token of `/v1` and admin routes.
    pub admin_token: Arc<String>,
    /// The one command path every context writes through.
    pub commands: CommandRunner,
    /// The relay's state, when this process runs the relay (readiness reports it).
    pub relay: Option<RelayHealth>,
    /// The tree maker's state, when this process runs it (readiness reports it).
    pub tree: Option<TreeHealth>,
    /// The log's key: what this process's appends are signed with, and heads are.
    pub signer: LogSigner,
    /// Tasks contexts run beside their routes; they stop and are joined with the process.
    pub background: Background,
    /// Where the console's built assets are (`/console`), if anywhere.
    pub console_dir: Option<PathBuf>,
}

/// The log's signing key: `given` (the operator's), else the one kept in
/// `<data_dir>/log-signing-key`, generated there when missing (decision 0024).
pub fn log_signer(given: Option<&str>, data_dir: &Path) -> Result<LogSigner, StateError> {
    let hex = secret::load_or_create(given, &data_dir.join("log-signing-key"))?;
    LogSigner::from_hex(&hex).map_err(|e| StateError::SigningKey(e.to_string()))
}

/// Why the state could not be built.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The log could not be opened.
    #[error(transparent)]
    Log(#[from] LogError),
    /// A secret file could not be read or written.
    #[error("secret file: {0}")]
    Secret(#[from] std::io::Error),
    /// The log signing key given is unusable.
    #[error("{0}")]
    SigningKey(String),
}

/// What the operator configures of the platform itself (the binary reads it from its flags and
/// environment; tests give theirs): no library code reads the environment.
#[derive(Clone, Debug, Default)]
pub struct PlatformSettings {
    /// The admin token; `None`: the one kept in `<data_dir>/admin-token`.
    pub admin_token: Option<String>,
    /// The log's signing key (hex); `None`: the one kept in `<data_dir>/log-signing-key`.
    pub log_signing_key: Option<String>,
    /// What the log accepts (event and append sizes).
    pub limits: Limits,
    /// The read models kept in a database of their own: read-model name → its URL (the others
    /// live in the log's database).
    pub read_databases: BTreeMap<String, String>,
    /// Streaming replicas their queries may read: read-model name → the replica's URL.
    pub read_replicas: BTreeMap<String, String>,
    /// How long a request waits for a replica to replay what it must see before it reads the
    /// primary.
    pub replica_wait: std::time::Duration,
    /// Whether a replica's checkpoint is checked before reading it (always, but in the test
    /// that shows what the check prevents).
    pub replica_unchecked: bool,
    /// The read models split into partitions of their streams, and into how many: writes wait
    /// for the partitions of the streams they wrote.
    pub partitions: BTreeMap<String, u32>,
    /// Where the console's built assets are (`--console-dir`).
    pub console_dir: Option<PathBuf>,
}

impl PlatformSettings {
    /// The split of every partitioned read model, as a watch takes it.
    pub fn partition_counts(&self) -> std::collections::HashMap<String, u32> {
        self.partitions.clone().into_iter().collect()
    }
}

impl AppState {
    /// Opens the log at `database_url` (running its migrations) held to `platform`'s limits, and
    /// takes the admin token `platform` gives, else the one in `<data_dir>/admin-token`
    /// (generated there when missing).
    pub async fn connect(
        database_url: &str,
        data_dir: PathBuf,
        platform: PlatformSettings,
    ) -> Result<AppState, StateError> {
        let signer = log_signer(platform.log_signing_key.as_deref(), &data_dir)?;
        let store = EventStore::connect_signed(database_url, signer.clone())
            .await?
            .with_limits(platform.limits);
        let read = palimpsest_log::store::pool(database_url, 16)?;
        let watch = ProjectionWatch::start(database_url, read.clone())?
            .with_partitions(platform.partition_counts());
        let admin_token = secret::load_or_create(
            platform.admin_token.as_deref(),
            &data_dir.join("admin-token"),
        )?;
        let commands = CommandRunner::new(store.clone(), watch.clone());
        let read_databases = ReadDatabases::connect(&platform, &read, &watch)?;
        Ok(AppState {
            commands,
            store,
            read: ReadPool::primary(read),
            read_databases,
            data_dir,
            watch,
            admin_token: Arc::new(admin_token),
            relay: None,
            tree: None,
            signer,
            background: Background::default(),
            console_dir: platform.console_dir,
        })
    }

    /// The state the routes of read model `name`'s context get: its queries read, and its
    /// writes wait, in the read model's own database when it has one; this state otherwise.
    pub fn for_read_model(&self, name: &str) -> AppState {
        let Some(apart) = self.read_databases.of(name) else {
            return self.clone();
        };
        AppState {
            read: apart.queries(name),
            watch: apart.watch.clone(),
            commands: self.commands.waiting_on(apart.watch.clone()),
            ..self.clone()
        }
    }

    /// Read-your-writes: waits (at most a few seconds) until projection `projection` has applied
    /// `position`. The command runner does it for every write; reads never wait. A projection
    /// stopped on an event at or before `position` fails the wait at once
    /// ([`ReadModelStopped`], a 503).
    pub async fn wait_for(&self, projection: &str, position: i64) -> Result<(), ReadModelStopped> {
        self.commands.wait_for(projection, position).await
    }
}

/// A write was stored but the read model it waits for is stopped on an earlier event (or this
/// one): the answer is a 503 that says so, at once, instead of a wait that cannot succeed.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "the write was stored at position {position}, but read model {projection} is stopped at \
     position {} ({}) and will not show it until the projector is fixed",
    stall.position,
    stall.error
)]
pub struct ReadModelStopped {
    /// The read model waited for.
    pub projection: String,
    /// The position of the write.
    pub position: i64,
    /// Where and why the read model stopped.
    pub stall: Stall,
}

impl From<ReadModelStopped> for ApiError {
    fn from(e: ReadModelStopped) -> Self {
        crate::PlatformError::from(e).into()
    }
}

impl<E> From<ReadModelStopped> for CommandError<E> {
    fn from(e: ReadModelStopped) -> Self {
        CommandError::Unavailable(e.to_string())
    }
}
