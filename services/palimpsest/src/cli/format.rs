//! How the commands that print events write them: `text` for a person, `jsonl` (one event
//! envelope a line, exactly as NATS and `/v1/events` carry it) for a program.

use chrono::{DateTime, Utc};
use palimpsest_events::RecordedEvent;

/// The form events are printed in (`--format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One readable line an event (also spelt `pretty`).
    #[default]
    #[value(alias = "pretty")]
    Text,
    /// One JSON envelope a line.
    Jsonl,
}

/// One printed line for `event`.
pub fn line(event: &RecordedEvent, format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Jsonl => serde_json::to_string(event)?,
        Format::Text => format!(
            "#{:<8} v{:<5} {} {} {:<28} {} actor={}",
            event.position,
            event.version,
            event.recorded_at.to_rfc3339(),
            event.stream,
            event.event_type,
            serde_json::to_string(&event.payload)?,
            event.metadata.actor.as_deref().unwrap_or("-")
        ),
    })
}

/// A time as a flag takes it: RFC 3339, or without seconds (`2026-11-27T10:03`, UTC), or a
/// date; see [`palimpsest_log::query::parse_time`].
pub fn time(text: &str) -> Result<DateTime<Utc>, String> {
    palimpsest_log::query::parse_time(text)
}

#[cfg(test)]
mod tests {
    use crate::cli::audit::AuditCommand;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    #[test]
    fn event_commands_take_jsonl_and_times_without_seconds() {
        let cli = Cli::try_parse_from([
            "palimpsest",
            "audit",
            "events",
            "--context",
            "pads",
            "--since",
            "2026-11-27T10:03",
            "--until",
            "2026-11-27",
            "--format",
            "jsonl",
        ])
        .expect("parses");
        let Command::Audit(AuditCommand::Events {
            since,
            until,
            format,
            ..
        }) = cli.command
        else {
            panic!("audit events");
        };
        assert_eq!(
            since.map(|t| t.to_rfc3339()).as_deref(),
            Some("2026-11-27T10:03:00+00:00")
        );
        assert_eq!(
            until.map(|t| t.to_rfc3339()).as_deref(),
            Some("2026-11-27T00:00:00+00:00")
        );
        assert_eq!(format, super::Format::Jsonl);
        let stream = Cli::try_parse_from([
            "palimpsest",
            "audit",
            "stream",
            "pads/pad/p",
            "--at",
            "2026-11-27 10:03",
            "--format",
            "jsonl",
        ]);
        assert!(stream.is_ok(), "{stream:?}");
        let tail = Cli::try_parse_from(["palimpsest", "tail", "--format", "jsonl"]);
        assert!(tail.is_ok(), "{tail:?}");
        assert!(
            Cli::try_parse_from(["palimpsest", "audit", "stream", "a/b/c", "--at", "soon"])
                .is_err()
        );
    }
}
