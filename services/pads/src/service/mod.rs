//! The write path shared by every command: load the states a command reads (remembering their
//! versions), decide, append everything in one transaction with an expected version per
//! stream, retry on a concurrent change, and wait until the store shows the write.
//!
//! A command handler is a loop:
//!
//! ```ignore
//! let mut retry = Retry::new();
//! loop {
//!     let mut v = retry.attempt()?;
//!     let pad = pads.pad(&mut v, &id).await?;
//!     let decision = decide(&pad, ...)?;
//!     if pads.commit(&decision, &v).await? { break; }
//! }
//! ```

pub mod folding;
pub mod repository;

use crate::api::envelope::Failure;
use crate::domain::{Author, Decision, Group, Mapping, Pad, Session};
use crate::projection::NAME as PROJECTION;
use palimpsest_events::{ExpectedVersion, Metadata, StreamName};
use palimpsest_log::{AppendError, AppendRequest};
use palimpsest_web::AppState;
use repository::{LoadError, Repository, stream};
use std::collections::HashMap;
use std::sync::Arc;

/// How many times a command is decided again after a concurrent writer moved a stream it read.
const MAX_ATTEMPTS: usize = 25;

/// The context's shared state: the platform's, the stream states, the API key.
#[derive(Clone)]
pub struct Pads {
    /// The platform's state (log, read pool, read-your-writes).
    pub state: AppState,
    /// Stream states.
    pub repo: Arc<Repository>,
    /// The API key every call must carry.
    pub apikey: Arc<String>,
}

/// The versions of the streams one attempt read.
#[derive(Debug, Default)]
pub struct Versions(HashMap<StreamName, i64>);

impl Versions {
    fn record(&mut self, category: &str, key: &str, version: i64) {
        if let Ok(s) = stream(category, key) {
            self.0.insert(s, version);
        }
    }

    fn expected(&self, stream: &StreamName) -> ExpectedVersion {
        match self.0.get(stream) {
            Some(v) if *v > 0 => ExpectedVersion::Exact(*v),
            _ => ExpectedVersion::NoStream,
        }
    }
}

/// Counts the attempts of one command: each attempt loads fresh states into new [`Versions`];
/// a command decided again too often (streams changing under it all the time) gives up.
#[derive(Debug)]
pub struct Retry {
    left: usize,
}

impl Retry {
    /// A command's attempts.
    pub fn new() -> Self {
        Retry { left: MAX_ATTEMPTS }
    }

    /// Starts the next attempt.
    pub fn attempt(&mut self) -> Result<Versions, Failure> {
        if self.left == 0 {
            return Err(Failure::internal(
                "too many concurrent changes to the same records",
            ));
        }
        self.left -= 1;
        Ok(Versions::default())
    }
}

impl Default for Retry {
    fn default() -> Self {
        Self::new()
    }
}

impl From<LoadError> for Failure {
    fn from(e: LoadError) -> Self {
        Failure::internal(e)
    }
}

/// The append of a decision, each stream expected at the version the attempt read.
fn append_request(decision: &Decision, versions: &Versions) -> Result<AppendRequest, Failure> {
    let mut req = AppendRequest::new().metadata(Metadata {
        actor: Some("pads-api".into()),
        correlation_id: Some(uuid::Uuid::new_v4()),
        ..Metadata::default()
    });
    let mut written = Vec::new();
    for w in &decision.writes {
        let (category, key) = w.stream();
        let s = stream(category, key).map_err(Failure::internal)?;
        let events = w.encode().map_err(Failure::internal)?;
        let expected = versions.expected(&s);
        written.push(s.clone());
        req = req.stream(s, expected, events);
    }
    for (category, key) in &decision.checks {
        let s = stream(category, key).map_err(Failure::internal)?;
        if !written.contains(&s) {
            let expected = versions.expected(&s);
            req = req.stream(s, expected, Vec::new());
        }
    }
    Ok(req)
}

impl Pads {
    /// Appends `decision` with every stream expected at the version `versions` recorded, then
    /// waits until the store shows it. `Ok(false)` means a stream moved meanwhile: load and
    /// decide again. An empty decision appends nothing.
    pub async fn commit(&self, decision: &Decision, versions: &Versions) -> Result<bool, Failure> {
        if decision.is_empty() {
            return Ok(true);
        }
        let req = append_request(decision, versions)?;
        match self.state.store.append(req).await {
            Ok(appended) => {
                self.repo.advance(&appended.events);
                self.state
                    .wait_for(PROJECTION, appended.last_position)
                    .await
                    .map_err(palimpsest_web::ApiError::from)?;
                Ok(true)
            }
            Err(AppendError::WrongExpectedVersion { stream, .. }) => {
                tracing::debug!(%stream, "concurrent change; deciding again");
                Ok(false)
            }
            Err(e @ (AppendError::Refused(_) | AppendError::Invalid(_))) => {
                Err(Failure::api(e.to_string()))
            }
            Err(e) => Err(Failure::internal(e)),
        }
    }

    /// Loads pad `id`, recording its version.
    pub async fn pad(&self, v: &mut Versions, id: &str) -> Result<Pad, Failure> {
        let loaded = self.repo.pad(id).await?;
        v.record(palimpsest_events::pads::PAD, id, loaded.version);
        Ok(loaded.state)
    }

    /// Loads author `id`, recording its version.
    pub async fn author(&self, v: &mut Versions, id: &str) -> Result<Author, Failure> {
        let loaded = self.repo.author(id).await?;
        v.record(palimpsest_events::pads::AUTHOR, id, loaded.version);
        Ok(loaded.state)
    }

    /// Loads group `id`, recording its version.
    pub async fn group(&self, v: &mut Versions, id: &str) -> Result<Group, Failure> {
        let loaded = self.repo.group(id).await?;
        v.record(palimpsest_events::pads::GROUP, id, loaded.version);
        Ok(loaded.state)
    }

    /// Loads session `id`, recording its version.
    pub async fn session(&self, v: &mut Versions, id: &str) -> Result<Session, Failure> {
        let loaded = self.repo.session(id).await?;
        v.record(palimpsest_events::pads::SESSION, id, loaded.version);
        Ok(loaded.state)
    }

    /// Loads the token, author mapper or group mapper `key`, recording its version.
    pub async fn mapping(
        &self,
        v: &mut Versions,
        category: &'static str,
        key: &str,
    ) -> Result<Mapping, Failure> {
        let loaded = self.repo.mapping(category, key).await?;
        v.record(category, key, loaded.version);
        Ok(loaded.state)
    }

    /// Loads the authors `ids` (skipping empty ids), recording their versions.
    pub async fn authors(
        &self,
        v: &mut Versions,
        ids: impl IntoIterator<Item = String>,
    ) -> Result<crate::domain::Authors, Failure> {
        let mut map = HashMap::new();
        for id in ids {
            if id.is_empty() || map.contains_key(&id) {
                continue;
            }
            let a = self.author(v, &id).await?;
            map.insert(id, a);
        }
        Ok(crate::domain::Authors::new(map))
    }
}
