//! The JetStream stream's leader in a cluster: which node holds it, and when the surviving
//! nodes have elected another after it was killed.
//!
//! Asked with a short request timeout: while no leader exists the stream-info request gets no
//! answer, and the client's default timeout (10 s) would be measured as election time.

use palimpsest_log::relay::{STREAM_NAME, server_list};
use std::time::{Duration, Instant};

/// How long one stream-info request may take.
const ASK: Duration = Duration::from_millis(250);

async fn jetstream(urls: &str) -> Option<async_nats::jetstream::Context> {
    let client = async_nats::ConnectOptions::new()
        .connection_timeout(Duration::from_secs(1))
        .request_timeout(Some(ASK))
        .connect(server_list(urls))
        .await
        .ok()?;
    Some(async_nats::jetstream::new(client))
}

async fn leader_of(js: &async_nats::jetstream::Context) -> Option<String> {
    let mut stream = js.get_stream(STREAM_NAME).await.ok()?;
    stream.info().await.ok()?.cluster.as_ref()?.leader.clone()
}

/// The node leading the stream now, asked of `urls`.
pub async fn current(urls: &str) -> Option<String> {
    leader_of(&jetstream(urls).await?).await
}

/// Waits (up to `within`) until `urls` report a leader other than `old`; how long that took.
pub async fn elected(urls: &str, old: Option<&str>, within: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut js = None;
    while started.elapsed() < within {
        if js.is_none() {
            js = jetstream(urls).await;
        }
        if let Some(context) = &js {
            let now = leader_of(context).await;
            if now.is_some() && now.as_deref() != old {
                return Some(started.elapsed());
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    None
}
