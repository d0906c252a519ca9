//! One try of a command: the streams it read, each with the version it was read at.

use super::cache::Cached;
use super::decision::{Answer, Decision};
use super::error::CommandError;
use super::request::CommandRequest;
use super::runner::{Command, CommandRunner};
use palimpsest_events::{DecodeError, Metadata, RecordedEvent, StreamName};
use palimpsest_log::LogError;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Events read per round trip while catching a state up.
const PAGE: i64 = 1000;

/// Most log positions a first try looks through in this process's memory of the log for a kept
/// state's new events, instead of reading its stream.
const SCAN: i64 = 256;

/// A stream's write-side state, folded from its events. Commands decide from these, never
/// from a read model; the runner caches them per process.
pub trait StreamState: Clone + Send + Sync + 'static {
    /// The state of a stream with no events.
    fn initial(stream: &StreamName) -> Self;
    /// Folds one recorded event of the stream into the state.
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError>;
}

/// Why a stream's state could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The log could not be read.
    #[error(transparent)]
    Log(#[from] LogError),
    /// A recorded event does not decode as the stream's payload type.
    #[error("stream {stream}: {source}")]
    Decode {
        /// The stream whose event is unreadable.
        stream: StreamName,
        /// What did not decode.
        source: DecodeError,
    },
}

/// The streams one try of a command has read, with their versions: what its append expects.
/// A cheap handle (clones share what was read), handed to the command's decider by value.
#[derive(Clone)]
pub struct Attempt {
    runner: CommandRunner,
    metadata: Arc<Metadata>,
    versions: Arc<Mutex<HashMap<StreamName, i64>>>,
    first: bool,
    assumed: Arc<AtomicBool>,
    /// The streams taken from memory without reading the log ([`Attempt::load`]).
    unread: Arc<Mutex<Vec<StreamName>>>,
}

impl Attempt {
    /// Try `number` (0 for the first) of a command whose events carry `metadata`.
    pub(crate) fn new(runner: CommandRunner, metadata: Metadata, number: u32) -> Self {
        Attempt {
            runner,
            metadata: Arc::new(metadata),
            versions: Arc::default(),
            first: number == 0,
            assumed: Arc::default(),
            unread: Arc::default(),
        }
    }

    /// Like [`Attempt::load`] for a stream the command expects not to exist yet (a document
    /// being created under a fresh key): on the command's first try, when this process holds
    /// no state of it, it is taken as new without reading the log, and the append expects
    /// `NoStream`. If it exists after all, that append fails its expected version, and the
    /// next try (never a first one) loads it. Saves the read round trip of every creation.
    /// A decider that refuses the command on such a try should not answer the refusal but try
    /// again ([`Attempt::assumed_new`]): it decided on a guess.
    pub async fn load_expecting_new<S: StreamState>(
        &self,
        stream: &StreamName,
    ) -> Result<S, LoadError> {
        if self.first && !self.runner.cache.holds::<S>(stream) {
            self.assumed.store(true, Ordering::Relaxed);
            self.read_at(stream, 0);
            return Ok(S::initial(stream));
        }
        self.load(stream).await
    }

    /// The current state of `stream`, recording the version read.
    ///
    /// On a command's first try, a state this process keeps is brought up to date from its
    /// memory of the log when that memory holds every event since the state was last known
    /// current, up to the head this process knows ([`RecentEvents`]): no read of the log at
    /// all. Such a stream is *unread*: the command's append checks it is still at the version
    /// read, so an event another process appended that this one had not heard of yet fails the
    /// append, and the next try (never a first one) reads the log.
    ///
    /// [`RecentEvents`]: palimpsest_log::recent::RecentEvents
    pub async fn load<S: StreamState>(&self, stream: &StreamName) -> Result<S, LoadError> {
        self.load_seeded(stream, async { None }).await
    }

    /// Like [`Attempt::load`], but when the process has no cached state for the stream it
    /// starts from `seed` (a snapshot at a known version, e.g. a record a projection keeps)
    /// and folds only the events after it: a long stream loads as fast as a short one.
    pub async fn load_seeded<S: StreamState>(
        &self,
        stream: &StreamName,
        seed: impl Future<Output = Option<(i64, S)>>,
    ) -> Result<S, LoadError> {
        let start = match self.runner.cache.get::<S>(stream) {
            Some(cached) => match self.current_from_memory(stream, cached)? {
                Ok(current) => return Ok(self.took(stream, current, true)),
                Err(cached) => (cached.version, cached.state),
            },
            None => seed.await.unwrap_or_else(|| (0, S::initial(stream))),
        };
        let current = self.catch_up(stream, start).await?;
        Ok(self.took(stream, current, false))
    }

