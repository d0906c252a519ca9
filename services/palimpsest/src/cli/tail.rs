//! `palimpsest tail [SUBJECT] [--from POSITION | --from-time T] [--until T] [--durable NAME]
//! [--context C] [--category K] [--type T] [--format pretty|jsonl] [--count N]`: print events
//! from NATS, on standard output only (notices and logs go to standard error).
//!
//! Without a start it follows what is published from now on (a plain subscription). With
//! `--from POSITION` it reads the JetStream stream from that position (sequence = position),
//! with `--from-time` (alias `--since`) from that time (an ordered consumer delivering by start
//! time), so past events come first and live ones follow; events recorded before `--from-time`
//! are skipped. JetStream's time is when the relay published an event, a little after it was
//! recorded, and comes from the NATS server's clock: the consumer starts [`START_MARGIN`] earlier
//! and each event is kept by its own `recorded_at`. With `--until`, tail stops (exit 0) at the
//! first event recorded after that time; until one comes, it waits. With `--count N` it stops
//! after printing N events.
//!
//! `--durable NAME` reads through a durable JetStream pull consumer with explicit acks: each
//! event is acknowledged (and the server confirms it) once printed, so a later `tail --durable
//! NAME` resumes after the last event printed. A new durable starts at `--from`/`--from-time`,
//! else with the next event published; an existing one resumes where it stopped (a start given
//! then is ignored, with a notice). `--context`, `--category` narrow the subject filter and,
//! with `--type`, are checked on every event.

use crate::cli::format::{self, Format};
use crate::config::Settings;
use crate::processes;
use async_nats::jetstream::{
    self,
    consumer::{AckPolicy, DeliverPolicy, pull},
};
use chrono::{DateTime, Utc};
use futures::{Stream, StreamExt};
use palimpsest_events::RecordedEvent;
use std::io::Write;

/// How much earlier than `--from-time` the JetStream consumer starts: room for the relay's lag
/// and for the NATS server's clock differing from the log's (each event is then kept by its own
/// `recorded_at`).
pub const START_MARGIN: chrono::TimeDelta = chrono::TimeDelta::minutes(1);

/// What `palimpsest tail` prints.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TailOptions {
    /// Subject filter (default `<prefix>.>`, narrowed by `context` and `category`).
    pub subject: Option<String>,
    /// Read the stream from this position (inclusive).
    pub from: Option<u64>,
    /// Skip events recorded before this time (and read the stream from it).
    pub since: Option<DateTime<Utc>>,
    /// Stop at the first event recorded after this time.
    pub until: Option<DateTime<Utc>>,
    /// Read through this durable consumer, acknowledging each printed event.
    pub durable: Option<String>,
    /// Only events of this context.
    pub context: Option<String>,
    /// Only events of this category.
    pub category: Option<String>,
    /// Only events of these types (any of them; all when empty).
    pub event_types: Vec<String>,
    /// Stop after printing this many events.
    pub count: Option<u64>,
    /// How events are printed.
    pub format: Format,
}

impl TailOptions {
    /// The subject filter: the one given, else `<prefix>.<context|*>.<category|*>.>` (or
    /// `<prefix>.>` without either).
    pub fn subject_filter(&self, prefix: &str) -> anyhow::Result<String> {
        if let Some(subject) = &self.subject {
            return Ok(subject.clone());
        }
        for token in [&self.context, &self.category].into_iter().flatten() {
            if token.is_empty()
                || !token
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            {
                anyhow::bail!("`{token}` is not a context or category name");
            }
        }
        Ok(match (&self.context, &self.category) {
            (None, None) => palimpsest_events::subject::filter(prefix),
            (Some(c), None) => format!("{prefix}.{c}.>"),
            (c, Some(k)) => format!("{prefix}.{}.{k}.>", c.as_deref().unwrap_or("*")),
        })
    }

