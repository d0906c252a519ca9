//! `palimpsest tail [SUBJECT] [--since TIME] [--until TIME] [--format text|jsonl]`: print
//! events from NATS as they are published.
//!
//! Without `--since` it follows what is published from now on (a plain subscription). With
//! `--since` it reads the JetStream stream from that time (an ordered consumer delivering
//! by start time), so past events come first and live ones follow; events recorded before
//! `--since` are skipped. JetStream's time is when the relay published an event, a little
//! after it was recorded, and comes from the NATS server's clock: the consumer starts
//! [`START_MARGIN`] earlier and each event is kept by its own `recorded_at`. With `--until`,
//! tail stops (exit 0) at the first event recorded after that time; until one comes, it waits.

use crate::cli::format::{self, Format};
use crate::config::Settings;
use crate::processes;
use async_nats::jetstream::consumer::{DeliverPolicy, pull::OrderedConfig};
use chrono::{DateTime, Utc};
use futures::{Stream, StreamExt};
use palimpsest_events::RecordedEvent;
use std::io::Write;

/// How much earlier than `--since` the JetStream consumer starts: room for the relay's lag and
/// for the NATS server's clock differing from the log's (each event is then kept by its own
/// `recorded_at`).
pub const START_MARGIN: chrono::TimeDelta = chrono::TimeDelta::minutes(1);

/// What `palimpsest tail` prints.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TailOptions {
    /// Subject filter (default `palimpsest.>`).
    pub subject: Option<String>,
    /// Skip events recorded before this time (and read the stream from it).
    pub since: Option<DateTime<Utc>>,
    /// Stop at the first event recorded after this time.
    pub until: Option<DateTime<Utc>>,
    /// How events are printed.
    pub format: Format,
}

/// What to do after a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    /// Go on with the next one.
    Next,
    /// An event recorded after `--until` came: stop.
    Stop,
}

/// Prints one line per event to `out` until ^C, or until the first event recorded after
/// `options.until` (see the module doc).
pub async fn run(
    settings: &Settings,
    options: &TailOptions,
    out: &mut (dyn Write + Send),
) -> anyhow::Result<()> {
    let client =
        async_nats::connect(palimpsest_log::relay::server_list(&settings.nats_url)).await?;
    let subject = options
        .subject
        .clone()
        .unwrap_or_else(|| format!("{}.>", palimpsest_events::subject::PREFIX));
    match options.since {
        None => {
            let sub = client.subscribe(subject.clone()).await?;
            eprintln!("tailing {subject} on {}", settings.nats_url);
            let messages = sub.map(|m| Ok::<_, anyhow::Error>((m.subject.to_string(), m.payload)));
            print(messages, options, out).await
        }
        Some(since) => {
            let stream_name = processes::relay_config(settings).stream_name;
            let stream = async_nats::jetstream::new(client)
                .get_stream(&stream_name)
                .await?;
            let start = since - START_MARGIN;
            let start_time = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(
                start.timestamp_nanos_opt().unwrap_or(0),
            ))?;
            let consumer = stream
                .create_consumer(OrderedConfig {
                    filter_subject: subject.clone(),
                    deliver_policy: DeliverPolicy::ByStartTime { start_time },
                    ..Default::default()
                })
                .await?;
            eprintln!(
                "tailing {subject} on {} ({stream_name}) since {}",
                settings.nats_url,
                since.to_rfc3339()
            );
            let messages = consumer.messages().await?.map(|m| {
                m.map(|m| (m.subject.to_string(), m.payload.clone()))
                    .map_err(anyhow::Error::from)
            });
            print(messages, options, out).await
        }
    }
}

/// Prints `messages` (subject, payload) until they end, ^C, or [`Flow::Stop`].
async fn print<S>(
    messages: S,
    options: &TailOptions,
    out: &mut (dyn Write + Send),
) -> anyhow::Result<()>
where
    S: Stream<Item = anyhow::Result<(String, bytes::Bytes)>>,
{
    let mut messages = std::pin::pin!(messages);
    loop {
        tokio::select! {
            msg = messages.next() => {
                let Some(msg) = msg else { return Ok(()) };
                let (subject, payload) = msg?;
                if take(&subject, &payload, options, out)? == Flow::Stop {
                    return Ok(());
                }
            }
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}

/// Prints one message unless `--since` skips it; [`Flow::Stop`] for an event past `--until`.
/// A payload that is no event envelope is printed raw (no time to filter it by).
fn take(
    subject: &str,
    payload: &[u8],
    options: &TailOptions,
    out: &mut (dyn Write + Send),
) -> anyhow::Result<Flow> {
    let Ok(event) = serde_json::from_slice::<RecordedEvent>(payload) else {
        writeln!(out, "{subject} {}", String::from_utf8_lossy(payload))?;
        return Ok(Flow::Next);
    };
    if options.until.is_some_and(|until| event.recorded_at > until) {
        return Ok(Flow::Stop);
    }
    if options.since.is_none_or(|since| event.recorded_at >= since) {
        writeln!(out, "{}", format::line(&event, options.format)?)?;
        out.flush()?;
    }
    Ok(Flow::Next)
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use clap::Parser;

    #[test]
    fn tail_takes_since_and_until_as_audit_events_does() {
        let cli = Cli::try_parse_from([
            "palimpsest",
            "tail",
            "palimpsest.docs.>",
            "--since",
            "2026-11-27T10:03",
            "--until",
            "2026-11-27T10:04:05.5Z",
        ])
        .expect("parses");
        let Command::Tail {
            subject,
            since,
            until,
            ..
        } = cli.command
        else {
            panic!("tail");
        };
        assert_eq!(subject.as_deref(), Some("palimpsest.docs.>"));
        assert_eq!(
            since.map(|t| t.to_rfc3339()).as_deref(),
            Some("2026-11-27T10:03:00+00:00")
        );
        assert_eq!(
            until.map(|t| t.to_rfc3339()).as_deref(),
            Some("2026-11-27T10:04:05.500+00:00")
        );
        assert!(Cli::try_parse_from(["palimpsest", "tail", "--since", "yesterday"]).is_err());
    }
}
