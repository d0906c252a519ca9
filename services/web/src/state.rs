//! The application state every context's router receives.

use crate::command::CommandRunner;
use crate::secret;
use deadpool_postgres::Pool;
use palimpsest_log::{EventStore, LogError};
use palimpsest_projections::ProjectionWatch;
use std::path::PathBuf;
use std::sync::Arc;

/// Shared by every handler: the log, a pool for read-model queries, the projection watch for
/// read-your-writes, where secrets live, and the admin token.
#[derive(Clone)]
pub struct AppState {
    /// The event log (writes go here).
    pub store: EventStore,
    /// Pool for read-model queries.
    pub read: Pool,
    /// Where generated secrets are kept (`PALIMPSEST_DATA_DIR`, default `.data`).
    pub data_dir: PathBuf,
    /// Follows projection checkpoints.
    pub watch: ProjectionWatch,
    /// The bearer token of `/v1` and admin routes.
    pub admin_token: Arc<String>,
    /// The one command path every context writes through.
    pub commands: CommandRunner,
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
}

impl AppState {
    /// Opens the log at `database_url` (running its migrations) and loads or creates the admin
    /// token (`PALIMPSEST_ADMIN_TOKEN`, else `<data_dir>/admin-token`).
    pub async fn connect(database_url: &str, data_dir: PathBuf) -> Result<AppState, StateError> {
        let store = EventStore::connect(database_url).await?;
        let read = palimpsest_log::store::pool(database_url, 16)?;
        let watch = ProjectionWatch::start(database_url, read.clone())?;
        let admin_token =
            secret::load_or_create("PALIMPSEST_ADMIN_TOKEN", &data_dir.join("admin-token"))?;
        let commands = CommandRunner::new(store.clone(), watch.clone());
        Ok(AppState {
            commands,
            store,
            read,
            data_dir,
            watch,
            admin_token: Arc::new(admin_token),
        })
    }

    /// A state for tests: its data directory is a fresh temporary one.
    pub async fn for_tests(database_url: &str) -> Result<AppState, StateError> {
        let dir = std::env::temp_dir().join(format!("palimpsest-test-{}", uuid::Uuid::new_v4()));
        Self::connect(database_url, dir).await
    }

    /// Read-your-writes: waits (at most a few seconds) until projection `projection` has applied
    /// `position`. The command runner does it for every write; reads never wait.
    pub async fn wait_for(&self, projection: &str, position: i64) {
        self.commands.wait_for(projection, position).await
    }
}
