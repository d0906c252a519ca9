//! Loading stream states cheaply: each state is kept in memory with the version it was folded
//! to, and brought up to date by reading only the events after that version. A pad seen for the
//! first time starts from its record in the store (built up to a known stream version) rather
//! than from its whole history, so a pad with 100,000 revisions loads as fast as a new one.

use super::folding::Folded;
use crate::domain::{Author, Group, Mapping, Pad, Session, pool_of};
use crate::projection::NAME as SCHEMA;
use crate::store::keys;
use crate::store::records::PadRecord;
use deadpool_postgres::Pool;
use palimpsest_events::StreamName;
use palimpsest_events::pads::{self, AText};
use palimpsest_log::EventStore;
use std::collections::HashMap;
use std::sync::Mutex;

/// Events read per round trip while catching a state up.
const PAGE: i64 = 1000;

/// A loaded state and the stream version it reflects (0: no event yet).
#[derive(Debug, Clone)]
pub struct Loaded<T> {
    /// The stream version folded.
    pub version: i64,
    /// The state.
    pub state: T,
}

/// Why a state could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The log could not be read.
    #[error(transparent)]
    Log(#[from] palimpsest_log::LogError),
    /// A recorded event does not decode.
    #[error(transparent)]
    Decode(#[from] palimpsest_events::DecodeError),
    /// A stream name was refused (an id too long for a stream key).
    #[error(transparent)]
    Name(#[from] palimpsest_events::StreamNameError),
}

/// States of one kind by stream key, each with its version.
struct Cache<T> {
    entries: Mutex<HashMap<String, Loaded<T>>>,
    capacity: usize,
}

impl<T: Clone> Cache<T> {
    fn new(capacity: usize) -> Self {
        Cache {
            entries: Mutex::new(HashMap::new()),
            capacity,
        }
    }

    fn get(&self, key: &str) -> Option<Loaded<T>> {
        self.entries.lock().ok()?.get(key).cloned()
    }

    fn put(&self, key: &str, loaded: Loaded<T>) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        if entries
            .get(key)
            .is_some_and(|e| e.version >= loaded.version)
        {
            return;
        }
        if entries.len() >= self.capacity && !entries.contains_key(key) {
            let victims: Vec<String> = entries
                .keys()
                .take(self.capacity / 4 + 1)
                .cloned()
                .collect();
            for v in victims {
                entries.remove(&v);
            }
        }
        entries.insert(key.to_owned(), loaded);
    }
}

/// Loads stream states through per-kind caches.
pub struct Repository {
    store: EventStore,
    read: Pool,
    pads: Cache<Pad>,
    authors: Cache<Author>,
    groups: Cache<Group>,
    sessions: Cache<Session>,
    maps: Cache<Mapping>,
}

/// The stream of category `category` and key `key` in the pads context.
pub fn stream(category: &str, key: &str) -> Result<StreamName, palimpsest_events::StreamNameError> {
    StreamName::new(
        pads::CONTEXT,
        category,
        crate::stream_keys::encode(category, key),
    )
}

impl Repository {
    /// A repository over the log and the read-model pool.
    pub fn new(store: EventStore, read: Pool) -> Self {
        Repository {
            store,
            read,
            pads: Cache::new(2_000),
            authors: Cache::new(100_000),
            groups: Cache::new(100_000),
            sessions: Cache::new(100_000),
            maps: Cache::new(100_000),
        }
    }

    /// Folds the events after `loaded.version` into it.
    async fn catch_up<T: Folded>(
        &self,
        stream: &StreamName,
        mut loaded: Loaded<T>,
    ) -> Result<Loaded<T>, LoadError> {
        loop {
            let events = self.store.read_stream(stream, loaded.version, PAGE).await?;
            for e in &events {
                loaded.state.fold(e)?;
                loaded.version = e.version;
            }
            if (events.len() as i64) < PAGE {
                return Ok(loaded);
            }
        }
    }

    async fn load<T: Folded>(
        &self,
        cache: &Cache<T>,
        category: &str,
        key: &str,
    ) -> Result<Loaded<T>, LoadError> {
        let Ok(stream) = stream(category, key) else {
            // No stream can have this key (empty or too long): nothing was ever recorded there.
            return Ok(Loaded {
                version: 0,
                state: T::initial(key),
            });
        };
        let start = cache.get(key).unwrap_or_else(|| Loaded {
            version: 0,
            state: T::initial(key),
        });
        let loaded = self.catch_up(&stream, start).await?;
        cache.put(key, loaded.clone());
        Ok(loaded)
    }

    /// A pad's record in the store with the pad stream version it reflects, if the projection
    /// has seen the pad.
    async fn pad_from_store(&self, pad_id: &str) -> Option<Loaded<Pad>> {
        let client = self.read.get().await.ok()?;
        let row = client
            .query_opt(
                &format!(
                    "SELECT v.version, p.value, r.value FROM {SCHEMA}.pad_stream_versions v \
                     LEFT JOIN {SCHEMA}.store p ON p.key = $2 \
                     LEFT JOIN {SCHEMA}.store r ON r.key = $3 WHERE v.pad_id = $1"
                ),
                &[&pad_id, &keys::pad(pad_id), &keys::pad_to_read_only(pad_id)],
            )
            .await
            .ok()??;
        let version: i64 = row.get(0);
        let record: Option<String> = row.get(1);
        let read_only: Option<String> = row.get(2);
        let mut pad = Pad::absent(pad_id);
        if let Some(text) = record {
            let record: PadRecord = serde_json::from_str(&text).ok()?;
            pad.exists = true;
            pad.pool = pool_of(&record.pool.attributes());
            pad.atext = AText::from(record.atext);
            pad.head = record.head;
            pad.chat_head = record.chat_head;
            pad.public_status = record.public_status;
            pad.saved_revisions = record.saved_revisions.into_iter().map(Into::into).collect();
            pad.read_only_id = read_only.and_then(|r| serde_json::from_str(&r).ok());
        }
        Some(Loaded {
            version,
            state: pad,
        })
    }

    /// The pad `pad_id`, up to date.
    pub async fn pad(&self, pad_id: &str) -> Result<Loaded<Pad>, LoadError> {
        let Ok(stream) = stream(pads::PAD, pad_id) else {
            return Ok(Loaded {
                version: 0,
                state: Pad::absent(pad_id),
            });
        };
        let start = match self.pads.get(pad_id) {
            Some(cached) => cached,
            None => match self.pad_from_store(pad_id).await {
                Some(from_store) => from_store,
                None => Loaded {
                    version: 0,
                    state: Pad::absent(pad_id),
                },
            },
        };
        let loaded = self.catch_up(&stream, start).await?;
        self.pads.put(pad_id, loaded.clone());
        Ok(loaded)
    }

    /// The author `author_id`, up to date.
    pub async fn author(&self, author_id: &str) -> Result<Loaded<Author>, LoadError> {
        self.load(&self.authors, pads::AUTHOR, author_id).await
    }

    /// The group `group_id`, up to date.
    pub async fn group(&self, group_id: &str) -> Result<Loaded<Group>, LoadError> {
        self.load(&self.groups, pads::GROUP, group_id).await
    }

    /// The session `session_id`, up to date.
    pub async fn session(&self, session_id: &str) -> Result<Loaded<Session>, LoadError> {
        self.load(&self.sessions, pads::SESSION, session_id).await
    }

    /// The mapping of stream (`category`, `key`): a token, author mapper or group mapper.
    pub async fn mapping(
        &self,
        category: &'static str,
        key: &str,
    ) -> Result<Loaded<Mapping>, LoadError> {
        let cache_key = format!("{category}\u{0}{key}");
        let Ok(stream) = stream(category, key) else {
            return Ok(Loaded {
                version: 0,
                state: Mapping::default(),
            });
        };
        let start = self.maps.get(&cache_key).unwrap_or_else(|| Loaded {
            version: 0,
            state: Mapping::default(),
        });
        let loaded = self.catch_up(&stream, start).await?;
        self.maps.put(&cache_key, loaded.clone());
        Ok(loaded)
    }

    /// Folds just-appended events into the cached states they extend.
    pub fn advance(&self, events: &[palimpsest_events::RecordedEvent]) {
        for e in events {
            if e.stream.context != pads::CONTEXT {
                continue;
            }
            let key = e.stream.key.as_str();
            match e.stream.category.as_str() {
                pads::PAD => extend(&self.pads, key, e),
                pads::AUTHOR => extend(&self.authors, key, e),
                pads::GROUP => extend(&self.groups, key, e),
                pads::SESSION => extend(&self.sessions, key, e),
                c @ (pads::TOKEN | pads::AUTHOR_MAPPER | pads::GROUP_MAPPER) => {
                    extend(&self.maps, &format!("{c}\u{0}{key}"), e)
                }
                _ => {}
            }
        }
    }
}

/// Folds `event` into the cached state of `key` if it is the very next event of that state.
fn extend<T: Folded>(cache: &Cache<T>, key: &str, event: &palimpsest_events::RecordedEvent) {
    let Some(mut loaded) = cache.get(key) else {
        return;
    };
    if loaded.version + 1 != event.version {
        return;
    }
    if loaded.state.fold(event).is_ok() {
        loaded.version = event.version;
        cache.put(key, loaded);
    }
}
