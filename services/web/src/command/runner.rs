//! The command runner: the retry loop, expected versions, idempotency and read-your-writes,
//! written once for every context.

use super::attempt::Attempt;
use super::cache::StateCache;
use super::call::Kept;
use super::decision::{Answer, Decision, Reply};
use super::error::{CommandError, log_error};
use super::request::CommandRequest;
use crate::state::ReadModelStopped;
use axum::http::StatusCode;
use palimpsest_events::{ExpectedVersion, Metadata, StreamName};
use palimpsest_log::{AppendError, AppendRequest, Appended, EventStore, StoredReply};
use palimpsest_projections::{ProjectionWatch, WaitError};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// How many times a command is decided again after another writer moved a stream it read.
const MAX_ATTEMPTS: u32 = 16;

/// How long a write waits for its read models before answering anyway.
const READ_YOUR_WRITES_TIMEOUT: Duration = Duration::from_secs(5);

/// What the runner needs to know of a command besides its decider.
pub struct Command<'a> {
    /// The request's idempotency facts.
    pub request: &'a CommandRequest,
    /// The context the command belongs to (keys are scoped by it).
    pub context: &'static str,
    /// The projections a client reads this write through: the answer waits for them.
    pub projections: &'a [&'static str],
    /// Who and why, stored with every event.
    pub metadata: Metadata,
}

/// Runs commands: one per process, shared by every context (`AppState::commands`).
#[derive(Clone)]
pub struct CommandRunner {
    pub(super) store: EventStore,
    watch: ProjectionWatch,
    pub(super) cache: Arc<StateCache>,
    in_flight: Arc<Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>>,
}

impl CommandRunner {
    /// A runner appending to `store` and waiting on `watch`.
    pub fn new(store: EventStore, watch: ProjectionWatch) -> Self {
        CommandRunner {
            store,
            watch,
            cache: Arc::default(),
            in_flight: Arc::default(),
        }
    }

    /// The same runner (its state cache, its turns per key) waiting on `watch`: what a
    /// context whose read models live in a database of their own writes through.
    pub fn waiting_on(&self, watch: ProjectionWatch) -> Self {
        CommandRunner {
            watch,
            ..self.clone()
        }
    }

    /// Runs a command: loads and decides (`decide` does the loads through the [`Attempt`] and
    /// calls the pure decider), answers a repeated Idempotency-Key from the log (which the
    /// append, or a refusal's lookup, finds), appends
    /// every stream at the version read with the reply, decides again from fresh state when a
    /// stream moved (a bounded number of times, then [`CommandError::Conflict`]), and waits
    /// until `projections` show the append. Answers the reply.
    pub async fn run<E, F, Fut>(
        &self,
        command: Command<'_>,
        decide: F,
    ) -> Result<Reply, CommandError<E>>
    where
        F: FnMut(Attempt) -> Fut,
        Fut: Future<Output = Result<Decision, CommandError<E>>>,
    {
        match self.run_for(command, decide).await? {
            Answer::Repeated(reply)
            | Answer::Decided {
                reply: Some(reply), ..
            } => Ok(reply),
            Answer::Decided { reply: None, .. } => {
                Err(CommandError::Internal("a command decided no reply".into()))
            }
        }
    }

