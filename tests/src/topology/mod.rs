//! `just topology`: a real topology on loopback ([`setup`]) under HTTP load on every context,
//! killing with -9, in turn, a serve, a projector holding partitions, the active relay and a
//! NATS node, each restarted; a case per kill.
//!
//! Each case starts the load through HAProxy (every write under an `Idempotency-Key`, retried
//! until acknowledged, [`crate::chaos::load`]), reads every acknowledged write back through the
//! other serve ([`readback`]), does its kill, brings the process back, stops the load, waits
//! until every read model and JetStream have reached the log's head, then runs the chaos
//! harness's checks ([`crate::chaos::checks`]: nothing acknowledged lost or twice, a gapless
//! log that verifies, JetStream equal to the log, every read model equal to its rebuild) and
//! its own (no read-your-writes violation, partitions taken over within [`TAKEOVER_LIMIT`],
//! the log's replica caught up). [`table`] prints them; a case fails on any of them.

pub mod haproxy;
pub mod lag;
pub mod metrics;
pub mod readback;
pub mod setup;

use crate::chaos::checks::{self, Verdict};
use crate::chaos::load::{Context, Load};
use crate::chaos::processes::Proc;
use crate::chaos::{self, leader};
use readback::{Reader, Tally};
use setup::Topology;
use std::time::{Duration, Instant};

/// The longest a dead projector's partitions may stay unheld.
pub const TAKEOVER_LIMIT: Duration = Duration::from_secs(5);

/// How long the checks wait for read models and JetStream to reach the log's head.
const SETTLE_WITHIN: Duration = Duration::from_secs(60);

/// What one case kills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kill {
    /// One of the two `serve` processes behind HAProxy.
    Serve,
    /// A `project` process holding partitions of `stream_heads`.
    Project,
    /// The relay that is publishing (the one whose published count grows).
    Relay,
    /// The NATS node leading the JetStream stream.
    NatsNode,
}

impl Kill {
    /// Every kill, in the order `just topology` runs them.
    pub const ALL: [Kill; 4] = [Kill::Serve, Kill::Project, Kill::Relay, Kill::NatsNode];

    /// Its name on the command line and in the table.
    pub fn name(self) -> &'static str {
        match self {
            Kill::Serve => "kill-serve",
            Kill::Project => "kill-project",
            Kill::Relay => "kill-relay",
            Kill::NatsNode => "kill-nats-node",
        }
    }
}

/// How long each phase of a case lasts and how large the topology's load is.
#[derive(Debug, Clone)]
pub struct Options {
    /// Writes before the kill.
    pub warmup: Duration,
    /// How long the killed part stays down (a projector stays down at least until its
    /// partitions are taken over).
    pub down: Duration,
    /// Writes after it is back.
    pub after: Duration,
    /// Writers per context.
    pub writers: usize,
    /// Partitions of `stream_heads`.
    pub partitions: u32,
    /// The cases, in order, on one topology.
    pub kills: Vec<Kill>,
    /// Keep the process logs when a case fails (the full run); the short test removes them.
    pub keep_files_on_failure: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            warmup: Duration::from_secs(3),
            down: Duration::from_secs(2),
            after: Duration::from_secs(4),
            writers: 3,
            partitions: 8,
            kills: Kill::ALL.to_vec(),
            keep_files_on_failure: true,
        }
    }
}

/// What one case found.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The kill.
    pub kill: Kill,
    /// The chaos harness's checks on this case's acknowledged writes and on the whole log.
    pub verdict: Verdict,
    /// The read-your-writes reads.
    pub reads: Tally,
    /// For the projector's kill: from the kill until the surviving processes held every
    /// partition again (`None`: never, or no process reported its partitions).
    pub takeover: Option<Duration>,
    /// The longest time any context went without an acknowledged write, from the kill on, and
    /// that context.
    pub write_recovery: Option<(Duration, Context)>,
    /// The longest an event appended from the kill on waited to be in JetStream
    /// ([`lag::longest_wait`]; `None`: some never was while the case ran).
    pub publish_recovery: Option<Duration>,
    /// The log's streaming replica replayed the log's head, and the read models' replica its
    /// primary, after the case.
    pub replicas: bool,
    /// Requests the serves read from the primary because the read models' replica had not
    /// replayed what they named within its wait (`palimpsest_replica_behind_total`): the
    /// others among the read-backs were served by the replica.
    pub replica_fallbacks: u64,
    /// Why a check of this module failed.
    pub notes: Vec<String>,
}

