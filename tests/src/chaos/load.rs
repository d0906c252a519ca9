//! Writes through HTTP on every context while faults happen, remembering what was acknowledged.
//!
//! Each atlas writer creates sections with an `Idempotency-Key`, retrying the same key until it
//! gets its 201, so a write is acknowledged once however often it is retried; each pads writer
//! creates pads by Etherpad's API (a retried `createPad` that finds its pad counts as done).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// What the writers were told succeeded, and when.
#[derive(Debug, Default)]
pub struct Acked {
    /// Atlas section ids acknowledged (201).
    pub sections: Vec<String>,
    /// Pad ids acknowledged (code 0).
    pub pads: Vec<String>,
    /// When each acknowledgement arrived.
    pub at: Vec<Instant>,
    /// Requests that failed (and were retried).
    pub failures: usize,
}

/// The running writers.
pub struct Load {
    stop: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
    /// Shared with the writers.
    pub acked: Arc<Mutex<Acked>>,
}

fn lock(acked: &Mutex<Acked>) -> std::sync::MutexGuard<'_, Acked> {
    match acked.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl Load {
    /// Starts `writers` atlas and `writers` pads writers against `base` (`http://host:port`).
    pub fn start(base: String, api_key: String, writers: usize) -> Load {
        let stop = CancellationToken::new();
        let acked = Arc::new(Mutex::new(Acked::default()));
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .unwrap_or_else(|e| panic!("http client: {e}"));
        let mut tasks = Vec::new();
        for _ in 0..writers {
            tasks.push(tokio::spawn(atlas_writer(
                http.clone(),
                base.clone(),
                acked.clone(),
                stop.clone(),
            )));
            tasks.push(tokio::spawn(pads_writer(
                http.clone(),
                base.clone(),
                api_key.clone(),
                acked.clone(),
                stop.clone(),
            )));
        }
        Load { stop, tasks, acked }
    }

    /// Stops the writers (an unacknowledged write in flight is abandoned) and returns what was
    /// acknowledged.
    pub async fn stop(self) -> Acked {
        self.stop.cancel();
        for task in self.tasks {
            if let Err(e) = task.await {
                eprintln!("writer task: {e}");
            }
        }
        std::mem::take(&mut *lock(&self.acked))
    }

    /// The first acknowledgement at or after `since`.
    pub fn first_ack_after(&self, since: Instant) -> Option<Instant> {
        lock(&self.acked)
            .at
            .iter()
            .copied()
            .filter(|t| *t >= since)
            .min()
    }
}

/// An acknowledged write.
enum Written {
    Section(String),
    Pad(String),
}

/// Records an acknowledgement (true) or a failed try (false).
fn record(acked: &Mutex<Acked>, written: Option<Written>) -> bool {
    let mut acked = lock(acked);
    match written {
        Some(Written::Section(id)) => acked.sections.push(id),
        Some(Written::Pad(id)) => acked.pads.push(id),
        None => {
            acked.failures += 1;
            return false;
        }
    }
    acked.at.push(Instant::now());
    true
}

async fn atlas_writer(
    http: reqwest::Client,
    base: String,
    acked: Arc<Mutex<Acked>>,
    stop: CancellationToken,
) {
    let mut n = 0u64;
    while !stop.is_cancelled() {
        n += 1;
        let key = uuid::Uuid::new_v4().to_string();
        while !stop.is_cancelled() {
            let sent = http
                .post(format!("{base}/atlas/sections"))
                .header("Idempotency-Key", &key)
                .json(&serde_json::json!({ "title": format!("chaos {n}") }))
                .send()
                .await;
            let id = match sent {
                Ok(res) if res.status().as_u16() == 201 => res
                    .json::<serde_json::Value>()
                    .await
                    .ok()
                    .and_then(|v| v["id"].as_str().map(str::to_owned)),
                _ => None,
            };
            if record(&acked, id.map(Written::Section)) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn pads_writer(
    http: reqwest::Client,
    base: String,
    api_key: String,
    acked: Arc<Mutex<Acked>>,
    stop: CancellationToken,
) {
    while !stop.is_cancelled() {
        let pad = format!("chaos-{}", uuid::Uuid::new_v4().simple());
        let mut tried = false;
        while !stop.is_cancelled() {
            let sent = http
                .post(format!("{base}/pads/api/1.3.0/createPad"))
                .form(&[("apikey", api_key.as_str()), ("padID", pad.as_str())])
                .send()
                .await;
            let body = match sent {
                Ok(res) => res.json::<serde_json::Value>().await.ok(),
                Err(_) => None,
            };
            let done = body.as_ref().is_some_and(|b| {
                b["code"] == 0
                    || (tried
                        && b["code"] == 1
                        && b["message"]
                            .as_str()
                            .is_some_and(|m| m.contains("already exist")))
            });
            tried = true;
            if record(&acked, done.then(|| Written::Pad(pad.clone()))) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