    /// [`CommandRunner::run`] for a command that hands a value back to its caller beside (or
    /// instead of) its reply: the value when this call decided, the kept reply when it repeats
    /// an earlier call's key ([`Answer`]).
    #[tracing::instrument(name = "command", skip_all, fields(context = command.context, key = command.request.key()))]
    pub async fn run_for<E, T, F, Fut>(
        &self,
        command: Command<'_>,
        mut decide: F,
    ) -> Result<Answer<T>, CommandError<E>>
    where
        F: FnMut(Attempt) -> Fut,
        Fut: Future<Output = Result<Decision<T>, CommandError<E>>>,
    {
        let key = command
            .request
            .key()
            .map(|k| format!("{}:{k}", command.context));
        // Repeats of one key inside this process wait for the first to finish.
        let _turn = match &key {
            Some(k) => Some(self.turn(k).await),
            None => None,
        };
        // A repeat (a client retrying after a lost answer) is not looked up before deciding:
        // the append finds its key among those the log keeps and answers the first command's
        // events instead of writing (`Appended::replayed`, then the kept answer), and a repeat
        // decided as a refusal or as no change finds the first answer there too. A first write
        // (every write but a retry) saves the lookup's round trip.
        let mut last = LastTry::None;
        for attempt in 0..MAX_ATTEMPTS {
            if attempt > 0 {
                backoff(attempt, last.pause()).await;
            }
            let tried = Attempt::new(self.clone(), command.metadata.clone(), attempt);
            let mut decision = match decide(tried.clone()).await {
                Ok(decision) => decision,
                // The decider saw that something it read had already moved on: try again.
                Err(CommandError::Conflict { stream }) => {
                    last = LastTry::Moved(stream);
                    continue;
                }
                // The decider cannot accept the command yet: try again at a later time.
                Err(CommandError::Retry { refusal, after }) => {
                    last = LastTry::Early(refusal, after);
                    continue;
                }
                Err(refusal) => return self.refused(&key, command.request, refusal).await,
            };
            if key.is_some() && decision.reply.is_none() {
                return Err(CommandError::Internal(
                    "a command under an Idempotency-Key decided no reply to keep".into(),
                ));
            }
            if decision.is_empty() {
                return self.answer_of_no_change(&command, &key, decision).await;
            }
            let request = append_request(&mut decision, &tried, &command, key.as_deref());
            let written = self.written_streams(command.projections, &request);
            match self.store.append(request).await {
                Ok(appended) => {
                    return self
                        .finish(&command, &key, appended, decision, &written)
                        .await;
                }
                Err(AppendError::WrongExpectedVersion { stream, .. }) => {
                    tracing::debug!(%stream, attempt, "a stream moved; deciding again");
                    last = LastTry::Moved(stream);
                }
                Err(other) => return Err(other.into()),
            }
        }
        match last {
            LastTry::Early(refusal, _) => {
                let refusal = CommandError::Rejected(refusal);
                self.refused(&key, command.request, refusal).await
            }
            LastTry::Moved(stream) => {
                metrics::counter!("palimpsest_command_conflicts_total", "context" => command.context)
                    .increment(1);
                Err(CommandError::Conflict { stream })
            }
            LastTry::None => Err(CommandError::Internal("no attempt was made".into())),
        }
    }

    /// After a successful append: read your writes, then the answer (the stored one, read
    /// where the first write stands, when the log says the key had already been appended).
    async fn finish<E, T>(
        &self,
        command: &Command<'_>,
        key: &Option<String>,
        appended: Appended,
        decision: Decision<T>,
        written: &[StreamName],
    ) -> Result<Answer<T>, CommandError<E>> {
        if appended.replayed
            && let Some(k) = key
            && let Some((stored, position)) = self.kept_reply(k, command.request).await?
        {
            // A repeat reads its write like the first, at the first write's position.
            self.wait_for_all(command.projections, position).await?;
            return Ok(Answer::Repeated(stored));
        }
        for projection in command.projections {
            self.wait_for_streams(projection, written, appended.last_position)
                .await?;
        }
        crate::consistency::appended(appended.last_position);
        Ok(Answer::Decided {
            value: decision.value,
            reply: decision.reply,
        })
    }

    /// A decision that changes nothing still binds its key: its answer is kept under the key
    /// alone (no event), so a repeat gets this answer and another request under the key is a
    /// 422, as for a command that wrote.
    async fn answer_of_no_change<E, T>(
        &self,
        command: &Command<'_>,
        key: &Option<String>,
        decision: Decision<T>,
    ) -> Result<Answer<T>, CommandError<E>> {
        let (Some(k), Some(reply)) = (key, &decision.reply) else {
            return Ok(Answer::Decided {
                value: decision.value,
                reply: decision.reply,
            });
        };
        let fingerprint = command.request.fingerprint();
        match self
            .keep_answer(k, command.request, fingerprint, reply.clone())
            .await?
        {
            Kept::Ours => Ok(Answer::Decided {
                value: decision.value,
                reply: decision.reply,
            }),
            Kept::First(first) => Ok(Answer::Repeated(first)),
        }
    }

