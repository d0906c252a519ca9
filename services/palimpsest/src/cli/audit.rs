//! `palimpsest audit verify [--stream ID]` and `palimpsest audit stream ID [--at TIME]`.

use crate::config::Settings;
use crate::contexts;
use chrono::{DateTime, Utc};
use clap::Subcommand;
use palimpsest_events::StreamName;
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
        /// Show the stream as it was at this time (RFC 3339); now when absent.
        #[arg(long)]
        at: Option<DateTime<Utc>>,
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
        AuditCommand::Stream { id, at } => {
            let stream = StreamName::parse(&id)?;
            let at = at.unwrap_or_else(Utc::now);
            let mut events = Vec::new();
            let mut after = 0;
            loop {
                let page = store.read_stream(&stream, after, 1000).await?;
                let Some(last) = page.last() else { break };
                after = last.version;
                events.extend(page.into_iter().filter(|e| e.recorded_at <= at));
            }
            if events.is_empty() {
                anyhow::bail!("stream {stream} has no event at or before {at}");
            }
            for e in &events {
                println!(
                    "v{:<5} #{:<8} {} {:<28} {} actor={}",
                    e.version,
                    e.position,
                    e.recorded_at.to_rfc3339(),
                    e.event_type,
                    serde_json::to_string(&e.payload)?,
                    e.metadata.actor.as_deref().unwrap_or("-")
                );
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
