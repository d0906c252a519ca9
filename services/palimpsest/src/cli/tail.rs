//! `palimpsest tail [SUBJECT] [--format text|jsonl]`: print live events from NATS. It follows
//! what is published from now on; for past events by time use `palimpsest audit events --since`.

use crate::cli::format::{self, Format};
use crate::config::Settings;
use futures::StreamExt;
use palimpsest_events::RecordedEvent;

/// Subscribes to `subject` (default `palimpsest.>`) and prints one line per event until ^C.
pub async fn run(settings: &Settings, subject: Option<&str>, form: Format) -> anyhow::Result<()> {
    let client =
        async_nats::connect(palimpsest_log::relay::server_list(&settings.nats_url)).await?;
    let subject = subject.unwrap_or("palimpsest.>").to_owned();
    let mut sub = client.subscribe(subject.clone()).await?;
    eprintln!("tailing {subject} on {}", settings.nats_url);
    loop {
        tokio::select! {
            msg = sub.next() => {
                let Some(msg) = msg else { break };
                match serde_json::from_slice::<RecordedEvent>(&msg.payload) {
                    Ok(e) => println!("{}", format::line(&e, form)?),
                    Err(_) => println!("{} {}", msg.subject, String::from_utf8_lossy(&msg.payload)),
                }
            }
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    Ok(())
}
