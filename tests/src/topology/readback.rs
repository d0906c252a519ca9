//! Read-your-writes as clients see it across a load balancer: every acknowledged write is read
//! back at once through the *other* `serve` process (not the one HAProxy sent it to, named by
//! [`SERVED_BY`]), directly by its port, sending the write's `Palimpsest-Position` back. That
//! serve reads from the read models' streaming replica once the replica shows the position,
//! else from the primary; a read that does not show the write is a violation.
//!
//! A read that gets no answer (the other serve is the one being killed, a 5xx) is sent again
//! for up to [`UNANSWERED_AFTER`]; only an answer that says the write is not there counts.

use super::haproxy::SERVED_BY;
use crate::chaos::load::{Ack, Context, Target, records, resources};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::task::{JoinHandle, JoinSet};

/// How long a read is retried while it gets no answer before it is counted unanswered.
pub const UNANSWERED_AFTER: Duration = Duration::from_secs(30);

/// What the reads of one case found.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// Writes read back.
    pub reads: usize,
    /// Reads that answered without the write: read-your-writes violations.
    pub violations: usize,
    /// Reads that got no answer within [`UNANSWERED_AFTER`].
    pub unanswered: usize,
    /// Acknowledgements that did not name the serve that answered (read through the first).
    pub unattributed: usize,
    /// Acknowledgements without `Palimpsest-Position` (read naming no position).
    pub without_position: usize,
    /// The first few violations and unanswered reads, with what the server said.
    pub examples: Vec<String>,
}

/// One `serve` process as the reader reaches it.
#[derive(Debug, Clone)]
pub struct Serve {
    /// Its server name in HAProxy's configuration.
    pub name: String,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
}

/// What one read found.
enum Read {
    Shown,
    Missing(String),
    NoAnswer(String),
}

/// The running reader: reads back every write the load acknowledges.
pub struct Reader {
    task: JoinHandle<()>,
    tally: Arc<Mutex<Tally>>,
}

fn lock(tally: &Mutex<Tally>) -> std::sync::MutexGuard<'_, Tally> {
    match tally.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl Reader {
    /// Starts reading back what arrives on `acks` through `serves` (two or more) as `target`'s
    /// principals; it ends once `acks` is closed and every read is done.
    pub fn start(acks: UnboundedReceiver<Ack>, serves: Vec<Serve>, target: Target) -> Reader {
        let tally = Arc::new(Mutex::new(Tally::default()));
        let task = tokio::spawn(read_all(acks, serves, target, tally.clone()));
        Reader { task, tally }
    }

    /// Waits until every acknowledged write has been read back (the load must be stopped
    /// first, which closes the channel), and returns the tally.
    pub async fn finish(self) -> Tally {
        if let Err(e) = self.task.await {
            lock(&self.tally)
                .examples
                .push(format!("the reader failed: {e}"));
        }
        std::mem::take(&mut *lock(&self.tally))
    }
}

async fn read_all(
    mut acks: UnboundedReceiver<Ack>,
    serves: Vec<Serve>,
    target: Target,
    tally: Arc<Mutex<Tally>>,
) {
    let http = match reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
    {
        Ok(http) => http,
        Err(e) => {
            lock(&tally).examples.push(format!("http client: {e}"));
            return;
        }
    };
    let target = Arc::new(target);
    let mut reads = JoinSet::new();
    while let Some(ack) = acks.recv().await {
        let served_by = ack
            .headers
            .get(SERVED_BY)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let position = ack
            .headers
            .get(palimpsest_web::consistency::POSITION_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<i64>().ok());
        let other = match &served_by {
            Some(name) => serves.iter().find(|s| &s.name != name),
            None => serves.first(),
        };
        let Some(other) = other.cloned() else {
            continue;
        };
        {
            let mut t = lock(&tally);
            t.unattributed += usize::from(served_by.is_none());
            t.without_position += usize::from(position.is_none());
        }
        let (http, target, tally) = (http.clone(), target.clone(), tally.clone());
        reads.spawn(async move {
            for created in &ack.created {
                let read = read_until_answered(&http, &other, &target, &ack, created, position);
                let found = read.await;
                let mut t = lock(&tally);
                t.reads += 1;
                let example = match found {
                    Read::Shown => continue,
                    Read::Missing(said) => {
                        t.violations += 1;
                        format!(
                            "violation: {} {created} acknowledged by {} at position \
                             {position:?}, read through {}: {said}",
                            ack.context.name(),
                            served_by.as_deref().unwrap_or("?"),
                            other.name
                        )
                    }
                    Read::NoAnswer(said) => {
                        t.unanswered += 1;
                        format!(
                            "unanswered: {} {created} through {}: {said}",
                            ack.context.name(),
                            other.name
                        )
                    }
                };
                if t.examples.len() < 5 {
                    t.examples.push(example);
                }
            }
        });
    }
    while reads.join_next().await.is_some() {}
}

