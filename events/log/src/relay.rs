//! The relay: publishes the log to NATS JetStream in position order, once in effect.
//!
//! Each event is published on its stream's subject (`palimpsest.<context>.<category>.<key>`)
//! with `Nats-Msg-Id` = event id and `Nats-Expected-Last-Sequence` = position − 1. Positions are
//! gapless from 1, so the JetStream sequence of every event equals its log position: the stream's
//! last sequence *is* the relay's checkpoint, a second relay or a repeat is refused by the
//! server forever (not only inside the dedup window), and a restarted relay resumes exactly where
//! the server stopped acknowledging. Publishes are pipelined and their acks awaited in order
//! before the relay moves on; on any failure it re-reads the stream's last sequence and resumes.

use crate::EventStore;
use async_nats::jetstream::{self, message::PublishMessage, stream};
use palimpsest_events::{RecordedEvent, subject};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The JetStream stream that carries every event.
pub const STREAM_NAME: &str = "PALIMPSEST";

/// Where and how the relay publishes.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// NATS server URL(s), comma separated.
    pub nats_url: String,
    /// The JetStream stream name (default [`STREAM_NAME`]).
    pub stream_name: String,
    /// Replicas of the stream (1 on one machine, 3 on a cluster).
    pub replicas: usize,
    /// Most events read and published per round.
    pub batch: i64,
}

impl RelayConfig {
    /// The defaults for one machine.
    pub fn new(nats_url: impl Into<String>) -> Self {
        RelayConfig {
            nats_url: nats_url.into(),
            stream_name: STREAM_NAME.into(),
            replicas: 1,
            batch: 1024,
        }
    }
}

/// Why the relay could not make progress this round (it retries).
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// NATS could not be reached or refused a request.
    #[error("nats: {0}")]
    Nats(String),
    /// The log could not be read.
    #[error(transparent)]
    Log(#[from] crate::LogError),
}

/// The servers of a comma-separated URL list (a cluster's nodes), trimmed.
pub fn server_list(urls: &str) -> Vec<&str> {
    urls.split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .collect()
}

/// The stream configuration the relay creates or updates at start.
pub fn stream_config(config: &RelayConfig) -> stream::Config {
    stream::Config {
        name: config.stream_name.clone(),
        subjects: vec![format!("{}.>", subject::PREFIX)],
        storage: stream::StorageType::File,
        num_replicas: config.replicas,
        duplicate_window: Duration::from_secs(120),
        ..Default::default()
    }
}

/// Runs the relay until `shutdown` is cancelled, reconnecting and resuming on every failure.
pub async fn run(store: EventStore, config: RelayConfig, shutdown: CancellationToken) {
    let mut backoff = Duration::from_millis(100);
    while !shutdown.is_cancelled() {
        match relay_once(&store, &config, &shutdown).await {
            Ok(()) => return,
            Err(e) => {
                metrics::counter!("palimpsest_relay_errors_total").increment(1);
                tracing::warn!(error = %e, "relay interrupted; resuming");
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = shutdown.cancelled() => return,
                }
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
        }
    }
}

async fn relay_once(
    store: &EventStore,
    config: &RelayConfig,
    shutdown: &CancellationToken,
) -> Result<(), RelayError> {
    let client = async_nats::ConnectOptions::new()
        .connection_timeout(Duration::from_secs(2))
        .connect(server_list(&config.nats_url))
        .await
        .map_err(|e| RelayError::Nats(e.to_string()))?;
    let js = jetstream::new(client);
    let info = js
        .create_or_update_stream(stream_config(config))
        .await
        .map_err(|e| RelayError::Nats(e.to_string()))?;
    let mut last = info.state.last_sequence as i64;
    tracing::info!(resume_after = last, "relay connected");
    let mut head = store.head().subscribe();
    loop {
        metrics::gauge!("palimpsest_relay_position").set(last as f64);
        let events = store.read_all(last, config.batch).await?;
        if events.is_empty() {
            tokio::select! {
                _ = head.changed() => {}
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                _ = shutdown.cancelled() => return Ok(()),
            }
            continue;
        }
        store.wait_durable().await?;
        last = publish_in_order(&js, &events, last).await?;
    }
}

/// Publishes `events` pipelined and waits for every ack in order; returns the last position
/// the server acknowledged.
async fn publish_in_order(
    js: &jetstream::Context,
    events: &[RecordedEvent],
    mut last: i64,
) -> Result<i64, RelayError> {
    let mut acks = Vec::with_capacity(events.len());
    for event in events {
        let payload = serde_json::to_vec(event).map_err(|e| RelayError::Nats(e.to_string()))?;
        let message = PublishMessage::build()
            .payload(payload.into())
            .message_id(event.event_id.to_string())
            .expected_last_sequence((event.position - 1) as u64)
            .header("Palimpsest-Event-Type", event.event_type.as_str())
            .header("Palimpsest-Stream", event.stream.to_string().as_str());
        let ack = js
            .send_publish(subject::for_stream(&event.stream), message)
            .await
            .map_err(|e| RelayError::Nats(e.to_string()))?;
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
    Ok(last)
}
