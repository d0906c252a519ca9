//! `palimpsest audit verify [--stream ID]`, `palimpsest audit stream ID [--at TIME]` and
//! `palimpsest audit events [filters]`. Times are RFC 3339 or without seconds
//! (`2026-11-27T10:03`, read as UTC); events print as text or `--format jsonl`.

use crate::cli::format::{self, Format};
use crate::cli::kept_head;
use crate::cli::{bundle, witness};
use crate::config::Settings;
use crate::contexts;
use chrono::{DateTime, Utc};
use clap::Subcommand;
use palimpsest_events::StreamName;
use palimpsest_log::query::EventFilter;
use palimpsest_log::{EventStore, audit};
use std::path::PathBuf;

/// The audit subcommands.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Walk the hash chains (one stream, or every stream and the global positions); without
    /// `--stream`, also check every file of the content folders against its digest.
    Verify {
        /// The stream, as `context/category/key`.
        #[arg(long)]
        stream: Option<String>,
        /// docs' attachment folder (`--docs-attachments-dir` of `serve`); by default
        /// `<data-dir>/docs-attachments`.
        #[arg(long, env = "PALIMPSEST_DOCS_ATTACHMENTS_DIR")]
        docs_attachments_dir: Option<PathBuf>,
        /// resources' content folder (`--resources-content-dir` of `serve`); by default
        /// `<data-dir>/resources-content`.
        #[arg(long, env = "PALIMPSEST_RESOURCES_CONTENT_DIR")]
        resources_content_dir: Option<PathBuf>,
        /// A head kept by `audit head --save`: also prove the log extends it, recompute every
        /// leaf and check every batch signature, naming the first position altered, removed
        /// or reordered.
        #[arg(long)]
        since: Option<PathBuf>,
        /// The log's public key (hex, `GET /v1/log/key`); by default the half of
        /// `<data-dir>/log-signing-key`, else the kept head's.
        #[arg(long)]
        key: Option<String>,
    },
    /// Keep the latest signed head (and the leaves it covers) in FILE, after checking that
    /// every event it covers recomputes and was signed by the appender.
    Head {
        /// Where to keep it.
        #[arg(long)]
        save: PathBuf,
        /// The log's public key (hex, `GET /v1/log/key`); by default the half of
        /// `<data-dir>/log-signing-key`.
        #[arg(long)]
        key: Option<String>,
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
    /// Write a stream's events with an inclusion proof each, a signed head and the log's key
    /// to one file (over HTTP), for `audit check`.
    Export(bundle::ExportArgs),
    /// Check a bundle `audit export` wrote, offline: signature, hashes, chain, proofs.
    Check(bundle::CheckArgs),
    /// Watch a server's signed heads, proofs and events; a fork ends it naming the position.
    Witness(witness::WitnessArgs),
}

/// Runs an audit subcommand; a broken chain is an error (non-zero exit).
pub async fn run(settings: &Settings, cmd: AuditCommand) -> anyhow::Result<()> {
    let cmd = match cmd {
        AuditCommand::Export(args) => return bundle::run_export(settings, args).await,
        AuditCommand::Check(args) => return bundle::run_check(args),
        AuditCommand::Witness(args) => return witness::run(settings, args).await,
        other => other,
    };
    let store = EventStore::connect(&settings.database_url).await?;
    match cmd {
        AuditCommand::Head { save, key } => {
            let key = kept_head::public_key(settings, key.as_deref())?;
            kept_head::save(&store, key, &save).await
        }
        AuditCommand::Verify {
            stream,
            docs_attachments_dir,
            resources_content_dir,
            since,
            key,
        } => {
            let tree = match &since {
                Some(file) => {
                    let key = match key.as_deref() {
                        Some(k) => Some(kept_head::public_key(settings, Some(k))?),
                        None => kept_head::public_key(settings, None).ok(),
                    };
                    kept_head::verify_since(&store, key, file).await.err()
                }
                None => None,
            };
            if let Some(fault) = &tree {
                println!("{fault:#}");
            }
            let stream = stream.as_deref().map(StreamName::parse).transpose()?;
            if stream.is_none() {
                let docs = docs_attachments_dir.unwrap_or_else(|| {
                    settings
                        .data_dir
                        .join(palimpsest_docs::settings::ATTACHMENTS_DIR)
                });
                let resources = resources_content_dir.unwrap_or_else(|| {
                    palimpsest_resources::content::default_dir(&settings.data_dir)
                });
                verify_content(&[docs, resources])?;
            }
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
            match tree {
                Some(fault) => Err(fault),
                None => Ok(()),
            }
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
        AuditCommand::Export(_) | AuditCommand::Check(_) | AuditCommand::Witness(_) => {
            anyhow::bail!("export, check and witness need no database: they ran above")
        }
    }
}

/// Checks every file of the content `folders` against the digest it is named by; an altered
/// file is an error naming it (after every folder was checked and every altered file printed).
fn verify_content(folders: &[PathBuf]) -> anyhow::Result<()> {
    let mut altered = Vec::new();
    for folder in folders {
        let report = crate::cli::content_audit::verify_folder(folder)?;
        println!(
            "checked {} content files in {} ({} others passed over)",
            report.checked,
            folder.display(),
            report.other
        );
        for file in &report.altered {
            println!("altered: {} does not match its digest", file.display());
        }
        altered.extend(report.altered);
    }
    match altered.first() {
        Some(first) => anyhow::bail!(
            "{} content file(s) altered, the first {}",
            altered.len(),
            first.display()
        ),
        None => Ok(()),
    }
}
