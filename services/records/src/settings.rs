//! How the context runs: the binary fills [`Settings`] (`ContextSettings` in
//! services/palimpsest), tests give their own.

use crate::seal::SiteKey;
use palimpsest_events::records::ClassDeclaration;
use std::collections::HashMap;
use std::sync::Arc;

/// The clock operations take their time from (UTC epoch ms); tests give their own.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// How the context runs.
#[derive(Clone)]
pub struct Settings {
    /// Classes from the schema file (`--records-schema`), declared on start and on first use.
    pub schema: Vec<ClassDeclaration>,
    /// What a list answer subtracts from its operation's time to give the version the client
    /// stores next (`t - DELTA`), in ms: it must exceed the time from an operation's start to
    /// its rows being readable.
    pub delta_ms: i64,
    /// The operations' clock.
    pub clock: Clock,
    /// Task handlers by `process` name; the runner starts when there is one.
    pub tasks: HashMap<String, crate::tasks::TaskHandler>,
    /// Export / import treatments by class name (`exportOrg`/`importOrg` with `treat`).
    pub treatments: crate::treatment::Treatments,
    /// How often an idle task runner looks for due tasks (ms).
    pub task_poll_ms: u64,
    /// The site key to use instead of loading it (tests).
    pub site_key: Option<SiteKey>,
    /// The site key the operator gives (64 hex digits, `PALIMPSEST_RECORDS_KEY`); `None`: the
    /// one in `<data dir>/records-key`, generated there when missing.
    pub site_key_hex: Option<String>,
    /// Previous site keys (64 hex digits each, `--records-old-keys`): what they sealed still
    /// opens until `rotateKey` has resealed it with the current key.
    pub old_keys: Vec<String>,
    /// How long (ms) zombies and `del` rows are kept before the server purges them; `None`
    /// keeps them until an admin purge (`purgeOrg`/`purgeOrgs`).
    pub zombie_retention_ms: Option<i64>,
    /// How often (ms) the retention purge runs.
    pub retention_every_ms: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            schema: Vec::new(),
            delta_ms: 10_000,
            clock: Arc::new(|| chrono::Utc::now().timestamp_millis()),
            tasks: HashMap::new(),
            treatments: HashMap::new(),
            task_poll_ms: 1000,
            site_key: None,
            site_key_hex: None,
            old_keys: Vec::new(),
            zombie_retention_ms: None,
            retention_every_ms: 60_000,
        }
    }
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("schema", &self.schema.len())
            .field("delta_ms", &self.delta_ms)
            .field("zombie_retention_ms", &self.zombie_retention_ms)
            .field("treatments", &self.treatments.keys().collect::<Vec<_>>())
            .finish()
    }
}
