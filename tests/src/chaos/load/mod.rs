//! Writes through HTTP on every context while faults happen, remembering what was acknowledged.
//!
//! Every write is sent with an `Idempotency-Key` and retried with the same key and the same
//! body until it gets its 2xx: a write whose answer was lost (the connection reset when a
//! process was killed) is answered on a retry from what the server stored under the key, so it
//! is acknowledged once however often it was sent. A write is *acknowledged* when it got its
//! 2xx; only those are checked afterwards (each context's module says how it finds them in the
//! log). A 4xx other than a conflict is a refusal: the harness or the server is wrong, and the
//! case fails.
//!
//! One module per context: how it writes ([`Context::attempt`]) and how its acknowledged writes
//! are counted in the log ([`Context::count`]).

pub mod atlas;
pub mod docs;
pub mod pads;
pub mod records;
pub mod resources;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The header every write carries.
pub const IDEMPOTENCY_KEY: &str = "Idempotency-Key";

/// A context the load writes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Context {
    /// Etherpad's `createPad`.
    Pads,
    /// `POST /atlas/sections`.
    Atlas,
    /// CouchDB's `PUT /{db}/{doc}` and `_bulk_docs`.
    Docs,
    /// The generic API's `insertDoc` (a class with a unique index).
    Records,
    /// Deki's file uploads and page properties.
    Resources,
}

impl Context {
    /// Every context, in the order the table lists them.
    pub const ALL: [Context; 5] = [
        Context::Pads,
        Context::Atlas,
        Context::Docs,
        Context::Records,
        Context::Resources,
    ];

    /// Its name (the URL prefix).
    pub fn name(self) -> &'static str {
        match self {
            Context::Pads => "pads",
            Context::Atlas => "atlas",
            Context::Docs => "docs",
            Context::Records => "records",
            Context::Resources => "resources",
        }
    }

    /// One try of `write`.
    async fn attempt(self, http: &reqwest::Client, target: &Target, write: &Write) -> Attempt {
        match self {
            Context::Pads => pads::attempt(http, target, write).await,
            Context::Atlas => atlas::attempt(http, target, write).await,
            Context::Docs => docs::attempt(http, target, write).await,
            Context::Records => records::attempt(http, target, write).await,
            Context::Resources => resources::attempt(http, target, write).await,
        }
    }

    /// How many of `acked` (what [`Context::attempt`] acknowledged) the log lacks or holds
    /// twice.
    pub async fn count(self, db: &tokio_postgres::Client, acked: &[String]) -> Count {
        let found = match self {
            Context::Pads => pads::found(db).await,
            Context::Atlas => atlas::found(db).await,
            Context::Docs => docs::found(db).await,
            Context::Records => records::found(db).await,
            Context::Resources => resources::found(db).await,
        };
        match found {
            Ok(found) => Count::of(acked, &found),
            Err(e) => Count {
                lost: acked.len(),
                duplicated: 0,
                error: Some(format!("{}: reading the log: {e}", self.name())),
                examples: Vec::new(),
            },
        }
    }
}

/// Where and as whom the writers write.
#[derive(Debug, Clone)]
pub struct Target {
    /// `http://host:port` of `serve` or `run`.
    pub base: String,
    /// The admin token (docs and records write with it).
    pub admin_token: String,
    /// Etherpad's API key.
    pub pads_api_key: String,
    /// A user's key from `resources-keys.json`.
    pub resources_key: String,
}

/// One write: the key it is sent under and the id its body is made from, the same on every
/// retry (the same key with another body would be a 422).
#[derive(Debug, Clone)]
pub struct Write {
    /// The `Idempotency-Key`.
    pub key: String,
    /// A fresh id (32 hex digits) naming what the write creates.
    pub id: String,
    /// Which writer sends it (spreads records over organisations).
    pub writer: usize,
    /// The writer's count of writes, from 1 (alternates the kinds of write).
    pub n: u64,
}

/// What one try got.
#[derive(Debug)]
pub enum Attempt {
    /// A 2xx: what it created, as the context's [`Context::count`] looks it up.
    Acked(Vec<String>),
    /// No answer, a conflict or a server error: send it again under the same key.
    Retry,
    /// A 4xx that no retry fixes.
    Refused(String),
}