    /// Whether `event` passes `--context`, `--category` and `--type`.
    fn wants(&self, event: &RecordedEvent) -> bool {
        self.context
            .as_ref()
            .is_none_or(|c| *c == event.stream.context)
            && self
                .category
                .as_ref()
                .is_none_or(|k| *k == event.stream.category)
            && (self.event_types.is_empty() || self.event_types.contains(&event.event_type))
    }

    /// Where a JetStream consumer starts, if a start is given.
    fn deliver_policy(&self) -> anyhow::Result<Option<DeliverPolicy>> {
        if let Some(start_sequence) = self.from {
            return Ok(Some(DeliverPolicy::ByStartSequence {
                start_sequence: start_sequence.max(1),
            }));
        }
        let Some(since) = self.since else {
            return Ok(None);
        };
        let start = since - START_MARGIN;
        let start_time = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(
            start.timestamp_nanos_opt().unwrap_or(0),
        ))?;
        Ok(Some(DeliverPolicy::ByStartTime { start_time }))
    }
}

/// The flags of `palimpsest tail`.
#[derive(Debug, Clone, clap::Args)]
pub struct TailArgs {
    /// Subject filter (default: every event, `<prefix>.>`, narrowed by --context/--category).
    pub subject: Option<String>,
    /// Start at this log position (inclusive; the JetStream sequence is the position).
    #[arg(long, conflicts_with = "since")]
    pub from: Option<u64>,
    /// Start at this time (RFC 3339, or without seconds, UTC): read JetStream from it,
    /// skipping events recorded before it.
    #[arg(long, visible_alias = "from-time", value_parser = format::time)]
    pub since: Option<DateTime<Utc>>,
    /// Stop (exit 0) at the first event recorded after this time.
    #[arg(long, value_parser = format::time)]
    pub until: Option<DateTime<Utc>>,
    /// Read through this durable JetStream consumer (explicit acks): a later run with the same
    /// name resumes after the last event printed.
    #[arg(long)]
    pub durable: Option<String>,
    /// Only events of this context (`pads`, `docs`, ...).
    #[arg(long)]
    pub context: Option<String>,
    /// Only events of this category (`pad`, `db`, ...).
    #[arg(long)]
    pub category: Option<String>,
    /// Only events of these types (comma separated).
    #[arg(long = "type", value_delimiter = ',')]
    pub event_types: Vec<String>,
    /// Stop (exit 0) after printing this many events.
    #[arg(long)]
    pub count: Option<u64>,
    /// How events are printed (`pretty`/`text`: a readable line; `jsonl`: one envelope a line).
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

impl TailArgs {
    /// The options these flags give.
    pub fn options(self) -> TailOptions {
        TailOptions {
            subject: self.subject,
            from: self.from,
            since: self.since,
            until: self.until,
            durable: self.durable,
            context: self.context,
            category: self.category,
            event_types: self.event_types,
            count: self.count,
            format: self.format,
        }
    }
}

/// One message: its subject, payload and, from a durable consumer, the message to ack.
type Item = (String, bytes::Bytes, Option<jetstream::Message>);

/// What to do after a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    /// Go on with the next one (the event was printed or skipped).
    Next,
    /// An event recorded after `--until` came: stop without acking it.
    Stop,
}

