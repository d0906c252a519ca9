//! What must hold after every fault: nothing acknowledged lost, nothing twice, a gapless log
//! whose chains verify, JetStream equal to the log, and read models equal to their rebuilds.

use super::load::{Acked, Context};
use super::processes::{Env, one_shot};
use crate::postgres::connect;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tokio_postgres::Client;

/// The live read models of the database (schemas holding a `projection_checkpoint`).
pub async fn projections(db: &Client) -> Vec<String> {
    db.query(
        "SELECT table_schema::text FROM information_schema.tables \
         WHERE table_name = 'projection_checkpoint' AND table_schema::text NOT LIKE '%\\_rebuild' \
         AND table_schema::text NOT LIKE '%\\_retired' ORDER BY 1",
        &[],
    )
    .await
    .unwrap_or_default()
    .iter()
    .map(|r| r.get(0))
    .collect()
}

/// The verdict on one case.
#[derive(Debug, Default, Clone)]
pub struct Verdict {
    /// Writes acknowledged to clients.
    pub acked: usize,
    /// Of those, per context in [`Context::ALL`]'s order.
    pub acked_by_context: Vec<usize>,
    /// Acknowledged writes that were sent more than once under their key.
    pub retried: usize,
    /// Writes refused with a 4xx no retry fixes (the harness or the server is wrong).
    pub refused: usize,
    /// Every context acknowledged a write after the fault was undone.
    pub recovered: bool,
    /// Acknowledged writes missing from the log.
    pub lost: usize,
    /// Acknowledged writes appended more than once.
    pub duplicated: usize,
    /// Events in the log.
    pub events: i64,
    /// Positions 1..=head, each once; event ids unique.
    pub gapless: bool,
    /// `palimpsest audit verify` passed.
    pub audit: bool,
    /// JetStream holds exactly the log (sequence = position, message id = event id).
    pub jetstream: bool,
    /// Every read model equals its replay rebuild.
    pub rebuild: bool,
    /// Why a check failed.
    pub notes: Vec<String>,
}

impl Verdict {
    /// Whether every check passed.
    pub fn ok(&self) -> bool {
        self.lost == 0
            && self.duplicated == 0
            && self.refused == 0
            && self.recovered
            && self.gapless
            && self.audit
            && self.jetstream
            && self.rebuild
    }
}

/// Waits (bounded) until every projection (in the read database, [`Env::read_database_url`])
/// and the JetStream stream have reached the log's head.
pub async fn settle(env: &Env, within: Duration) -> Result<(), String> {
    let db = connect(&env.database_url).await;
    let reads = connect(env.read_database_url()).await;
    let started = Instant::now();
    let mut last = String::new();
    while started.elapsed() < within {
        let head: i64 = db
            .query_one("SELECT position FROM log.head WHERE id = 1", &[])
            .await
            .map_err(|e| e.to_string())?
            .get(0);
        let mut behind = Vec::new();
        for p in &projections(&reads).await {
            // A partitioned read model stands where its slowest partition (`<name>/<i>-of-<N>`)
            // stands; the others have one checkpoint, under their own name.
            let at: i64 = reads
                .query_one(
                    &format!(
                        "SELECT coalesce(min(position) FILTER (WHERE name LIKE $1 || '/%'), \
                         min(position) FILTER (WHERE name = $1), -1) \
                         FROM {p}.projection_checkpoint"
                    ),
                    &[p],
                )
                .await
                .map_or(-1, |r| r.get(0));
            if at != head {
                behind.push(format!("{p} at {at}"));
            }
        }
        let published = jetstream_last(&env.nats_url).await.unwrap_or(0) as i64;
        if published != head {
            behind.push(format!("JetStream at {published}"));
        }
        if behind.is_empty() {
            return Ok(());
        }
        last = format!("head {head}: {}", behind.join(", "));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("did not settle: {last}"))
}

/// The JetStream stream's last sequence.
pub async fn jetstream_last(nats_url: &str) -> Option<u64> {
    let client = async_nats::ConnectOptions::new()
        .connection_timeout(Duration::from_secs(1))
        .request_timeout(Some(Duration::from_secs(1)))
        .connect(palimpsest_log::relay::server_list(nats_url))
        .await
        .ok()?;
    let js = async_nats::jetstream::new(client);
    let mut stream = js
        .get_stream(palimpsest_log::relay::STREAM_NAME)
        .await
        .ok()?;
    Some(stream.info().await.ok()?.state.last_sequence)
}

/// Runs every check.
pub async fn verify(env: &Env, acked: &Acked) -> Verdict {
    let db = connect(&env.database_url).await;
    let mut verdict = Verdict {
        acked: acked.total(),
        acked_by_context: Context::ALL.map(|c| acked.of(c).len()).to_vec(),
        refused: acked.refused.len(),
        retried: acked.retried,
        recovered: true,
        ..Verdict::default()
    };
    verdict.notes.extend(acked.refused.iter().take(5).cloned());
    acknowledged_once(&db, acked, &mut verdict).await;
    let log = gapless(&db, &mut verdict).await;
    let (audit, out) = one_shot(env, &["audit", "verify"]);
    verdict.audit = audit;
    if !audit {
        verdict.notes.push(format!("audit: {}", out.trim()));
    }
    jetstream_is_the_log(env, &log, &mut verdict).await;
    let reads = connect(env.read_database_url()).await;
    rebuild_equals_live(env, &reads, &mut verdict).await;
    verdict
}

