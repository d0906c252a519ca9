//! The fault matrix against the real binary (`just chaos`): a private Postgres cluster, private
//! nats-servers (one, or three for the leader case), the `palimpsest` processes as children, HTTP
//! writes on every context while one fault happens, then every check of [`checks`] and the time
//! writes and publishing took to recover.

pub mod checks;
pub mod leader;
pub mod load;
pub mod processes;

use checks::Verdict;
use load::{Context, Load, Target};
use palimpsest_testkit::{NatsCluster, NatsServer, PgCluster, free_port};
use processes::{Env, Proc};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// One fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// kill -9 of `palimpsest run` (HTTP, relay and projectors in one process), then restart.
    KillRun,
    /// kill -9 of `palimpsest serve` beside separate `relay` and `project`, then restart.
    KillServe,
    /// kill -9 of `palimpsest relay`, then restart.
    KillRelay,
    /// kill -9 of `palimpsest project`, then restart.
    KillProject,
    /// The NATS server is killed and restarted.
    NatsRestart,
    /// Postgres stops immediately (no checkpoint) and restarts with crash recovery.
    PostgresStop,
    /// The JetStream stream leader of a three-node cluster (stream at R3) is killed.
    LeaderLoss,
}

impl Fault {
    /// Every fault, in the order `just chaos` runs them.
    pub const ALL: [Fault; 7] = [
        Fault::KillRun,
        Fault::KillServe,
        Fault::KillRelay,
        Fault::KillProject,
        Fault::NatsRestart,
        Fault::PostgresStop,
        Fault::LeaderLoss,
    ];

    /// Its name on the command line and in the table.
    pub fn name(self) -> &'static str {
        match self {
            Fault::KillRun => "kill-run",
            Fault::KillServe => "kill-serve",
            Fault::KillRelay => "kill-relay",
            Fault::KillProject => "kill-project",
            Fault::NatsRestart => "nats-restart",
            Fault::PostgresStop => "postgres-stop",
            Fault::LeaderLoss => "leader-loss",
        }
    }

    fn split(self) -> bool {
        matches!(
            self,
            Fault::KillServe | Fault::KillRelay | Fault::KillProject
        )
    }
}

/// How long each phase lasts and how many writers run.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Writes before the fault.
    pub warmup: Duration,
    /// How long the killed part stays down.
    pub down: Duration,
    /// Writes after it is back.
    pub after: Duration,
    /// Writers per context.
    pub writers: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            warmup: Duration::from_secs(3),
            down: Duration::from_secs(1),
            after: Duration::from_secs(4),
            writers: 4,
        }
    }
}

/// What one case found.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The fault.
    pub fault: Fault,
    /// The checks.
    pub verdict: Verdict,
    /// From the fault undone (process restarted, server back; for the leader case a new stream
    /// leader elected) until every context had acknowledged a write again (`None`: some
    /// context never did), and the context that took longest.
    pub write_recovery: Option<(Duration, Context)>,
    /// From the same moment until JetStream held every event appended before it.
    pub publish_recovery: Option<Duration>,
}

impl Outcome {
    /// Whether the case lost nothing and every check passed.
    pub fn ok(&self) -> bool {
        self.verdict.ok()
    }
}

/// The NATS side of a case.
enum Nats {
    One(NatsServer),
    Cluster(NatsCluster),
}

