//! The relay: publishes the log to NATS JetStream in position order, once in effect.
//!
//! Each event is published on its stream's subject (`<prefix>.<context>.<category>.<key>`, the
//! prefix [`RelayConfig::subject_prefix`], `palimpsest` by default)
//! with `Nats-Msg-Id` = event id and `Nats-Expected-Last-Sequence` = position − 1. Positions are
//! gapless from 1, so the JetStream sequence of every event equals its log position: the stream's
//! last sequence *is* the relay's checkpoint, a second relay or a repeat is refused by the
//! server forever (not only inside the dedup window), and a restarted relay resumes exactly where
//! the server stopped acknowledging. Publishes are pipelined and their acks awaited in order
//! before the relay moves on; on any failure it re-reads the stream's last sequence and resumes.
//!
//! That the last sequence is the checkpoint is only true of a stream that holds this log: the
//! relay checks the log's identity on the stream before it publishes ([`identity`]) and refuses,
//! loudly ([`Blocked`], `/readyz`), a stream of another log or one ahead of the log. It likewise
//! refuses to skip an event the server will not take (over `max_payload`, read from the server at
//! each connect). Acks time out after [`RelayConfig::ack_timeout`] and retries back off from
//! 50 ms to at most 250 ms, so the relay publishes again soon after a new stream leader. A
//! failure that repeats unchanged without progress for longer than the health's `stuck_after`
//! (e.g. a stream whose subjects overlap another stream's) makes readiness fail, naming it.

pub mod health;
pub mod identity;
pub mod position;

pub use health::{Blocked, DEFAULT_STUCK_AFTER, RelayHealth, RelayState, Stuck};
pub use identity::{LOG_ID_HEADER, reset_stream, stream_config};

use crate::EventStore;
use async_nats::jetstream::{self, message::PublishMessage};
use palimpsest_events::{RecordedEvent, subject};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The JetStream stream that carries every event.
pub const STREAM_NAME: &str = "PALIMPSEST";

/// How long the relay waits before it looks again at a cause that blocks it.
const BLOCKED_RETRY: Duration = Duration::from_secs(2);

/// Where and how the relay publishes.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// NATS server URL(s), comma separated.
    pub nats_url: String,
    /// The JetStream stream name (default [`STREAM_NAME`]).
    pub stream_name: String,
    /// The first token(s) of every subject, validated by [`subject::validate_prefix`] (default
    /// [`subject::DEFAULT_PREFIX`]); the stream's filter is `<prefix>.>`.
    pub subject_prefix: String,
    /// Replicas of the stream (1 on one machine, 3 on a cluster).
    pub replicas: usize,
    /// Most events read and published per round.
    pub batch: i64,
    /// How long a publish waits for its ack (and a JetStream request for its answer) before the
    /// relay reconnects and resumes.
    pub ack_timeout: Duration,
    /// Where the relay reports its state.
    pub health: RelayHealth,
}

impl RelayConfig {
    /// The defaults for one machine.
    pub fn new(nats_url: impl Into<String>) -> Self {
        RelayConfig {
            nats_url: nats_url.into(),
            stream_name: STREAM_NAME.into(),
            subject_prefix: subject::DEFAULT_PREFIX.into(),
            replicas: 1,
            batch: 1024,
            ack_timeout: Duration::from_secs(1),
            health: RelayHealth::default(),
        }
    }
}

/// Why the relay could not make progress this round.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// NATS could not be reached or refused a request (the relay retries).
    #[error("nats: {0}")]
    Nats(String),
    /// The log could not be read (the relay retries).
    #[error(transparent)]
    Log(#[from] crate::LogError),
    /// The relay refuses to publish until an operator acts.
    #[error(transparent)]
    Blocked(Blocked),
}

pub(crate) fn nats_error(e: impl std::fmt::Display) -> RelayError {
    RelayError::Nats(e.to_string())
}

/// The servers of a comma-separated URL list (a cluster's nodes), trimmed.
pub fn server_list(urls: &str) -> Vec<&str> {
    urls.split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .collect()
}