async fn acknowledged_once(db: &Client, acked: &Acked, verdict: &mut Verdict) {
    for context in Context::ALL {
        let count = context.count(db, acked.of(context)).await;
        verdict.lost += count.lost;
        verdict.duplicated += count.duplicated;
        verdict.notes.extend(count.error);
        if count.lost > 0 || count.duplicated > 0 {
            verdict.notes.push(format!(
                "{}: {} acknowledged writes lost, {} duplicated; lost e.g. {:?}",
                context.name(),
                count.lost,
                count.duplicated,
                count.examples
            ));
        }
    }
}

/// The log as (position, event id), checked gapless.
async fn gapless(db: &Client, verdict: &mut Verdict) -> Vec<(i64, String)> {
    let log: Vec<(i64, String)> = db
        .query(
            "SELECT position, event_id::text FROM log.events ORDER BY position",
            &[],
        )
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let head: i64 = db
        .query_one("SELECT position FROM log.head WHERE id = 1", &[])
        .await
        .map_or(-1, |r| r.get(0));
    let ids: std::collections::HashSet<&String> = log.iter().map(|(_, id)| id).collect();
    let in_order = log
        .iter()
        .enumerate()
        .all(|(i, (position, _))| *position == i as i64 + 1);
    verdict.events = log.len() as i64;
    verdict.gapless = in_order && ids.len() == log.len() && head == log.len() as i64;
    if !verdict.gapless {
        verdict.notes.push(format!(
            "log: {} events, head {head}, {} distinct ids, in order: {in_order}",
            log.len(),
            ids.len()
        ));
    }
    log
}

async fn jetstream_is_the_log(env: &Env, log: &[(i64, String)], verdict: &mut Verdict) {
    let problem = async {
        let client = async_nats::connect(palimpsest_log::relay::server_list(&env.nats_url))
            .await
            .map_err(|e| e.to_string())?;
        let js = async_nats::jetstream::new(client);
        let mut stream = js
            .get_stream(palimpsest_log::relay::STREAM_NAME)
            .await
            .map_err(|e| e.to_string())?;
        let state = stream
            .info()
            .await
            .map_err(|e| e.to_string())?
            .state
            .clone();
        if state.messages != log.len() as u64 || state.last_sequence != log.len() as u64 {
            return Err(format!(
                "JetStream holds {} messages up to {}, the log {}",
                state.messages,
                state.last_sequence,
                log.len()
            ));
        }
        for (position, id) in log {
            let message = stream
                .get_raw_message(*position as u64)
                .await
                .map_err(|e| format!("message {position}: {e}"))?;
            let msg_id = message
                .headers
                .get("Nats-Msg-Id")
                .map(|v| v.as_str().to_owned());
            if msg_id.as_deref() != Some(id.as_str()) {
                return Err(format!(
                    "message {position} is {msg_id:?}, the log's event {id}"
                ));
            }
        }
        Ok(())
    }
    .await;
    verdict.jetstream = problem.is_ok();
    if let Err(p) = problem {
        verdict.notes.push(p);
    }
}

/// Rebuilds read model `name` with `palimpsest replay` (from the log, with `settings`) and
/// asserts that the rebuild in `reads` equals the read model as it was live.
pub async fn replay_equals_live(
    settings: &palimpsest::config::Settings,
    reads: &Client,
    name: &str,
) {
    let live = dump(reads, name).await;
    palimpsest::cli::replay::run(settings, name)
        .await
        .unwrap_or_else(|e| panic!("replay {name}: {e:#}"));
    let rebuilt = dump(reads, name).await;
    assert_eq!(
        live, rebuilt,
        "{name}: the rebuild equals the live read model"
    );
}

/// Every table of a read model, as sorted JSON rows (the checkpoint table left out).
pub async fn dump(db: &Client, schema: &str) -> BTreeMap<String, String> {
    let tables: Vec<String> = db
        .query(
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1 \
             AND table_name <> 'projection_checkpoint' ORDER BY 1",
            &[&schema],
        )
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut out = BTreeMap::new();
    for table in tables {
        let rows: String = db
            .query_one(
                &format!(
                    "SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY to_jsonb(t)::text), '[]')::text \
                     FROM {schema}.{table} t"
                ),
                &[],
            )
            .await
            .map_or_else(|e| format!("error: {e}"), |r| r.get(0));
        out.insert(table, rows);
    }
    out
}

async fn rebuild_equals_live(env: &Env, db: &Client, verdict: &mut Verdict) {
    let names = projections(db).await;
    // stream_heads and one read model per context.
    verdict.rebuild = names.len() > Context::ALL.len();
    if !verdict.rebuild {
        verdict.notes.push(format!("read models found: {names:?}"));
    }
    for projection in &names {
        let live = dump(db, projection).await;
        let (ok, out) = one_shot(env, &["replay", "--projection", projection]);
        if !ok {
            verdict.rebuild = false;
            verdict
                .notes
                .push(format!("replay {projection}: {}", out.trim()));
            continue;
        }
        let rebuilt = dump(db, projection).await;
        if live != rebuilt {
            verdict.rebuild = false;
            let differs: Vec<&String> = live
                .keys()
                .chain(rebuilt.keys())
                .filter(|t| live.get(*t) != rebuilt.get(*t))
                .collect();
            verdict
                .notes
                .push(format!("{projection}: rebuild differs in {differs:?}"));
        }
    }
}