/// Runs one case on a fresh database of `pg` and fresh nats-servers.
pub async fn run_case(pg: &mut PgCluster, fault: Fault, options: Options) -> Outcome {
    let mut nats = if fault == Fault::LeaderLoss {
        Nats::Cluster(NatsCluster::start(3).await)
    } else {
        Nats::One(NatsServer::start().await)
    };
    let database = format!("chaos_{}", uuid::Uuid::new_v4().simple());
    let env = Env {
        database_url: pg.url(&database),
        nats_url: match &nats {
            Nats::One(server) => server.url(),
            Nats::Cluster(cluster) => cluster.urls(),
        },
        replicas: if fault == Fault::LeaderLoss { 3 } else { 1 },
        data_dir: std::env::temp_dir().join(format!("palimpsest-chaos-{database}")),
        extra: Vec::new(),
    };
    let resources_key = env.configure().unwrap_or_else(|e| panic!("data dir: {e}"));
    let api_port = free_port();
    let mut procs = if fault.split() {
        vec![
            Proc::start("serve", api_port, &env).await,
            Proc::start("relay", free_port(), &env).await,
            Proc::start("project", free_port(), &env).await,
        ]
    } else {
        vec![Proc::start("run", api_port, &env).await]
    };
    let secret = |file: &str| {
        std::fs::read_to_string(env.data_dir.join(file))
            .map(|text| text.trim().to_owned())
            .unwrap_or_else(|e| panic!("{file}: {e}"))
    };
    let target = Target {
        base: format!("http://127.0.0.1:{api_port}"),
        admin_token: secret("admin-token"),
        pads_api_key: secret("APIKEY.txt"),
        resources_key,
    };
    let load = Load::start(target, options.writers)
        .await
        .unwrap_or_else(|e| panic!("load: {e}"));
    tokio::time::sleep(options.warmup).await;
    let restored = inject(fault, &mut procs, pg, &mut nats, options.down).await;
    let head_at_restore = head(&env).await;
    let publish_recovery = published_up_to(&env, head_at_restore, restored).await;
    let elapsed = restored.elapsed();
    if elapsed < options.after {
        tokio::time::sleep(options.after - elapsed).await;
    }
    let first_acks = load.first_acks_after(restored);
    let acked = load.stop().await;
    let mut verdict = match checks::settle(&env, Duration::from_secs(60)).await {
        Ok(()) => checks::verify(&env, &acked).await,
        Err(e) => {
            let mut v = checks::verify(&env, &acked).await;
            v.notes.insert(0, e);
            v
        }
    };
    let write_recovery = recovery(restored, &first_acks, &mut verdict);
    for proc in &mut procs {
        proc.stop().await;
    }
    drop(nats);
    drop_database(pg, &database).await;
    if verdict.ok() {
        if let Err(e) = std::fs::remove_dir_all(&env.data_dir) {
            eprintln!("remove {}: {e}", env.data_dir.display());
        }
    } else {
        verdict
            .notes
            .push(format!("process logs kept in {}", env.data_dir.display()));
    }
    Outcome {
        fault,
        verdict,
        write_recovery,
        publish_recovery,
    }
}

/// When every context wrote again after `restored`: the slowest context's first
/// acknowledgement. A context that acknowledged nothing after it fails the case.
pub(crate) fn recovery(
    restored: Instant,
    first_acks: &BTreeMap<Context, Instant>,
    verdict: &mut Verdict,
) -> Option<(Duration, Context)> {
    let silent: Vec<&str> = Context::ALL
        .into_iter()
        .filter(|c| !first_acks.contains_key(c))
        .map(Context::name)
        .collect();
    if !silent.is_empty() {
        verdict.recovered = false;
        verdict.notes.push(format!(
            "no write acknowledged after the fault was undone on: {}",
            silent.join(", ")
        ));
        return None;
    }
    first_acks
        .iter()
        .map(|(context, at)| (*at - restored, *context))
        .max()
}

