//! A projector fed by JetStream instead of the log's database (`--source nats`), so that the
//! log's Postgres serves the appends and the relay only.
//!
//! The relay's contract (events/README.md) makes this exact: every event of the log is a
//! message of the stream whose sequence is its position, marked with the log's identity
//! (`Palimpsest-Log-Id`). The projector reads through a durable pull consumer with explicit
//! acks, one per read model, and applies a batch in one transaction of its read database: the
//! projection's lock, its checkpoint read, the rows, the checkpoint moved to the batch's last
//! sequence, the notification, `COMMIT`; only then does it ack the messages. So:
//!
//! - a message at or below the checkpoint (redelivered after a crash between the commit and the
//!   ack, or by a consumer made to start earlier) is acked and ignored, counted in
//!   `palimpsest_projection_redelivered_total`;
//! - a message above the next position (a consumer ahead of the read model: its read database
//!   restored or replaced, a redelivery out of order) is never applied across the hole: the
//!   consumer is deleted and made again at checkpoint + 1, so nothing is skipped;
//! - a message of another log (its header names another log or none), or whose event is not at
//!   its sequence, stops the projector loudly on it, as an event it cannot apply does
//!   ([`crate::stall`]: `/readyz` 503, waiting writes answered 503 at once), and nothing after
//!   it is applied.
//!
//! One process at a time follows a read model's consumer: it holds a session advisory lock on
//! a connection of its own to the read database (released when that connection ends, with its
//! process); another `project` process waits for the lock and takes over when it is freed. Two
//! processes pulling from one durable would each see holes.
//!
//! The log's database is still used at start (the log's identity, creating the read model, and
//! rebuilding one of an older version: rebuilds read the log, not JetStream's retention), never
//! per batch: the relay publishes only events already on disk, so no flush is waited for either.

use crate::runner::{
    BATCH, Committed, MAX_BACKOFF, STALL_RETRY, checkpoint_locked, commit_batch,
    ensure_until_ready, record_batch,
};
use crate::stall::{self, Stall};
use crate::{Projection, ProjectionError, ProjectionWatch, ReadDatabase};
use async_nats::jetstream::{
    self,
    consumer::{AckPolicy, Consumer, DeliverPolicy, pull},
};
use futures::StreamExt;
use palimpsest_events::RecordedEvent;
use palimpsest_log::EventStore;
use palimpsest_log::relay::LOG_ID_HEADER;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How often a process waiting for a read model's feed lock tries it again, and how often the
/// holder checks that its lock's connection still stands: the delay of a takeover.
const LOCK_CHECK: Duration = Duration::from_secs(1);

/// Where the JetStream stream of the log is, as the relay publishes it.
#[derive(Debug, Clone)]
pub struct NatsFeed {
    /// NATS server URL(s), comma separated.
    pub nats_url: String,
    /// The relay's stream.
    pub stream: String,
    /// The relay's subject prefix (the consumer filters `<prefix>.>`: every event).
    pub subject_prefix: String,
}

impl NatsFeed {
    /// The durable consumer of `projection`'s projector.
    pub fn consumer_name(projection: &str) -> String {
        format!("palimpsest-projector-{projection}")
    }
}

/// Starts a task that ensures the projection, then follows its JetStream consumer until
/// `shutdown` (see the module doc). `watch` is told of each batch as it commits, as with
/// [`crate::spawn_runner_in`].
pub fn spawn_nats_runner(
    store: EventStore,
    read: ReadDatabase,
    projection: Arc<dyn Projection>,
    watch: Option<ProjectionWatch>,
    feed: NatsFeed,
    shutdown: CancellationToken,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        if !ensure_until_ready(&store, &read, projection.as_ref(), &shutdown).await {
            return;
        }
        let name = projection.name();
        let mut fed = Fed {
            log_id: store.log_id(),
            read,
            projection,
            watch,
            feed,
            narrowing: 0,
            stalled: None,
        };
        let mut backoff = Duration::from_millis(50);
        while !shutdown.is_cancelled() {
            let wait = match fed.follow(&shutdown).await {
                Ok(()) => return,
                Err(Interrupt::Reposition) => Duration::ZERO,
                Err(Interrupt::Stalled) => STALL_RETRY,
                Err(Interrupt::Failed(e)) => {
                    metrics::counter!("palimpsest_projection_errors_total", "projection" => name)
                        .increment(1);
                    tracing::warn!(projection = name, error = %e, "projector feed interrupted; resuming");
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    backoff
                }
            };
            if !wait.is_zero() {
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = shutdown.cancelled() => return,
                }
            }
        }
    })
}

