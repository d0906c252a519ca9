//! `palimpsest audit verify [--stream ID]`, `palimpsest audit stream ID [--at TIME]` and
//! `palimpsest audit events [filters]`. Times are RFC 3339 or without seconds
//! (`2026-11-27T10:03`, read as UTC); events print as text or `--format jsonl`.

use crate::cli::format::{self, Format};
use crate::config::Settings;
use crate::contexts;
use chrono::{DateTime, Utc};
use clap::Subcommand;
use palimpsest_events::StreamName;
use palimpsest_log::query::EventFilter;
use palimpsest_log::{EventStore, audit};

/// The audit subcommands.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Walk the hash chains (one stream, or every stream and the global positions).
    Verify {
        /// The stream, as `context/category/key`.
        #[arg(long)]
        stream: Option<String>,
    },
    /// Print a stream's history and its state at a time.
    Stream {
        /// The stream, as `context/category/key`.
        id: String,
        /// Show the stream as it was at this time; now when absent.
        #[arg(long, value_parser = format::time)]
        at: Option<DateTime<Utc>>,
        /// Print only the events recorded at or after this time (the state still folds all).
        #[arg(long, value_parser = format::time)]
        since: Option<DateTime<Utc>>,
        /// `text` (the events, then the state) or `jsonl` (the events only, one a line).
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Print the log's events that match every filter given, in position order.
    Events {
        /// Only this context's events.
        #[arg(long)]
        context: Option<String>,
        /// Only this stream's events, as `context/category/key`.
        #[arg(long)]
        stream: Option<String>,
        /// Only events of this type.
        #[arg(long = "type")]
        event_type: Option<String>,
        /// Only events with this correlation id.
        #[arg(long)]
        correlation_id: Option<uuid::Uuid>,
        /// Only events recorded at or after this time.
        #[arg(long, value_parser = format::time)]
        since: Option<DateTime<Utc>>,
        /// Only events recorded at or before this time.
        #[arg(long, value_parser = format::time)]
        until: Option<DateTime<Utc>>,
        /// `text` or `jsonl` (one envelope a line).
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
}

/// Runs an audit subcommand; a broken chain is an error (non-zero exit).
pub async fn run(settings: &Settings, cmd: AuditCommand) -> anyhow::Result<()> {
    let store = EventStore::connect(&settings.database_url).await?;
    match cmd {
        AuditCommand::Verify { stream } => {
            let stream = stream.as_deref().map(StreamName::parse).transpose()?;
            let report = audit::verify(store.pool(), stream.as_ref()).await?;
            println!(
                "checked {} events in {} streams",
                report.events, report.streams
            );
            if let Some(b) = report.broken {
                let at = b
                    .stream
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| "the log".into());
                anyhow::bail!(
                    "broken link in {at} at version {} (position {}): {}",
                    b.version,
                    b.position,
                    b.reason
                );
            }
            println!("every chain is intact");
            Ok(())
        }
        AuditCommand::Events {
            context,
            stream,
            event_type,
            correlation_id,
            since,
            until,
            format: form,
        } => {
            let filter = EventFilter {
                context,
                stream: stream.as_deref().map(StreamName::parse).transpose()?,
                event_type,
                correlation_id,
                since,
                until,
            };
            let mut after = 0;
            loop {
                let page = store.read_matching(&filter, after, 1000).await?;
                let Some(last) = page.last() else { break };
                after = last.position;
                for event in &page {
                    println!("{}", format::line(event, form)?);
                }
            }
            Ok(())
        }
        AuditCommand::Stream {
            id,
            at,
            since,
            format: form,
        } => {
            let stream = StreamName::parse(&id)?;
            let at = at.unwrap_or_else(Utc::now);
            let mut events = Vec::new();
            loop {
                let after = events
                    .last()
                    .map_or(0, |e: &palimpsest_events::RecordedEvent| e.version);
                let page = store.read_stream_at(&stream, after, Some(at), 1000).await?;
                if page.is_empty() {
                    break;
                }
                events.extend(page);
            }
            if events.is_empty() {
                anyhow::bail!("stream {stream} has no event at or before {at}");
            }
            let shown = events
                .iter()
                .filter(|e| since.is_none_or(|since| e.recorded_at >= since));
            for event in shown {
                println!("{}", format::line(event, form)?);
            }
            if form == Format::Jsonl {
                return Ok(());
            }
            println!("version at {}: {}", at.to_rfc3339(), events.len());
            match contexts::state_at(&stream, &events) {
                Some(state) => println!("state:\n{}", serde_json::to_string_pretty(&state)?),
                None => println!("state: (context {} has no state folder)", stream.context),
            }
            Ok(())
        }
    }
}
