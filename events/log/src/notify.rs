//! Postgres LISTEN on a dedicated connection, reconnecting for ever.
//!
//! Notifications only wake readers up; every reader also re-reads on a timer, so a
//! notification lost while the connection was down costs latency, never an event.

use crate::LogError;
use futures::StreamExt;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, NoTls};

/// One notification: its channel and payload.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The channel it was sent on.
    pub channel: String,
    /// The payload text.
    pub payload: String,
}

/// Starts a task that LISTENs on `channels` and forwards every notification to the returned
/// receiver; the task ends when the receiver is dropped.
pub fn listen(
    database_url: &str,
    channels: &[&str],
) -> Result<mpsc::UnboundedReceiver<Notification>, LogError> {
    let config: tokio_postgres::Config = database_url
        .parse()
        .map_err(|e: tokio_postgres::Error| LogError::Config(e.to_string()))?;
    let listen_sql: String = channels.iter().map(|c| format!("LISTEN {c};")).collect();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            if tx.is_closed() {
                return;
            }
            match config.connect(NoTls).await {
                Ok((client, mut connection)) => {
                    let mut messages =
                        futures::stream::poll_fn(move |cx| connection.poll_message(cx));
                    let driver = async {
                        while let Some(message) = messages.next().await {
                            match message {
                                Ok(AsyncMessage::Notification(n)) => {
                                    let note = Notification {
                                        channel: n.channel().to_owned(),
                                        payload: n.payload().to_owned(),
                                    };
                                    if tx.send(note).is_err() {
                                        return;
                                    }
                                }
                                Ok(_) => {}
                                Err(e) => {
                                    tracing::warn!(error = %e, "listen connection failed");
                                    return;
                                }
                            }
                        }
                    };
                    let subscribe = async {
                        if let Err(e) = client.batch_execute(&listen_sql).await {
                            tracing::warn!(error = %e, "LISTEN failed");
                        }
                        // Keep the client alive while the driver runs.
                        std::future::pending::<()>().await;
                    };
                    tokio::select! {
                        _ = driver => {}
                        _ = subscribe => {}
                        _ = tx.closed() => return,
                    }
                }
                Err(e) => tracing::warn!(error = %e, "cannot open listen connection"),
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    Ok(rx)
}