/// Why [`Fed::follow`] stopped before shutdown.
enum Interrupt {
    /// The consumer was deleted: make it again at checkpoint + 1 now.
    Reposition,
    /// Stopped on a message it cannot apply: try it again later.
    Stalled,
    /// NATS or the read database failed: connect again after a backoff.
    Failed(ProjectionError),
}

impl From<ProjectionError> for Interrupt {
    fn from(e: ProjectionError) -> Self {
        Interrupt::Failed(e)
    }
}

/// A projector following its consumer.
struct Fed {
    /// The log this read model belongs to: every message must name it.
    log_id: uuid::Uuid,
    read: ReadDatabase,
    projection: Arc<dyn Projection>,
    watch: Option<ProjectionWatch>,
    feed: NatsFeed,
    /// Messages still to apply one at a time, looking for the one that failed a batch.
    narrowing: usize,
    /// The message it is stopped on, if any.
    stalled: Option<Stall>,
}

/// What one batch of messages did.
struct Applied {
    /// The events committed, if any.
    committed: Option<Committed>,
    /// Whether a message after them was above the next position (the consumer must be
    /// repositioned).
    gap: bool,
}

fn nats(e: impl std::fmt::Display) -> ProjectionError {
    ProjectionError::Nats(e.to_string())
}

impl Fed {
    /// Takes the feed lock, opens the consumer and applies what it delivers until shutdown
    /// (`Ok`) or an interruption.
    async fn follow(&mut self, shutdown: &CancellationToken) -> Result<(), Interrupt> {
        let Some(lock) = self.take_lock(shutdown).await? else {
            return Ok(());
        };
        let stream = self.stream().await?;
        let checkpoint = self.checkpoint().await?;
        let consumer = self.consumer(&stream, checkpoint).await?;
        let one_by_one = self.narrowing > 0 || self.stalled.is_some();
        let limit = if one_by_one { 1 } else { BATCH as usize };
        let mut messages = consumer
            .stream()
            .max_messages_per_batch(limit)
            .messages()
            .await
            .map_err(nats)?
            .ready_chunks(limit);
        let mut check = tokio::time::interval(LOCK_CHECK);
        loop {
            let chunk = tokio::select! {
                chunk = messages.next() => chunk,
                _ = check.tick() => {
                    if lock.is_closed() {
                        return Err(nats("the feed lock's connection was lost").into());
                    }
                    continue;
                }
                _ = shutdown.cancelled() => return Ok(()),
            };
            let Some(chunk) = chunk else {
                return Err(nats("the consumer's message stream ended").into());
            };
            let chunk = chunk.into_iter().collect::<Result<Vec<_>, _>>();
            let chunk = chunk.map_err(nats)?;
            match self.apply(&chunk).await {
                Ok(applied) => {
                    ack(&chunk).await;
                    let resized = self.committed(applied.committed, one_by_one);
                    if applied.gap || resized {
                        return self.reposition(&stream).await;
                    }
                }
                Err(e) if e.is_transient() => return Err(e.into()),
                Err(e) if !one_by_one => {
                    tracing::warn!(
                        projection = self.projection.name(),
                        error = %e,
                        "batch failed; applying its messages one at a time to find the one that fails"
                    );
                    self.narrowing = BATCH as usize;
                    return self.reposition(&stream).await;
                }
                Err(e) => {
                    self.stop_on(&chunk, &e).await;
                    self.reposition(&stream).await?;
                    return Err(Interrupt::Stalled);
                }
            }
        }
    }