    /// `cached` brought up to date from this process's memory of the log, when this is a first
    /// try and the memory holds every event from where it was known current to the head this
    /// process knows (at most [`SCAN`] positions); `None`: read the log. Folds into `cached`
    /// only once it knows the memory will do, so a state is copied no more than it must be.
    fn current_from_memory<S: StreamState>(
        &self,
        stream: &StreamName,
        mut cached: Cached<S>,
    ) -> Result<Result<Cached<S>, Cached<S>>, LoadError> {
        let Some((last, new)) = self.new_in_memory(stream, &cached) else {
            return Ok(Err(cached));
        };
        for event in &new {
            fold(&mut cached.state, event)?;
            cached.version = event.version;
        }
        cached.seen_at = cached.seen_at.max(last);
        Ok(Ok(cached))
    }

    /// The events of `stream` after `cached`'s version in this process's memory of the log, and
    /// the last position that memory covers, when it covers everything from where `cached` was
    /// known current to the head this process knows, and the stream's versions follow on
    /// without a gap; `None` otherwise (and on any try but the first).
    fn new_in_memory<S>(
        &self,
        stream: &StreamName,
        cached: &Cached<S>,
    ) -> Option<(i64, Vec<RecordedEvent>)> {
        if !self.first {
            return None;
        }
        let store = &self.runner.store;
        let head = store.head().current();
        if head <= cached.seen_at {
            return Some((cached.seen_at, Vec::new()));
        }
        if head - cached.seen_at > SCAN {
            return None;
        }
        let slices = store.recent().after(cached.seen_at, SCAN as usize)?;
        let last = slices
            .last()
            .and_then(|s| s.last())
            .map(|e| e.position)
            .filter(|&p| p >= head)?;
        let mut new = Vec::new();
        // A state read from the log may already hold an event past where it was known current.
        let mut version = cached.version;
        let theirs = slices.iter().flat_map(|s| s.iter());
        for event in theirs.filter(|e| &e.stream == stream && e.version > cached.version) {
            if event.version != version + 1 {
                return None;
            }
            version = event.version;
            new.push(event.clone());
        }
        Some((last, new))
    }

    /// Keeps `current` as the process's state of `stream` and as what this try read (`unread`:
    /// taken from memory, [`Attempt::load`]); its state.
    fn took<S: StreamState>(&self, stream: &StreamName, current: Cached<S>, unread: bool) -> S {
        let state = current.state.clone();
        self.read_at(stream, current.version);
        if unread {
            lock(&self.unread).push(stream.clone());
        }
        self.runner.cache.put(stream, current);
        state
    }

    /// The current states of several streams of one kind, in the order asked, recording each
    /// version read: one query of the log for all of them (a stream with more than a page of
    /// new events then catches up on its own). What a batch of a hundred documents loads.
    pub async fn load_many<S: StreamState>(
        &self,
        streams: &[StreamName],
    ) -> Result<Vec<S>, LoadError> {
        let mut distinct: Vec<StreamName> = Vec::with_capacity(streams.len());
        let mut index: HashMap<&StreamName, usize> = HashMap::with_capacity(streams.len());
        for stream in streams {
            index.entry(stream).or_insert_with(|| {
                distinct.push(stream.clone());
                distinct.len() - 1
            });
        }
        let states = self.load_distinct::<S>(&distinct).await?;
        Ok(streams
            .iter()
            .map(|stream| states[index[stream]].clone())
            .collect())
    }

    async fn load_distinct<S: StreamState>(
        &self,
        streams: &[StreamName],
    ) -> Result<Vec<S>, LoadError> {
        let mut states: Vec<Option<S>> = Vec::with_capacity(streams.len());
        let (mut left, mut starts) = (Vec::new(), Vec::new());
        for (i, stream) in streams.iter().enumerate() {
            let start = match self.runner.cache.get::<S>(stream) {
                Some(cached) => match self.current_from_memory(stream, cached)? {
                    Ok(current) => {
                        states.push(Some(self.took(stream, current, true)));
                        continue;
                    }
                    Err(cached) => (cached.version, cached.state),
                },
                None => (0, S::initial(stream)),
            };
            states.push(None);
            left.push(i);
            starts.push(start);
        }
        let asked: Vec<&StreamName> = left.iter().map(|&i| &streams[i]).collect();
        for (i, state) in left.into_iter().zip(self.read_many(&asked, starts).await?) {
            states[i] = Some(state);
        }
        // Every stream was taken from memory or read: none is left out.
        Ok(states.into_iter().flatten().collect())
    }

