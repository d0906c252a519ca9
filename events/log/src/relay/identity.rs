//! The log's identity on the JetStream stream: the relay publishes only into a stream that holds
//! this log's events (or none), and never into one that is ahead of the log.
//!
//! The identity is recorded three ways: the stream's metadata (`palimpsest_log_id`, NATS 2.10+),
//! its description (`palimpsest log <uuid>`, any JetStream server) and a `Palimpsest-Log-Id`
//! header on every message. At start the relay checks the marks it finds and the stream's last
//! message (its `Nats-Msg-Id` must be the id of this log's event at that position), so a stream
//! written by a relay that predates the marks is adopted only if it really holds this log.

use super::{Blocked, RelayConfig, RelayError, nats_error};
use crate::EventStore;
use async_nats::jetstream::{self, stream};
use uuid::Uuid;

/// The stream metadata key holding the log id.
pub const METADATA_KEY: &str = "palimpsest_log_id";

/// The header holding the log id on every message.
pub const LOG_ID_HEADER: &str = "Palimpsest-Log-Id";

const DESCRIPTION_PREFIX: &str = "palimpsest log ";

/// The stream configuration the relay creates or updates, marked with `log_id`.
pub fn stream_config(config: &RelayConfig, log_id: Uuid) -> stream::Config {
    stream::Config {
        name: config.stream_name.clone(),
        description: Some(format!("{DESCRIPTION_PREFIX}{log_id}")),
        metadata: [(METADATA_KEY.to_owned(), log_id.to_string())].into(),
        subjects: vec![palimpsest_events::subject::filter(&config.subject_prefix)],
        storage: stream::StorageType::File,
        num_replicas: config.replicas,
        duplicate_window: std::time::Duration::from_secs(120),
        ..Default::default()
    }
}

/// The log id a stream's configuration is marked with, if any.
fn marked(config: &stream::Config) -> Option<String> {
    config.metadata.get(METADATA_KEY).cloned().or_else(|| {
        config
            .description
            .as_deref()
            .and_then(|d| d.strip_prefix(DESCRIPTION_PREFIX))
            .map(str::to_owned)
    })
}

/// Opens (or creates) the relay's stream and checks it holds this log's events and is not
/// ahead of it; returns the last sequence to resume after.
pub async fn open_stream(
    js: &jetstream::Context,
    store: &EventStore,
    config: &RelayConfig,
) -> Result<u64, RelayError> {
    let log_id = store.log_id();
    let wanted = stream_config(config, log_id);
    let mut stream = js
        .get_or_create_stream(wanted.clone())
        .await
        .map_err(nats_error)?;
    let info = stream.info().await.map_err(nats_error)?.clone();
    let last = info.state.last_sequence;
    let foreign = |found: String| {
        RelayError::Blocked(Blocked::ForeignStream {
            stream: config.stream_name.clone(),
            log_id,
            found,
        })
    };
    if let Some(found) = marked(&info.config)
        && found != log_id.to_string()
    {
        return Err(foreign(format!("log {found}")));
    }
    if last > 0 {
        let message = stream.get_raw_message(last).await.map_err(nats_error)?;
        if let Some(found) = message.headers.get(LOG_ID_HEADER)
            && found.as_str() != log_id.to_string()
        {
            return Err(foreign(format!("log {found}")));
        }
        let head = store.head_position().await?;
        let mine = store.read_all(last as i64 - 1, 1).await?;
        let Some(event) = mine.first().filter(|e| e.position == last as i64) else {
            return Err(RelayError::Blocked(Blocked::StreamAhead {
                stream: config.stream_name.clone(),
                log_id,
                stream_last: last,
                log_head: head,
            }));
        };
        let id = message
            .headers
            .get(async_nats::header::NATS_MESSAGE_ID)
            .map(|v| v.as_str().to_owned());
        if id.as_deref() != Some(event.event_id.to_string().as_str()) {
            return Err(foreign(format!(
                "an unknown log: its message {last} has id {}, this log's event {last} is {}",
                id.unwrap_or_else(|| "none".into()),
                event.event_id
            )));
        }
    }
    if marked(&info.config).is_none() || info.config.num_replicas != config.replicas {
        tracing::info!(stream = %config.stream_name, %log_id, "marking the stream with the log's identity");
        js.update_stream(wanted).await.map_err(nats_error)?;
    }
    Ok(last)
}

/// Deletes the relay's stream and creates it empty, marked with this log's identity: the
/// deliberate recovery from [`Blocked::ForeignStream`] and [`Blocked::StreamAhead`]. Consumers
/// of the old stream must start over; the relay then publishes this log from position 1.
pub async fn reset_stream(store: &EventStore, config: &RelayConfig) -> Result<(), RelayError> {
    let js = super::connect(config).await?;
    match js.delete_stream(&config.stream_name).await {
        Ok(_) => tracing::warn!(stream = %config.stream_name, "deleted the JetStream stream"),
        Err(e) => tracing::info!(stream = %config.stream_name, error = %e, "no stream deleted"),
    }
    js.create_stream(stream_config(config, store.log_id()))
        .await
        .map_err(nats_error)?;
    tracing::warn!(
        stream = %config.stream_name,
        log_id = %store.log_id(),
        "created the JetStream stream afresh for this log"
    );
    Ok(())
}