/// Prints one line per event to `out` until ^C, `--until` or `--count` (see the module doc).
pub async fn run(
    settings: &Settings,
    options: &TailOptions,
    out: &mut (dyn Write + Send),
) -> anyhow::Result<()> {
    let client =
        async_nats::connect(palimpsest_log::relay::server_list(&settings.nats_url)).await?;
    let subject = options.subject_filter(&settings.nats_subject_prefix)?;
    let policy = options.deliver_policy()?;
    if options.durable.is_none() && policy.is_none() {
        let sub = client.subscribe(subject.clone()).await?;
        eprintln!("tailing {subject} on {}", settings.nats_url);
        let messages =
            sub.map(|m| Ok::<Item, anyhow::Error>((m.subject.to_string(), m.payload, None)));
        return print(messages, options, out).await;
    }
    let stream_name = processes::relay_config(settings).stream_name;
    let stream = jetstream::new(client).get_stream(&stream_name).await?;
    let start = match (options.from, options.since) {
        (Some(p), _) => format!(" from position {p}"),
        (None, Some(t)) => format!(" from {}", t.to_rfc3339()),
        (None, None) => String::new(),
    };
    let Some(name) = &options.durable else {
        let consumer = stream
            .create_consumer(pull::OrderedConfig {
                filter_subject: subject.clone(),
                deliver_policy: policy.unwrap_or(DeliverPolicy::New),
                ..Default::default()
            })
            .await?;
        eprintln!(
            "tailing {subject} on {} ({stream_name}){start}",
            settings.nats_url
        );
        let messages = consumer.messages().await?.map(|m| {
            m.map(|m| (m.subject.to_string(), m.payload.clone(), None))
                .map_err(anyhow::Error::from)
        });
        return print(messages, options, out).await;
    };
    let existed = stream.consumer_info(name).await.is_ok();
    let consumer = stream
        .get_or_create_consumer(
            name,
            pull::Config {
                durable_name: Some(name.clone()),
                filter_subject: subject.clone(),
                deliver_policy: policy.unwrap_or(DeliverPolicy::New),
                ack_policy: AckPolicy::Explicit,
                ..Default::default()
            },
        )
        .await?;
    let info = consumer.cached_info();
    if existed && info.config.filter_subject != subject {
        anyhow::bail!(
            "durable consumer {name} on {stream_name} filters `{}`, not `{subject}`; choose \
             another name, or delete it (`nats consumer rm {stream_name} {name}`)",
            info.config.filter_subject
        );
    }
    if existed {
        if !start.is_empty() {
            eprintln!("durable {name} exists: it resumes where it stopped ({start} ignored)");
        }
        eprintln!(
            "tailing {subject} on {} ({stream_name}) through durable {name}, resuming after \
             position {}",
            settings.nats_url, info.ack_floor.stream_sequence
        );
    } else {
        eprintln!(
            "tailing {subject} on {} ({stream_name}) through new durable {name}{start}",
            settings.nats_url
        );
    }
    print(one_at_a_time(consumer), options, out).await
}

/// The messages of a durable consumer, pulled one per request: none is held unacked in a
/// buffer when tail stops, so the next run resumes right after the last event printed (a
/// prefetched message would wait out the consumer's ack wait first).
fn one_at_a_time(
    consumer: jetstream::consumer::Consumer<pull::Config>,
) -> impl Stream<Item = anyhow::Result<Item>> {
    futures::stream::unfold(consumer, |consumer| async move {
        loop {
            let batch = consumer
                .batch()
                .max_messages(1)
                .expires(std::time::Duration::from_secs(30))
                .messages()
                .await;
            let mut batch = match batch {
                Ok(batch) => batch,
                Err(e) => return Some((Err(anyhow::anyhow!("pull: {e}")), consumer)),
            };
            match batch.next().await {
                Some(Ok(m)) => {
                    let item = (m.subject.to_string(), m.payload.clone(), Some(m));
                    return Some((Ok(item), consumer));
                }
                Some(Err(e)) => return Some((Err(anyhow::anyhow!("pull: {e}")), consumer)),
                // The request expired with nothing new: ask again.
                None => continue,
            }
        }
    })
}

