//! `palimpsest tail [SUBJECT]`: print live events from NATS.

use crate::config::Settings;
use futures::StreamExt;
use palimpsest_events::RecordedEvent;

/// Subscribes to `subject` (default `palimpsest.>`) and prints one line per event until ^C.
pub async fn run(settings: &Settings, subject: Option<&str>) -> anyhow::Result<()> {
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
                    Ok(e) => println!(
                        "#{} {} v{} {} {}",
                        e.position, e.stream, e.version, e.event_type, serde_json::to_string(&e.payload)?
                    ),
                    Err(_) => println!("{} {}", msg.subject, String::from_utf8_lossy(&msg.payload)),
                }
            }
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    Ok(())
}