impl Outcome {
    /// Whether every check passed: nothing lost or doubled, no violation, every read answered,
    /// every acknowledgement naming its serve and its position (else the read-back could not
    /// go to the other serve or name the write), the takeover in time, read models equal to
    /// their rebuilds, JetStream equal to the log, the replicas caught up.
    pub fn ok(&self) -> bool {
        self.verdict.ok()
            && self.reads.violations == 0
            && self.reads.unanswered == 0
            && self.reads.unattributed == 0
            && self.reads.without_position == 0
            && self.reads.reads > 0
            && self.replicas
            && (self.kill != Kill::Project || self.takeover.is_some_and(|t| t <= TAKEOVER_LIMIT))
    }
}

/// Starts the topology, runs every case of `options` on it in turn, and takes it down (keeping
/// its files when a case failed and `options` says so).
pub async fn run(options: &Options) -> Vec<Outcome> {
    let mut topology = Topology::start(options.partitions).await;
    if let Err(e) = readback::control(&topology.serves_direct(), &topology.target).await {
        panic!("the read-your-writes reader cannot tell a missing write: {e}");
    }
    let mut outcomes = Vec::new();
    for kill in &options.kills {
        println!("case {} ...", kill.name());
        let outcome = case(&mut topology, *kill, options).await;
        println!("  {}", if outcome.ok() { "ok" } else { "FAILED" });
        outcomes.push(outcome);
    }
    if options.keep_files_on_failure && outcomes.iter().any(|o| !o.ok()) {
        topology.keep_files();
    } else if outcomes.iter().any(|o| !o.ok()) {
        print_process_errors(&topology);
    }
    outcomes
}

/// The last lines of every process's standard error, for a failure whose files are removed.
fn print_process_errors(topology: &Topology) {
    let Ok(entries) = std::fs::read_dir(topology.dir()) else {
        return;
    };
    let mut logs: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "err" || x == "log"))
        .collect();
    logs.sort();
    for log in logs {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        if lines.is_empty() {
            continue;
        }
        eprintln!("--- {} ---", log.display());
        for line in &lines[lines.len().saturating_sub(15)..] {
            eprintln!("{line}");
        }
    }
}

/// One case on the running topology.
pub async fn case(topology: &mut Topology, kill: Kill, options: &Options) -> Outcome {
    let mut notes = Vec::new();
    let (acks, received) = tokio::sync::mpsc::unbounded_channel();
    let reader = Reader::start(received, topology.serves_direct(), topology.target.clone());
    let behind_before = replica_behind(&topology.serves).await;
    let replica_before = topology.read_replica_transactions().await;
    let sampler = lag::Sampler::start(&topology.env);
    let load = Load::start_observed(topology.target.clone(), options.writers, Some(acks))
        .await
        .unwrap_or_else(|e| panic!("load: {e}"));
    tokio::time::sleep(options.warmup).await;
    let killed_at = Instant::now();
    let (restored, takeover) = inject(topology, kill, options.down, &mut notes).await;
    let elapsed = restored.elapsed();
    if elapsed < options.after {
        tokio::time::sleep(options.after - elapsed).await;
    }
    let first_acks = load.first_acks_after(restored);
    let acked = load.stop().await;
    let reads = reader.finish().await;
    let behind_after = replica_behind(&topology.serves).await;
    println!(
        "  the read models' replica committed {} transactions",
        topology.read_replica_transactions().await - replica_before
    );
    // A serve restarted in the case counts again from 0.
    let replica_fallbacks = behind_after
        .iter()
        .zip(&behind_before)
        .map(|(after, before)| {
            if after >= before {
                after - before
            } else {
                *after
            }
        })
        .sum();
    let settled = checks::settle(&topology.env, SETTLE_WITHIN).await;
    let publish_recovery = lag::longest_wait(&sampler.stop().await, killed_at);
    let mut verdict = checks::verify(&topology.env, &acked).await;
    if let Err(e) = settled {
        verdict.notes.insert(0, e);
    }
    // Sets `recovered` (every context wrote after the process came back); the figure shown is
    // the longest stall from the kill on.
    chaos::recovery(restored, &first_acks, &mut verdict);
    let write_recovery = longest_stall(&acked.at, killed_at);
    let mut replicas = true;
    for caught_up in [
        topology
            .log_replica_caught_up(Duration::from_secs(10))
            .await,
        topology
            .read_replica_caught_up(Duration::from_secs(10))
            .await,
    ] {
        if let Err(e) = caught_up {
            replicas = false;
            notes.push(e);
        }
    }
    if kill == Kill::Project {
        match takeover {
            None => notes.push(
                "partitions not taken over (or no project process reported \
                 palimpsest_projection_partitions_held)"
                    .into(),
            ),
            Some(t) if t > TAKEOVER_LIMIT => notes.push(format!(
                "partitions taken over in {} ms, more than {} ms",
                t.as_millis(),
                TAKEOVER_LIMIT.as_millis()
            )),
            Some(_) => {}
        }
    }
    if reads.unattributed > 0 {
        notes.push(format!(
            "{} acknowledgements did not name their serve",
            reads.unattributed
        ));
    }
    if reads.without_position > 0 {
        notes.push(format!(
            "{} acknowledgements carried no Palimpsest-Position",
            reads.without_position
        ));
    }
    notes.extend(reads.examples.iter().cloned());
    Outcome {
        kill,
        verdict,
        reads,
        takeover,
        write_recovery,
        publish_recovery,
        replicas,
        replica_fallbacks,
        notes,
    }
}