/// Prints `messages` until they end, ^C, [`Flow::Stop`] or `--count`; acks each message of a
/// durable consumer once printed (or skipped), waiting for the server to confirm it.
async fn print<S>(
    messages: S,
    options: &TailOptions,
    out: &mut (dyn Write + Send),
) -> anyhow::Result<()>
where
    S: Stream<Item = anyhow::Result<Item>>,
{
    let mut messages = std::pin::pin!(messages);
    let mut printed = 0u64;
    if options.count == Some(0) {
        return Ok(());
    }
    loop {
        tokio::select! {
            msg = messages.next() => {
                let Some(msg) = msg else { return Ok(()) };
                let (subject, payload, ack) = msg?;
                let (flow, shown) = take(&subject, &payload, options, out)?;
                if flow == Flow::Stop {
                    return Ok(());
                }
                if let Some(message) = ack {
                    message.double_ack().await.map_err(|e| anyhow::anyhow!("ack: {e}"))?;
                }
                printed += u64::from(shown);
                if options.count.is_some_and(|count| printed >= count) {
                    return Ok(());
                }
            }
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}

/// Prints one message unless a filter or `--from-time` skips it (the `bool`: printed);
/// [`Flow::Stop`] for an event past `--until`. A payload that is no event envelope is printed
/// raw in `pretty`, and left out of `jsonl` with a notice on standard error.
fn take(
    subject: &str,
    payload: &[u8],
    options: &TailOptions,
    out: &mut (dyn Write + Send),
) -> anyhow::Result<(Flow, bool)> {
    let Ok(event) = serde_json::from_slice::<RecordedEvent>(payload) else {
        if options.format == Format::Jsonl {
            eprintln!("{subject}: not an event envelope, left out");
        } else {
            writeln!(out, "{subject} {}", String::from_utf8_lossy(payload))?;
        }
        return Ok((Flow::Next, false));
    };
    if options.until.is_some_and(|until| event.recorded_at > until) {
        return Ok((Flow::Stop, false));
    }
    let shown = options.since.is_none_or(|since| event.recorded_at >= since)
        && options
            .from
            .is_none_or(|from| event.position >= from as i64)
        && options.wants(&event);
    if shown {
        writeln!(out, "{}", format::line(&event, options.format)?)?;
        out.flush()?;
    }
    Ok((Flow::Next, shown))
}

#[cfg(test)]
mod tests {
    use super::TailOptions;
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
        let Command::Tail(args) = cli.command else {
            panic!("tail");
        };
        let options = args.options();
        assert_eq!(options.subject.as_deref(), Some("palimpsest.docs.>"));
        assert_eq!(
            options.since.map(|t| t.to_rfc3339()).as_deref(),
            Some("2026-11-27T10:03:00+00:00")
        );
        assert_eq!(
            options.until.map(|t| t.to_rfc3339()).as_deref(),
            Some("2026-11-27T10:04:05.500+00:00")
        );
        assert!(Cli::try_parse_from(["palimpsest", "tail", "--since", "yesterday"]).is_err());
    }

    #[test]
    fn tail_takes_a_start_a_durable_filters_and_a_format() {
        let cli = Cli::try_parse_from([
            "palimpsest",
            "tail",
            "--from-time",
            "2026-11-27T10:03",
            "--durable",
            "audit-1",
            "--context",
            "docs",
            "--category",
            "db",
            "--type",
            "DatabaseCreated,DatabaseDeleted",
            "--format",
            "pretty",
        ])
        .expect("parses");
        let Command::Tail(args) = cli.command else {
            panic!("tail");
        };
        let options = args.options();
        assert!(options.since.is_some());
        assert_eq!(options.durable.as_deref(), Some("audit-1"));
        assert_eq!(options.event_types, ["DatabaseCreated", "DatabaseDeleted"]);
        assert_eq!(options.format, crate::cli::format::Format::Text);
        assert_eq!(
            options.subject_filter("acme").expect("filter"),
            "acme.docs.db.>"
        );
        let only_category = TailOptions {
            category: Some("pad".into()),
            ..Default::default()
        };
        assert_eq!(
            only_category.subject_filter("palimpsest").expect("filter"),
            "palimpsest.*.pad.>"
        );
        let bad = TailOptions {
            context: Some("a.b".into()),
            ..Default::default()
        };
        assert!(bad.subject_filter("palimpsest").is_err());
        let from = Cli::try_parse_from(["palimpsest", "tail", "--from", "42"]).expect("parses");
        let Command::Tail(args) = from.command else {
            panic!("tail");
        };
        assert_eq!(args.options().from, Some(42));
        assert!(
            Cli::try_parse_from([
                "palimpsest",
                "tail",
                "--from",
                "4",
                "--from-time",
                "2026-11-27"
            ])
            .is_err()
        );
    }
}