/// Does the fault and undoes it; returns when it was undone.
async fn inject(
    fault: Fault,
    procs: &mut [Proc],
    pg: &mut PgCluster,
    nats: &mut Nats,
    down: Duration,
) -> Instant {
    let role = match fault {
        Fault::KillRun => Some("run"),
        Fault::KillServe => Some("serve"),
        Fault::KillRelay => Some("relay"),
        Fault::KillProject => Some("project"),
        _ => None,
    };
    if let Some(role) = role {
        let Some(proc) = procs.iter_mut().find(|p| p.role == role) else {
            panic!("no {role} process");
        };
        proc.kill();
        tokio::time::sleep(down).await;
        proc.restart().await;
        return Instant::now();
    }
    match (fault, nats) {
        (Fault::NatsRestart, Nats::One(server)) => {
            server.stop();
            tokio::time::sleep(down).await;
            server.restart().await;
        }
        (Fault::PostgresStop, _) => {
            pg.stop_immediate();
            tokio::time::sleep(down).await;
            pg.restart().await;
        }
        (Fault::LeaderLoss, Nats::Cluster(cluster)) => {
            let old = leader::current(&cluster.urls()).await;
            match old.as_ref().and_then(|name| cluster.index_of(name)) {
                Some(i) => cluster.stop(i),
                None => {
                    eprintln!("leader-loss: no stream leader found; stopping node 0");
                    cluster.stop(0);
                }
            }
            // Recovery counts from the election of a new leader among the survivors.
            let survivors = cluster.running_urls();
            match leader::elected(&survivors, old.as_deref(), Duration::from_secs(30)).await {
                Some(took) => {
                    println!("  new stream leader {} ms after the kill", took.as_millis())
                }
                None => eprintln!("leader-loss: no new stream leader within 30 s"),
            }
        }
        (other, _) => panic!("{other:?} does not fit this NATS setup"),
    }
    Instant::now()
}

async fn head(env: &Env) -> i64 {
    for _ in 0..100 {
        if let Ok((client, connection)) =
            tokio_postgres::connect(&env.database_url, tokio_postgres::NoTls).await
        {
            tokio::spawn(connection);
            if let Ok(row) = client
                .query_one("SELECT position FROM log.head WHERE id = 1", &[])
                .await
            {
                return row.get(0);
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    0
}

/// Time from `since` until JetStream holds `position` (bounded at 30 s).
async fn published_up_to(env: &Env, position: i64, since: Instant) -> Option<Duration> {
    while since.elapsed() < Duration::from_secs(30) {
        if checks::jetstream_last(&env.nats_url)
            .await
            .is_some_and(|last| last as i64 >= position)
        {
            return Some(since.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    None
}

async fn drop_database(pg: &PgCluster, database: &str) {
    match tokio_postgres::connect(&pg.url("postgres"), tokio_postgres::NoTls).await {
        Ok((client, connection)) => {
            tokio::spawn(connection);
            if let Err(e) = client
                .batch_execute(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"))
                .await
            {
                eprintln!("drop database {database}: {e}");
            }
        }
        Err(e) => eprintln!("drop database {database}: {e}"),
    }
}

pub(crate) fn millis(d: Option<Duration>) -> String {
    d.map_or_else(|| "never".into(), |d| format!("{} ms", d.as_millis()))
}

fn slowest(recovery: Option<(Duration, Context)>) -> String {
    recovery.map_or_else(
        || "never".into(),
        |(d, context)| format!("{} ms ({})", d.as_millis(), context.name()),
    )
}

pub(crate) fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "NO" }
}

/// The results as a Markdown table, then the notes of failed checks.
pub fn table(outcomes: &[Outcome]) -> String {
    let mut out = String::from(
        "| case | acked writes (pads/atlas/docs/records/resources) | acked after a retry | lost | duplicated | refused | events | gapless | audit | JetStream = log | read models = rebuild | write recovery (slowest context) | publish recovery |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for o in outcomes {
        let v = &o.verdict;
        out.push_str(&format!(
            "| {} | {} ({}) | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            o.fault.name(),
            v.acked,
            v.acked_by_context
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join("/"),
            v.retried,
            v.lost,
            v.duplicated,
            v.refused,
            v.events,
            yes(v.gapless),
            yes(v.audit),
            yes(v.jetstream),
            yes(v.rebuild),
            slowest(o.write_recovery),
            millis(o.publish_recovery),
        ));
    }
    for o in outcomes.iter().filter(|o| !o.verdict.notes.is_empty()) {
        for note in &o.verdict.notes {
            out.push_str(&format!("\n{}: {note}", o.fault.name()));
        }
    }
    out
}