/// Each serve's count of requests the replica was too far behind for (0 when it does not
/// answer).
async fn replica_behind(serves: &[Proc]) -> Vec<u64> {
    let mut counts = Vec::new();
    for serve in serves {
        counts.push(metrics::replica_behind(serve.port).await.unwrap_or(0));
    }
    counts
}

/// Does the kill and brings the process back; when it was back, and for a projector the
/// takeover time.
async fn inject(
    topology: &mut Topology,
    kill: Kill,
    down: Duration,
    notes: &mut Vec<String>,
) -> (Instant, Option<Duration>) {
    match kill {
        Kill::Serve => {
            kill_and_restart(&mut topology.serves[0], down).await;
            (Instant::now(), None)
        }
        Kill::Project => {
            let partitions = topology.partitions;
            let holder = holder(&topology.projects).await.unwrap_or_else(|| {
                notes.push("no project process reported holding partitions".into());
                0
            });
            println!(
                "  killing project {holder} (port {})",
                topology.projects[holder].port
            );
            let killed = Instant::now();
            topology.projects[holder].kill();
            let survivors: Vec<u16> = topology
                .projects
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != holder)
                .map(|(_, p)| p.port)
                .collect();
            let takeover = taken_over(&survivors, partitions, Duration::from_secs(30)).await;
            if let Some(rest) = down.checked_sub(killed.elapsed()) {
                tokio::time::sleep(rest).await;
            }
            topology.projects[holder].restart().await;
            (Instant::now(), takeover)
        }
        Kill::Relay => {
            let (active, grown) = active_relay(&topology.relays).await;
            let active = active.unwrap_or_else(|| {
                notes.push("no relay was seen publishing; killed the first".into());
                0
            });
            println!("  killing relay {active} (published in the last second: {grown:?})");
            kill_and_restart(&mut topology.relays[active], down).await;
            (Instant::now(), None)
        }
        Kill::NatsNode => {
            let old = leader::current(&topology.nats.urls()).await;
            let node = match old.as_deref().and_then(|n| topology.nats.index_of(n)) {
                Some(i) => i,
                None => {
                    notes.push("no stream leader found; killed node 0".into());
                    0
                }
            };
            println!("  killing NATS {}", topology.nats.name(node));
            let killed = Instant::now();
            topology.nats.stop(node);
            let survivors = topology.nats.running_urls();
            match leader::elected(&survivors, old.as_deref(), Duration::from_secs(30)).await {
                Some(took) => {
                    println!("  new stream leader {} ms after the kill", took.as_millis())
                }
                None => notes.push("no new stream leader within 30 s".into()),
            }
            if let Some(rest) = down.checked_sub(killed.elapsed()) {
                tokio::time::sleep(rest).await;
            }
            topology.nats.restart(node).await;
            (Instant::now(), None)
        }
    }
}

async fn kill_and_restart(proc: &mut Proc, down: Duration) {
    proc.kill();
    tokio::time::sleep(down).await;
    proc.restart().await;
}

/// The `project` process holding the most partitions (`None`: none reports any).
async fn holder(projects: &[Proc]) -> Option<usize> {
    let mut best = None;
    for (i, p) in projects.iter().enumerate() {
        let held = metrics::partitions_held(p.port).await.unwrap_or(0);
        if held > 0 && best.is_none_or(|(_, most)| held > most) {
            best = Some((i, held));
        }
    }
    best.map(|(i, _)| i)
}