    /// Takes the read model's feed lock on a connection of its own (see the module doc),
    /// waiting while another process holds it; `None` on shutdown.
    async fn take_lock(
        &self,
        shutdown: &CancellationToken,
    ) -> Result<Option<deadpool_postgres::ClientWrapper>, ProjectionError> {
        let key = format!("palimpsest.feed:{}", self.projection.name());
        let mut waiting = false;
        loop {
            // Out of the pool for good: the lock ends with this connection, never handed on.
            let client = deadpool_postgres::Object::take(self.read.pool().get().await?);
            let taken: bool = client
                .query_one("SELECT pg_try_advisory_lock(hashtext($1))", &[&key])
                .await?
                .get(0);
            if taken {
                tracing::info!(projection = self.projection.name(), "following JetStream");
                return Ok(Some(client));
            }
            drop(client);
            if !waiting {
                waiting = true;
                tracing::info!(
                    projection = self.projection.name(),
                    "another process follows this read model's feed; waiting to take over"
                );
            }
            tokio::select! {
                _ = tokio::time::sleep(LOCK_CHECK) => {}
                _ = shutdown.cancelled() => return Ok(None),
            }
        }
    }

    /// The relay's stream.
    async fn stream(&self) -> Result<jetstream::stream::Stream, ProjectionError> {
        let client = async_nats::ConnectOptions::new()
            .connection_timeout(Duration::from_secs(2))
            .connect(palimpsest_log::relay::server_list(&self.feed.nats_url))
            .await
            .map_err(nats)?;
        jetstream::new(client)
            .get_stream(&self.feed.stream)
            .await
            .map_err(nats)
    }

    /// The read model's checkpoint.
    async fn checkpoint(&self) -> Result<i64, ProjectionError> {
        let name = self.projection.name();
        let client = self.read.pool().get().await?;
        let row = client
            .query_one(
                &format!("SELECT position FROM {name}.projection_checkpoint WHERE name = $1"),
                &[&name],
            )
            .await?;
        Ok(row.get(0))
    }

    /// The read model's durable consumer: the existing one as it is (what it delivers at or
    /// below the checkpoint is ignored, a hole repositions it), else a new one starting at
    /// `checkpoint + 1`.
    async fn consumer(
        &self,
        stream: &jetstream::stream::Stream,
        checkpoint: i64,
    ) -> Result<Consumer<pull::Config>, ProjectionError> {
        let name = NatsFeed::consumer_name(self.projection.name());
        let config = pull::Config {
            durable_name: Some(name.clone()),
            description: Some(format!(
                "palimpsest projector of {}",
                self.projection.name()
            )),
            filter_subject: palimpsest_events::subject::filter(&self.feed.subject_prefix),
            deliver_policy: DeliverPolicy::ByStartSequence {
                start_sequence: u64::try_from(checkpoint + 1).unwrap_or(1),
            },
            ack_policy: AckPolicy::Explicit,
            ..Default::default()
        };
        let consumer = stream
            .get_or_create_consumer(&name, config.clone())
            .await
            .map_err(nats)?;
        if consumer.cached_info().config.filter_subject == config.filter_subject {
            return Ok(consumer);
        }
        stream.delete_consumer(&name).await.map_err(nats)?;
        stream.create_consumer(config).await.map_err(nats)
    }

    /// Deletes the consumer, so that the next [`Fed::follow`] makes it at checkpoint + 1.
    async fn reposition(&self, stream: &jetstream::stream::Stream) -> Result<(), Interrupt> {
        let name = NatsFeed::consumer_name(self.projection.name());
        stream.delete_consumer(&name).await.map_err(nats)?;
        Err(Interrupt::Reposition)
    }

    /// Applies the messages after the checkpoint, in one transaction of the read database with
    /// the checkpoint (see the module doc).
    #[tracing::instrument(skip_all, fields(projection = self.projection.name(), messages = messages.len()))]
    async fn apply(&self, messages: &[jetstream::Message]) -> Result<Applied, ProjectionError> {
        let name = self.projection.name();
        let mut client = self.read.pool().get().await?;
        let tx = client.transaction().await?;
        let checkpoint = checkpoint_locked(&tx, "SET LOCAL synchronous_commit = off", name).await?;
        let mut events = Vec::with_capacity(messages.len());
        let (mut ignored, mut gap, mut pending) = (0u64, false, 0);
        for message in messages {
            let info = message
                .info()
                .map_err(|e| ProjectionError::Invalid(format!("a message without info: {e}")))?;
            let sequence = i64::try_from(info.stream_sequence).unwrap_or(i64::MAX);
            pending = i64::try_from(info.pending).unwrap_or(i64::MAX);
            if sequence <= checkpoint {
                ignored += 1;
                continue;
            }
            if sequence != checkpoint + 1 + events.len() as i64 {
                gap = true;
                break;
            }
            events.push(self.event(message, sequence)?);
        }
        if ignored > 0 {
            metrics::counter!("palimpsest_projection_redelivered_total", "projection" => name)
                .increment(ignored);
        }
        let Some(last) = events.last() else {
            return Ok(Applied {
                committed: None,
                gap,
            });
        };
        let (position, time) = (last.position, last.recorded_at);
        commit_batch(tx, self.projection.as_ref(), &events, async { Ok(()) }).await?;
        record_batch(name, events.len(), position, time, pending);
        Ok(Applied {
            committed: Some(Committed {
                events: events.len(),
                position,
            }),
            gap,
        })
    }

