//! How long events waited to reach JetStream while a case ran: the log's head and the stream's
//! last sequence sampled every [`EVERY`], so a kill's effect on publishing (the active relay
//! gone, the stream leader gone) shows as the longest wait of an event appended after it, not
//! as the time a killed process took to come back.

use crate::chaos::processes::Env;
use palimpsest_log::relay::{STREAM_NAME, server_list};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How often the head and the stream are sampled.
pub const EVERY: Duration = Duration::from_millis(100);

/// One sample: when, the log's head, the stream's last sequence (`None`: no answer).
pub type Sample = (Instant, i64, Option<u64>);

/// The running sampler.
pub struct Sampler {
    stop: CancellationToken,
    task: JoinHandle<Vec<Sample>>,
}

impl Sampler {
    /// Starts sampling `env`'s log and stream.
    pub fn start(env: &Env) -> Sampler {
        let stop = CancellationToken::new();
        let task = tokio::spawn(sample(
            env.database_url.clone(),
            env.nats_url.clone(),
            stop.clone(),
        ));
        Sampler { stop, task }
    }

    /// Stops it; the samples taken.
    pub async fn stop(self) -> Vec<Sample> {
        self.stop.cancel();
        self.task.await.unwrap_or_default()
    }
}

async fn sample(database_url: String, nats_url: String, stop: CancellationToken) -> Vec<Sample> {
    let mut samples = Vec::new();
    let Ok((db, connection)) = tokio_postgres::connect(&database_url, tokio_postgres::NoTls).await
    else {
        return samples;
    };
    tokio::spawn(connection);
    let client = async_nats::ConnectOptions::new()
        .connection_timeout(Duration::from_secs(1))
        .request_timeout(Some(Duration::from_millis(250)))
        .retry_on_initial_connect()
        .connect(server_list(&nats_url))
        .await;
    let Ok(client) = client else {
        return samples;
    };
    let js = async_nats::jetstream::new(client);
    let mut stream = None;
    while !stop.is_cancelled() {
        let at = Instant::now();
        let head = db
            .query_one("SELECT position FROM log.head WHERE id = 1", &[])
            .await
            .map_or(-1, |r| r.get::<_, i64>(0));
        if stream.is_none() {
            stream = js.get_stream(STREAM_NAME).await.ok();
        }
        let last = match &mut stream {
            Some(s) => s.info().await.ok().map(|info| info.state.last_sequence),
            None => None,
        };
        if head >= 0 {
            samples.push((at, head, last));
        }
        tokio::select! {
            _ = tokio::time::sleep(EVERY.saturating_sub(at.elapsed())) => {}
            _ = stop.cancelled() => {}
        }
    }
    samples
}

/// The longest an event appended after `since` waited to be in the stream: for each sample
/// from `since` on, the time until the stream's last sequence reached that sample's head.
/// `None` when some head was never reached while sampling.
pub fn longest_wait(samples: &[Sample], since: Instant) -> Option<Duration> {
    let mut longest = Duration::ZERO;
    for (i, (at, head, _)) in samples.iter().enumerate() {
        if *at < since {
            continue;
        }
        let reached = samples[i..]
            .iter()
            .find(|(_, _, last)| last.is_some_and(|l| l as i64 >= *head))?;
        longest = longest.max(reached.0 - *at);
    }
    Some(longest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_is_until_the_stream_reaches_the_head_of_the_time() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let samples = vec![
            (at(0), 10, Some(10)),
            (at(100), 12, Some(10)),
            (at(200), 15, None),
            (at(300), 15, Some(12)),
            (at(400), 16, Some(16)),
        ];
        assert_eq!(
            longest_wait(&samples, at(50)),
            Some(Duration::from_millis(200))
        );
        assert_eq!(longest_wait(&samples[..4], at(50)), None);
    }
}