/// The reader's control: through every serve, a read of something no write created, in every
/// context (a file and a property for resources), must answer that it is not there; else a
/// violation could never be seen and the count of none would prove nothing.
pub async fn control(serves: &[Serve], target: &Target) -> Result<(), String> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .map_err(|e| format!("http client: {e}"))?;
    let id = uuid::Uuid::new_v4();
    let hex = id.simple().to_string();
    let never = |context: Context, n: u64, created: String| {
        let write = crate::chaos::load::Write {
            key: id.to_string(),
            id: hex.clone(),
            writer: 0,
            n,
        };
        Ack {
            context,
            write,
            created: vec![created],
            headers: reqwest::header::HeaderMap::new(),
            at: Instant::now(),
        }
    };
    let unwritten = [
        never(Context::Pads, 1, format!("chaos-{hex}")),
        never(Context::Atlas, 1, id.to_string()),
        never(Context::Docs, 1, hex.clone()),
        never(
            Context::Records,
            1,
            format!("chaos0:{}:{hex}", records::CLASS),
        ),
        never(Context::Resources, 1, format!("0/chaos-{hex}.txt")),
        never(Context::Resources, 2, format!("0/chaos-{hex}")),
    ];
    for serve in serves {
        for ack in &unwritten {
            let created = &ack.created[0];
            match read(&http, serve, target, ack, created, None).await {
                Read::Missing(_) => {}
                Read::Shown => {
                    return Err(format!(
                        "{} {created}, never written, reads as there through {}",
                        ack.context.name(),
                        serve.name
                    ));
                }
                Read::NoAnswer(said) => {
                    return Err(format!(
                        "{} {created} through {}: no answer: {said}",
                        ack.context.name(),
                        serve.name
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Reads `created` through `serve` until an answer comes (bounded).
async fn read_until_answered(
    http: &reqwest::Client,
    serve: &Serve,
    target: &Target,
    ack: &Ack,
    created: &str,
    position: Option<i64>,
) -> Read {
    let started = Instant::now();
    loop {
        match read(http, serve, target, ack, created, position).await {
            Read::NoAnswer(_) if started.elapsed() < UNANSWERED_AFTER => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            other => return other,
        }
    }
}

/// One read of `created` (what `ack`'s write created) through `serve`.
async fn read(
    http: &reqwest::Client,
    serve: &Serve,
    target: &Target,
    ack: &Ack,
    created: &str,
    position: Option<i64>,
) -> Read {
    let base = &serve.base;
    let request = match ack.context {
        Context::Pads => http.get(format!(
            "{base}/pads/api/1.3.0/getText?apikey={}&padID={created}",
            target.pads_api_key
        )),
        Context::Atlas => http
            .get(format!("{base}/atlas/sections/{created}"))
            .bearer_auth(&target.admin_token),
        Context::Docs => http
            .get(format!(
                "{base}/docs/{}/{created}",
                crate::chaos::load::docs::DATABASE
            ))
            .bearer_auth(&target.admin_token),
        Context::Records => {
            let mut parts = created.splitn(3, ':');
            let (org, class, pk) = (parts.next(), parts.next(), parts.next());
            http.post(format!("{base}/records/api/getDoc"))
                .bearer_auth(&target.admin_token)
                .json(&json!({ "org": org, "cl": class.unwrap_or(records::CLASS), "pk": pk }))
        }
        Context::Resources => {
            let name = created.split_once('/').map_or(created, |(_, name)| name);
            let kind = if name.ends_with(".txt") {
                "files"
            } else {
                "properties"
            };
            let page = resources::page(&ack.write);
            http.get(format!(
                "{base}/resources/@api/deki/pages/{page}/{kind}/{name}"
            ))
            .bearer_auth(&target.resources_key)
        }
    };
    let request = match position {
        Some(p) => request.header(palimpsest_web::consistency::POSITION_HEADER, p.to_string()),
        None => request,
    };
    let (status, body) = match request.send().await {
        Ok(answer) => {
            let status = answer.status().as_u16();
            match answer.text().await {
                Ok(body) => (status, body),
                Err(e) => return Read::NoAnswer(e.to_string()),
            }
        }
        Err(e) => return Read::NoAnswer(e.to_string()),
    };
    if status >= 500 || status == 429 || status == 408 {
        return Read::NoAnswer(format!("{status}: {}", clip(&body)));
    }
    let said = || format!("{status}: {}", clip(&body));
    let parsed: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let shown = (200..300).contains(&status)
        && match ack.context {
            Context::Pads => parsed["code"] == 0,
            Context::Records => parsed["result"]["pk"].as_str() == created.rsplit(':').next(),
            _ => true,
        };
    if shown {
        Read::Shown
    } else {
        Read::Missing(said())
    }
}

fn clip(body: &str) -> String {
    body.chars().take(200).collect()
}