/// An answer that was not the 2xx a write expects: retried when a retry may fix it (timeouts,
/// conflicts, too many requests, server errors), else refused.
pub fn unexpected(status: u16, body: &str) -> Attempt {
    if matches!(status, 408 | 409 | 425 | 429) || status >= 500 {
        Attempt::Retry
    } else {
        Attempt::Refused(format!(
            "{status}: {}",
            body.chars().take(300).collect::<String>()
        ))
    }
}

tokio::task_local! {
    /// The headers of the last answer [`send`] got in this writer's try: what an [`Ack`] tells
    /// an observer beyond what the context's module reads from the body.
    static LAST_HEADERS: std::cell::RefCell<Option<reqwest::header::HeaderMap>>;
}

/// Sends `request`; the status and the body, or `None` when no whole answer came.
pub async fn send(request: reqwest::RequestBuilder) -> Option<(u16, String)> {
    let response = request.send().await.ok()?;
    let status = response.status().as_u16();
    // Outside a writer's try (docs' `prepare`) there is nowhere to keep them.
    let _outside = LAST_HEADERS.try_with(|h| *h.borrow_mut() = Some(response.headers().clone()));
    Some((status, response.text().await.ok()?))
}

/// One acknowledged write, as [`Load::start_observed`] hands it to an observer (the topology's
/// read-your-writes reader): what it created and the headers of the answer that acknowledged
/// it (`Palimpsest-Position`, and the load balancer's name of the server that answered).
#[derive(Debug, Clone)]
pub struct Ack {
    /// Its context.
    pub context: Context,
    /// The write (its id and count, from which the context's module built its request).
    pub write: Write,
    /// What it created, as in [`Acked::writes`].
    pub created: Vec<String>,
    /// The headers of the acknowledging answer.
    pub headers: reqwest::header::HeaderMap,
    /// When it was acknowledged.
    pub at: Instant,
}

/// Acknowledged writes a context lacks or holds twice.
#[derive(Debug, Default, Clone)]
pub struct Count {
    /// Acknowledged, not in the log.
    pub lost: usize,
    /// Acknowledged once, in the log more than once.
    pub duplicated: usize,
    /// Why the log could not be read.
    pub error: Option<String>,
    /// The first few lost writes, to look for in the process logs.
    pub examples: Vec<String>,
}

impl Count {
    /// Compares what was acknowledged with how often the log holds each (`found`).
    fn of(acked: &[String], found: &HashMap<String, i64>) -> Count {
        let mut count = Count::default();
        let mut seen = std::collections::HashSet::new();
        for id in acked {
            if !seen.insert(id) {
                count.duplicated += 1;
                continue;
            }
            match found.get(id).copied().unwrap_or(0) {
                0 => {
                    count.lost += 1;
                    if count.examples.len() < 3 {
                        count.examples.push(id.clone());
                    }
                }
                1 => {}
                _ => count.duplicated += 1,
            }
        }
        count
    }
}

/// Runs `sql`, whose rows are (what was created, how many times), for [`Context::count`].
pub async fn tally(
    db: &tokio_postgres::Client,
    sql: &str,
) -> Result<HashMap<String, i64>, tokio_postgres::Error> {
    Ok(db
        .query(sql, &[])
        .await?
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect())
}

/// What the writers were told succeeded, and when.
#[derive(Debug, Default)]
pub struct Acked {
    /// Per context, what each acknowledged write created.
    pub writes: BTreeMap<Context, Vec<String>>,
    /// When each acknowledgement arrived.
    pub at: Vec<(Context, Instant)>,
    /// Tries that got no 2xx and were sent again.
    pub failures: usize,
    /// Acknowledged writes that took more than one try (the same key sent again).
    pub retried: usize,
    /// Writes refused with a 4xx (context and answer).
    pub refused: Vec<String>,
}

impl Acked {
    /// Acknowledged writes of every context.
    pub fn total(&self) -> usize {
        self.writes.values().map(Vec::len).sum()
    }

    /// Acknowledged writes of `context`.
    pub fn of(&self, context: Context) -> &[String] {
        self.writes.get(&context).map_or(&[], Vec::as_slice)
    }
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
    /// Prepares what writes need (the docs database), then starts `writers` writers per context
    /// against `target`.
    pub async fn start(target: Target, writers: usize) -> Result<Load, String> {
        Load::start_observed(target, writers, None).await
    }