    /// The current states of `streams` read from the log after `starts` (a version and the
    /// state at it, for each): one query for all of them (a stream with more than a page of new
    /// events then catches up on its own).
    async fn read_many<S: StreamState>(
        &self,
        streams: &[&StreamName],
        mut starts: Vec<(i64, S)>,
    ) -> Result<Vec<S>, LoadError> {
        if streams.is_empty() {
            return Ok(Vec::new());
        }
        let seen_at = self.runner.store.head().current();
        let asked: Vec<(StreamName, i64)> = streams
            .iter()
            .zip(&starts)
            .map(|(stream, (version, _))| ((*stream).clone(), *version))
            .collect();
        let events = self.runner.store.read_streams(&asked, PAGE).await?;
        let mut read = vec![0i64; streams.len()];
        let mut at = 0;
        for event in &events {
            while at < streams.len() && *streams[at] != event.stream {
                at += 1;
            }
            let Some((version, state)) = starts.get_mut(at) else {
                break;
            };
            fold(state, event)?;
            *version = event.version;
            read[at] += 1;
        }
        let mut states = Vec::with_capacity(streams.len());
        for ((stream, (version, state)), count) in streams.iter().zip(starts).zip(read) {
            let current = if count < PAGE {
                Cached {
                    version,
                    seen_at,
                    state,
                }
            } else {
                self.catch_up(stream, (version, state)).await?
            };
            states.push(self.took(stream, current, false));
        }
        Ok(states)
    }

    /// `start` caught up from the log, known current at the head this process knew before it
    /// read.
    async fn catch_up<S: StreamState>(
        &self,
        stream: &StreamName,
        (mut version, mut state): (i64, S),
    ) -> Result<Cached<S>, LoadError> {
        let seen_at = self.runner.store.head().current();
        loop {
            let events = self.runner.store.read_stream(stream, version, PAGE).await?;
            for event in &events {
                fold(&mut state, event)?;
                version = event.version;
            }
            if (events.len() as i64) < PAGE {
                return Ok(Cached {
                    version,
                    seen_at,
                    state,
                });
            }
        }
    }

    /// Runs `decide` as a *step*: a command of its own that this one needs before it can
    /// decide (resources' id lease), through the same runner: its own loads, its own append at
    /// its own expected versions, its own retries, no Idempotency-Key and no read-your-writes.
    /// Its events carry this command's metadata (actor, correlation); its value comes back
    /// typed. A step appended for a try that is later decided again stays appended: steps are
    /// for what may be taken and never used (a leased id range is skipped, never reused).
    pub async fn step<E, T, F, Fut>(
        &self,
        context: &'static str,
        decide: F,
    ) -> Result<T, CommandError<E>>
    where
        F: FnMut(Attempt) -> Fut,
        Fut: Future<Output = Result<Decision<T>, CommandError<E>>>,
    {
        let request = CommandRequest::none();
        let mut metadata = (*self.metadata).clone();
        metadata.idempotency_key = None;
        let command = Command {
            request: &request,
            context,
            projections: &[],
            metadata,
        };
        match Box::pin(self.runner.run_for(command, decide)).await? {
            Answer::Decided { value, .. } => Ok(value),
            Answer::Repeated(_) => Err(CommandError::Internal(
                "a step without Idempotency-Key was answered as a repeat".into(),
            )),
        }
    }

    /// Whether this try took a stream as new without reading it
    /// ([`Attempt::load_expecting_new`]).
    pub fn assumed_new(&self) -> bool {
        self.assumed.load(Ordering::Relaxed)
    }

    /// Records that the command read `stream` at `version` (the first read counts: a command
    /// decides against what it saw first).
    fn read_at(&self, stream: &StreamName, version: i64) {
        lock(&self.versions)
            .entry(stream.clone())
            .or_insert(version);
    }

    /// The streams this try took from memory without reading the log ([`Attempt::load`]): its
    /// append checks them at the versions read.
    pub(crate) fn unread(&self) -> Vec<StreamName> {
        lock(&self.unread).clone()
    }

    /// The version `stream` was read at; 0 when it has no event or was not read.
    pub fn version(&self, stream: &StreamName) -> i64 {
        match self.versions.lock() {
            Ok(versions) => versions.get(stream).copied().unwrap_or(0),
            Err(poisoned) => poisoned.into_inner().get(stream).copied().unwrap_or(0),
        }
    }
}

/// Folds `event` into `state`, naming its stream when it does not decode.
fn fold<S: StreamState>(state: &mut S, event: &RecordedEvent) -> Result<(), LoadError> {
    state.fold(event).map_err(|source| LoadError::Decode {
        stream: event.stream.clone(),
        source,
    })
}

/// `mutex`'s guard, poisoned or not (what it guards stays consistent between statements).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}