/// Runs the relay until `shutdown` is cancelled, reconnecting and resuming on every failure.
pub async fn run(store: EventStore, config: RelayConfig, shutdown: CancellationToken) {
    let mut backoff = Duration::from_millis(50);
    while !shutdown.is_cancelled() {
        let wait = match relay_once(&store, &config, &shutdown).await {
            Ok(()) => return,
            Err(RelayError::Blocked(blocked)) => {
                if config.health.blocked().as_ref() != Some(&blocked) {
                    metrics::counter!("palimpsest_relay_blocked_total").increment(1);
                    tracing::error!(reason = %blocked, "relay blocked: publishing nothing");
                }
                metrics::gauge!("palimpsest_relay_blocked").set(1.0);
                config.health.set(RelayState::Blocked {
                    message: blocked.to_string(),
                    blocked,
                });
                BLOCKED_RETRY
            }
            Err(e) => {
                metrics::counter!("palimpsest_relay_errors_total").increment(1);
                tracing::warn!(error = %e, "relay interrupted; resuming");
                config.health.interrupted(e.to_string());
                backoff = (backoff * 2).min(Duration::from_millis(250));
                backoff
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = shutdown.cancelled() => return,
        }
    }
}

/// Connects to NATS with the relay's timeouts.
pub(crate) async fn connect(config: &RelayConfig) -> Result<jetstream::Context, RelayError> {
    let client = async_nats::ConnectOptions::new()
        .connection_timeout(Duration::from_secs(2))
        .request_timeout(Some(config.ack_timeout))
        .connect(server_list(&config.nats_url))
        .await
        .map_err(nats_error)?;
    Ok(jetstream::ContextBuilder::new()
        .timeout(config.ack_timeout)
        .ack_timeout(config.ack_timeout)
        .build(client))
}

async fn relay_once(
    store: &EventStore,
    config: &RelayConfig,
    shutdown: &CancellationToken,
) -> Result<(), RelayError> {
    let js = connect(config).await?;
    let max_payload = js.client().server_info().max_payload;
    if store.limits().max_event_bytes > max_payload {
        tracing::error!(
            max_payload,
            max_event_bytes = store.limits().max_event_bytes,
            "the log accepts events larger than this NATS server's max_payload; lower \
             PALIMPSEST_MAX_EVENT_BYTES or raise max_payload"
        );
    }
    let mut last = identity::open_stream(&js, store, config).await? as i64;
    tracing::info!(resume_after = last, log_id = %store.log_id(), "relay connected");
    metrics::gauge!("palimpsest_relay_blocked").set(0.0);
    let mut head = store.head().subscribe();
    let log_id = store.log_id().to_string();
    let mut kept = position::PositionKeeper::default();
    loop {
        config
            .health
            .set(RelayState::Publishing { published: last });
        metrics::gauge!("palimpsest_relay_position").set(last as f64);
        let events = store.read_all(last, config.batch).await?;
        if events.is_empty() {
            kept.keep(store, &config.stream_name, last, true).await;
            config.health.progressed();
            tokio::select! {
                _ = head.changed() => {}
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                _ = shutdown.cancelled() => return Ok(()),
            }
            continue;
        }
        store.wait_durable().await?;
        last = publish_in_order(&js, config, &events, last, &log_id, max_payload).await?;
        kept.keep(store, &config.stream_name, last, false).await;
        config.health.progressed();
    }
}

/// The message of one event and its size as NATS counts it against `max_payload` (payload and
/// headers). Every header value fits in a header line: the stream name is escaped by
/// [`subject::stream_header`].
fn message(event: &RecordedEvent, log_id: &str) -> Result<(PublishMessage, usize), RelayError> {
    let payload = serde_json::to_vec(event).map_err(nats_error)?;
    let header = |value: &str| value.parse::<async_nats::HeaderValue>().map_err(nats_error);
    let stream = subject::stream_header(&event.stream);
    // Header names, the message id, the expected sequence and the framing, at most.
    let size = payload.len() + event.event_type.len() + stream.len() + log_id.len() + 192;
    let message = PublishMessage::build()
        .payload(payload.into())
        .message_id(event.event_id.to_string())
        .expected_last_sequence((event.position - 1) as u64)
        .header("Palimpsest-Event-Type", header(&event.event_type)?)
        .header("Palimpsest-Stream", header(&stream)?)
        .header(LOG_ID_HEADER, header(log_id)?);
    Ok((message, size))
}

/// Publishes `events` pipelined and waits for every ack in order; returns the last position
/// the server acknowledged.
async fn publish_in_order(
    js: &jetstream::Context,
    config: &RelayConfig,
    events: &[RecordedEvent],
    mut last: i64,
    log_id: &str,
    max_payload: usize,
) -> Result<i64, RelayError> {
    let mut acks = Vec::with_capacity(events.len());
    let mut blocked = None;
    for event in events {
        let (message, size) = message(event, log_id)?;
        if size > max_payload {
            blocked = Some(Blocked::TooLarge {
                position: event.position,
                event_id: event.event_id,
                size,
                max_payload,
            });
            break;
        }
        let ack = js
            .send_publish(
                subject::for_stream(&config.subject_prefix, &event.stream),
                message,
            )
            .await
            .map_err(nats_error)?;
        acks.push((event.position, ack));
    }
    for (position, ack) in acks {
        match ack.await {
            Ok(_) => {
                last = position;
                metrics::counter!("palimpsest_relay_published_total").increment(1);
            }
            Err(e) => return Err(RelayError::Nats(format!("position {position}: {e}"))),
        }
    }
    match blocked {
        Some(b) => Err(RelayError::Blocked(b)),
        None => Ok(last),
    }
}