    /// A command refused on a later try may have been carried out meanwhile by a concurrent
    /// repeat with the same key (in another process): that first answer wins.
    async fn refused<E, T>(
        &self,
        key: &Option<String>,
        request: &CommandRequest,
        refusal: CommandError<E>,
    ) -> Result<Answer<T>, CommandError<E>> {
        let Some(k) = key else {
            return Err(refusal);
        };
        match self.stored_reply::<E>(k, request).await {
            Ok(Some(first)) => Ok(Answer::Repeated(first)),
            Err(CommandError::KeyReused) => Err(CommandError::KeyReused),
            _ => Err(refusal),
        }
    }

    /// The first answer kept under `key`, if a command was appended under it; a request for
    /// another method, path or body under the same key is [`CommandError::KeyReused`].
    pub(super) async fn stored_reply<E>(
        &self,
        key: &str,
        request: &CommandRequest,
    ) -> Result<Option<Reply>, CommandError<E>> {
        Ok(self.kept_reply(key, request).await?.map(|(reply, _)| reply))
    }

    /// [`CommandRunner::stored_reply`] with the last position the first command appended, which
    /// becomes this request's too: its answer names it (`Palimpsest-Position`) and its later
    /// reads reflect it, as for the first answer.
    async fn kept_reply<E>(
        &self,
        key: &str,
        request: &CommandRequest,
    ) -> Result<Option<(Reply, i64)>, CommandError<E>> {
        let kept = self.store.kept_command(key).await.map_err(log_error)?;
        let Some(kept) = kept else {
            return Ok(None);
        };
        match kept.reply {
            None => Err(CommandError::Internal(format!(
                "idempotency key {key} was appended without a stored reply"
            ))),
            Some(stored) if stored.request_hash != request.fingerprint() => {
                Err(CommandError::KeyReused)
            }
            Some(stored) => {
                if kept.last_position > 0 {
                    crate::consistency::appended(kept.last_position);
                }
                let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
                let reply = Reply::new(status, stored.content_type, stored.body);
                Ok(Some((reply, kept.last_position)))
            }
        }
    }

    /// Waits until each projection has applied `position` (bounded; a projection that does not
    /// catch up in time is counted and logged, and the answer goes out anyway; one stopped on an
    /// event fails at once).
    pub async fn wait_for_all(
        &self,
        projections: &[&'static str],
        position: i64,
    ) -> Result<(), ReadModelStopped> {
        for projection in projections {
            self.wait_for(projection, position).await?;
        }
        Ok(())
    }

    /// The streams `request` writes, when one of `projections` is split into partitions (its
    /// writer waits for those streams' partitions only); none otherwise.
    fn written_streams(&self, projections: &[&str], request: &AppendRequest) -> Vec<StreamName> {
        if !projections
            .iter()
            .any(|p| self.watch.partitions(p).is_some())
        {
            return Vec::new();
        }
        request.streams.iter().map(|s| s.stream.clone()).collect()
    }

    /// Read-your-writes for one projection (see [`CommandRunner::wait_for_all`]).
    pub async fn wait_for(&self, projection: &str, position: i64) -> Result<(), ReadModelStopped> {
        self.wait_for_streams(projection, &[], position).await
    }

    /// Read-your-writes for one projection after a write to `written` (none: the whole read
    /// model); a projection split into partitions is waited for in those streams' partitions.
    async fn wait_for_streams(
        &self,
        projection: &str,
        written: &[StreamName],
        position: i64,
    ) -> Result<(), ReadModelStopped> {
        let timeout = READ_YOUR_WRITES_TIMEOUT;
        let waited = if written.is_empty() {
            self.watch
                .wait_until_applied(projection, position, timeout)
                .await
        } else {
            self.watch
                .wait_until_written(projection, written, position, timeout)
                .await
        };
        match waited {
            Ok(()) => Ok(()),
            Err(WaitError::Stalled(stall)) => {
                metrics::counter!("palimpsest_read_your_writes_stopped_total", "projection" => projection.to_owned())
                    .increment(1);
                Err(ReadModelStopped {
                    projection: projection.to_owned(),
                    position,
                    stall,
                })
            }
            Err(WaitError::TimedOut { .. }) => {
                metrics::counter!("palimpsest_read_your_writes_timeouts_total", "projection" => projection.to_owned())
                    .increment(1);
                tracing::warn!(projection, position, "read model did not catch up in time");
                Ok(())
            }
        }
    }

    /// This process's turn for idempotency key `key`: held while the command runs.
    pub(super) async fn turn(&self, key: &str) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            let mut in_flight = match self.in_flight.lock() {
                Ok(guard) => guard,
                Err(poisoned) => poisoned.into_inner(),
            };
            in_flight.retain(|_, weak| weak.strong_count() > 0);
            match in_flight.get(key).and_then(Weak::upgrade) {
                Some(lock) => lock,
                None => {
                    let lock = Arc::new(tokio::sync::Mutex::new(()));
                    in_flight.insert(key.to_owned(), Arc::downgrade(&lock));
                    lock
                }
            }
        };
        lock.lock_owned().await
    }
}