/// Waits until the processes on `ports` together hold all `partitions`; how long that took.
async fn taken_over(ports: &[u16], partitions: u32, within: Duration) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < within {
        let mut held = 0;
        for port in ports {
            held += metrics::partitions_held(*port).await.unwrap_or(0);
        }
        if held >= partitions {
            return Some(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

/// The relay that is publishing: the one whose published count grows most over a second (the
/// other's publishes of the same positions are refused by the stream's expected sequence), or
/// `None` when neither grows; and how much each grew.
async fn active_relay(relays: &[Proc]) -> (Option<usize>, Vec<u64>) {
    let before = published_counts(relays).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = published_counts(relays).await;
    let grown: Vec<u64> = after
        .iter()
        .zip(&before)
        .map(|(a, b)| a.saturating_sub(*b))
        .collect();
    let most = grown.iter().copied().max().unwrap_or(0);
    let active = grown.iter().position(|g| *g == most).filter(|_| most > 0);
    (active, grown)
}

/// Each relay's published count (0 for one that does not answer).
async fn published_counts(relays: &[Proc]) -> Vec<u64> {
    let mut counts = Vec::new();
    for relay in relays {
        counts.push(metrics::published(relay.port).await.unwrap_or(0));
    }
    counts
}

/// The longest time a context went without an acknowledgement from `since` on (the gap from
/// its last acknowledgement before `since`, or from `since`, to its next), and that context.
fn longest_stall(acks: &[(Context, Instant)], since: Instant) -> Option<(Duration, Context)> {
    let mut longest: Option<(Duration, Context)> = None;
    for context in Context::ALL {
        let mut times: Vec<Instant> = acks
            .iter()
            .filter(|(c, _)| *c == context)
            .map(|(_, t)| *t)
            .collect();
        times.sort();
        let start = times
            .iter()
            .rev()
            .find(|t| **t < since)
            .copied()
            .unwrap_or(since);
        let mut previous = start;
        for t in times.iter().filter(|t| **t >= since) {
            let gap = *t - previous;
            if longest.is_none_or(|(most, _)| gap > most) {
                longest = Some((gap, context));
            }
            previous = *t;
        }
    }
    longest
}

fn takeover_cell(o: &Outcome) -> String {
    match (o.kill, o.takeover) {
        (Kill::Project, Some(t)) => format!("{} ms", t.as_millis()),
        (Kill::Project, None) => "never".into(),
        _ => "-".into(),
    }
}

/// The results as a Markdown table, then the notes of failed checks.
pub fn table(outcomes: &[Outcome]) -> String {
    let mut out = String::from(
        "| case | acknowledged writes (pads/atlas/docs/records/resources) | lost | duplicated | read-your-writes violations (reads; replica fallbacks) | partition takeover | write recovery (longest stall) | publish recovery (longest wait) | JetStream = log | every read model = rebuild | log gapless + audit | replicas caught up | ok |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for o in outcomes {
        let v = &o.verdict;
        out.push_str(&format!(
            "| {} | {} ({}) | {} | {} | {} ({}; {}) | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            o.kill.name(),
            v.acked,
            v.acked_by_context
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join("/"),
            v.lost,
            v.duplicated,
            o.reads.violations,
            o.reads.reads,
            o.replica_fallbacks,
            takeover_cell(o),
            o.write_recovery.map_or_else(
                || "never".into(),
                |(d, c)| format!("{} ms ({})", d.as_millis(), c.name())
            ),
            chaos::millis(o.publish_recovery),
            chaos::yes(v.jetstream),
            chaos::yes(v.rebuild),
            chaos::yes(v.gapless && v.audit),
            chaos::yes(o.replicas),
            chaos::yes(o.ok()),
        ));
    }
    for o in outcomes {
        for note in o.verdict.notes.iter().chain(&o.notes) {
            out.push_str(&format!("\n{}: {note}", o.kill.name()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_stall_runs_from_the_last_acknowledgement_before_the_kill() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let acks = vec![
            (Context::Pads, at(0)),
            (Context::Pads, at(100)),
            (Context::Pads, at(900)),
            (Context::Atlas, at(450)),
            (Context::Atlas, at(500)),
        ];
        let (gap, context) = longest_stall(&acks, at(200)).expect("a stall");
        assert_eq!((gap, context), (Duration::from_millis(800), Context::Pads));
    }
}