    /// The event a message carries, refused unless it is of this log and at its sequence.
    fn event(
        &self,
        message: &jetstream::Message,
        sequence: i64,
    ) -> Result<RecordedEvent, ProjectionError> {
        let found = message
            .headers
            .as_ref()
            .and_then(|headers| headers.get(LOG_ID_HEADER))
            .map(|value| value.as_str().to_owned());
        if found.as_deref() != Some(self.log_id.to_string().as_str()) {
            return Err(ProjectionError::ForeignMessage {
                stream: self.feed.stream.clone(),
                sequence: sequence as u64,
                found: found.map_or_else(
                    || format!("no log (no {LOG_ID_HEADER} header)"),
                    |log| format!("log {log}"),
                ),
                log_id: self.log_id,
            });
        }
        let event: RecordedEvent = serde_json::from_slice(&message.payload).map_err(|e| {
            ProjectionError::Invalid(format!("message {sequence} is not an event: {e}"))
        })?;
        if event.position != sequence {
            return Err(ProjectionError::Invalid(format!(
                "message {sequence} holds the event at position {}: the stream's sequences are \
                 not this log's positions",
                event.position
            )));
        }
        Ok(event)
    }

    /// Tells the watch, ends a narrowing or a stall once past it; whether the batch size
    /// changes (the consumer's pull is then made again).
    fn committed(&mut self, committed: Option<Committed>, one_by_one: bool) -> bool {
        let Some(batch) = committed else {
            return false;
        };
        let name = self.projection.name();
        if let Some(watch) = &self.watch {
            watch.applied(name, batch.position);
        }
        self.narrowing = self.narrowing.saturating_sub(batch.events);
        stall::resumed(name, self.stalled.take());
        one_by_one && self.narrowing == 0
    }

    /// Stops on the one message of `chunk` that failed with `error`, loudly.
    async fn stop_on(&mut self, chunk: &[jetstream::Message], error: &ProjectionError) {
        let Some(message) = chunk.first() else {
            return;
        };
        let name = self.projection.name();
        let stall = stall_at(name, message, error);
        let lag = message
            .info()
            .map_or(1, |info| i64::try_from(info.pending).unwrap_or(0) + 1);
        stall::announce(&self.read, &stall, lag, self.stalled.as_ref()).await;
        self.stalled = Some(stall);
    }
}

/// Acks every message of a batch that committed (or that it ignored): a lost ack only makes
/// the server deliver it again, and it is then ignored.
async fn ack(messages: &[jetstream::Message]) {
    for message in messages {
        if let Err(e) = message.ack().await {
            tracing::debug!(error = %e, "ack not sent; the message will come again and be ignored");
        }
    }
}

/// The stall of `projection` on `message`: the event's own fields when it decodes, else what
/// the message's headers say.
fn stall_at(projection: &str, message: &jetstream::Message, error: &ProjectionError) -> Stall {
    if let Ok(event) = serde_json::from_slice::<RecordedEvent>(&message.payload) {
        return Stall::at(projection, &event, error);
    }
    let header = |name: &str| {
        message
            .headers
            .as_ref()
            .and_then(|headers| headers.get(name))
            .map_or_else(String::new, |value| value.as_str().to_owned())
    };
    let position = message
        .info()
        .map_or(0, |info| i64::try_from(info.stream_sequence).unwrap_or(0));
    Stall {
        projection: projection.to_owned(),
        position,
        event_id: header(async_nats::header::NATS_MESSAGE_ID.as_ref()),
        event_type: header("Palimpsest-Event-Type"),
        stream: header("Palimpsest-Stream"),
        error: stall::describe(error),
        since: chrono::Utc::now(),
    }
}