/// The append of a decision: every written stream at the version the attempt read (new if it
/// never read it), every checked or unread stream ([`Attempt::load`]) likewise with no events,
/// the reply stored with the key.
/// The decision's events move into it.
fn append_request<T>(
    decision: &mut Decision<T>,
    tried: &Attempt,
    command: &Command<'_>,
    key: Option<&str>,
) -> AppendRequest {
    let expected = |stream: &StreamName| match tried.version(stream) {
        0 => ExpectedVersion::NoStream,
        v => ExpectedVersion::Exact(v),
    };
    let mut metadata = command.metadata.clone();
    metadata.idempotency_key = key.map(str::to_owned);
    let mut request = AppendRequest::new().metadata(metadata);
    // The events move into the request: after the append only the decision's reply is used.
    for write in &mut decision.writes {
        request = request.stream(
            write.stream.clone(),
            expected(&write.stream),
            std::mem::take(&mut write.events),
        );
    }
    // Streams the attempt took from memory without reading the log are checked like the
    // decision's own checks: an event this process had not heard of fails the append.
    let mut checked: Vec<&StreamName> = Vec::new();
    let unread = tried.unread();
    for stream in decision.checks.iter().chain(&unread) {
        if !decision.writes.iter().any(|w| &w.stream == stream) && !checked.contains(&stream) {
            checked.push(stream);
            request = request.stream(stream.clone(), expected(stream), Vec::new());
        }
    }
    if key.is_some()
        && let Some(reply) = &decision.reply
    {
        request = request.reply(StoredReply {
            request_hash: command.request.fingerprint(),
            status: reply.status.as_u16(),
            content_type: reply.content_type.clone(),
            body: reply.body.to_vec(),
        });
    }
    request
}

/// How the last try of a command ended, when it did not end the command.
enum LastTry<E> {
    /// No try yet.
    None,
    /// A stream it read moved before its append.
    Moved(StreamName),
    /// Its decider asked to decide again later, answering this refusal if it never can.
    Early(E, Duration),
}

impl<E> LastTry<E> {
    /// The least pause the last try asked for.
    fn pause(&self) -> Duration {
        match self {
            LastTry::Early(_, after) => *after,
            LastTry::None | LastTry::Moved(_) => Duration::ZERO,
        }
    }
}

/// A short, growing, jittered pause before deciding again, so racing writers spread out; at
/// least `least` (what a decider that asked to retry later needs).
async fn backoff(attempt: u32, least: Duration) {
    let micros = rand::random_range(0..=250 * u64::from(attempt.min(8)));
    tokio::time::sleep(least + Duration::from_micros(micros)).await;
}