    /// [`Load::start`], handing every acknowledged write to `observer` as it is acknowledged.
    pub async fn start_observed(
        target: Target,
        writers: usize,
        observer: Option<tokio::sync::mpsc::UnboundedSender<Ack>>,
    ) -> Result<Load, String> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| format!("http client: {e}"))?;
        docs::prepare(&http, &target).await?;
        let stop = CancellationToken::new();
        let acked = Arc::new(Mutex::new(Acked::default()));
        let target = Arc::new(target);
        let mut tasks = Vec::new();
        for writer in 0..writers {
            for context in Context::ALL {
                tasks.push(tokio::spawn(write_on(
                    context,
                    writer,
                    http.clone(),
                    target.clone(),
                    acked.clone(),
                    observer.clone(),
                    stop.clone(),
                )));
            }
        }
        Ok(Load { stop, tasks, acked })
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

    /// Per context, the first acknowledgement at or after `since` (absent: none yet).
    pub fn first_acks_after(&self, since: Instant) -> BTreeMap<Context, Instant> {
        let mut first = BTreeMap::new();
        for (context, at) in lock(&self.acked).at.iter().filter(|(_, t)| *t >= since) {
            let entry = first.entry(*context).or_insert(*at);
            if at < entry {
                *entry = *at;
            }
        }
        first
    }
}

/// One writer of `context`: write after write until stopped, each retried until acknowledged
/// or refused.
async fn write_on(
    context: Context,
    writer: usize,
    http: reqwest::Client,
    target: Arc<Target>,
    acked: Arc<Mutex<Acked>>,
    observer: Option<tokio::sync::mpsc::UnboundedSender<Ack>>,
    stop: CancellationToken,
) {
    let mut n = 0u64;
    while !stop.is_cancelled() {
        n += 1;
        let id = uuid::Uuid::new_v4();
        let write = Write {
            key: id.to_string(),
            id: id.simple().to_string(),
            writer,
            n,
        };
        let mut tries = 0usize;
        while !stop.is_cancelled() {
            tries += 1;
            let (attempt, headers) = LAST_HEADERS
                .scope(std::cell::RefCell::new(None), async {
                    let attempt = context.attempt(&http, &target, &write).await;
                    (attempt, LAST_HEADERS.with(|h| h.take()))
                })
                .await;
            match attempt {
                Attempt::Acked(created) => {
                    let at = Instant::now();
                    if let Some(observer) = &observer {
                        // A closed observer (it stopped reading) loses nothing the checks need.
                        let _closed = observer.send(Ack {
                            context,
                            write: write.clone(),
                            created: created.clone(),
                            headers: headers.unwrap_or_default(),
                            at,
                        });
                    }
                    let mut acked = lock(&acked);
                    acked.writes.entry(context).or_default().extend(created);
                    acked.retried += usize::from(tries > 1);
                    acked.at.push((context, at));
                    break;
                }
                Attempt::Refused(why) => {
                    lock(&acked).refused.push(format!(
                        "{} write {}: {why}",
                        context.name(),
                        write.key
                    ));
                    break;
                }
                Attempt::Retry => {
                    lock(&acked).failures += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(entries: &[(&str, i64)]) -> HashMap<String, i64> {
        entries.iter().map(|(k, n)| ((*k).to_owned(), *n)).collect()
    }

    #[test]
    fn an_acknowledged_write_missing_from_the_log_is_lost() {
        let acked = vec!["a".to_owned(), "b".to_owned()];
        let count = Count::of(&acked, &found(&[("a", 1)]));
        assert_eq!((count.lost, count.duplicated), (1, 0));
    }

    #[test]
    fn a_write_in_the_log_twice_or_acknowledged_twice_is_duplicated() {
        let acked = vec!["a".to_owned(), "b".to_owned(), "b".to_owned()];
        let count = Count::of(&acked, &found(&[("a", 2), ("b", 1), ("c", 1)]));
        assert_eq!((count.lost, count.duplicated), (0, 2));
    }

    #[test]
    fn only_timeouts_conflicts_and_server_errors_are_retried() {
        for status in [408, 409, 429, 500, 503] {
            assert!(matches!(unexpected(status, ""), Attempt::Retry), "{status}");
        }
        for status in [400, 401, 404, 422] {
            assert!(
                matches!(unexpected(status, ""), Attempt::Refused(_)),
                "{status}"
            );
        }
    }
}
