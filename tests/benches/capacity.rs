//! `just bench`: what each kind of process costs per operation at saturation (issue #31 item
//! 6), so that `deploy/README.md` can size a deployment from measured CPU rather than guesses.
//!
//! The real release binary runs as separate processes (as `projector_source` runs it) on a fresh
//! log database of the shared Postgres (127.0.0.1:5432) and a private nats-server: one `serve`
//! (every context), one `relay`, one `project`. Then, phase by phase:
//!
//! 1. **HTTP writes**, per context: `CAPACITY_CLIENTS` (default 32) concurrent clients send the
//!    context's typical write (the latency bench's: pads `appendText`, docs `PUT` of a document,
//!    records `insertDoc`, resources upload of a small file, atlas commit of a section's
//!    snapshot), each under an `Idempotency-Key`, for `CAPACITY_SECONDS` (default 8) after a
//!    second of warm-up.
//! 2. **HTTP reads**, per context: as many clients read back what phase 1 wrote (`getText`,
//!    `GET` of the document, `getDoc`, `GET` of the file, `GET` of the section).
//! 3. **Relay**: the live relay is stopped; a fresh relay publishes the whole log into a second,
//!    empty nats-server (catch-up: the relay at saturation), three times.
//! 4. **Projectors**, per read model: with the live `project` stopped, a `project --contexts X`
//!    rebuilds read model X from position 0 into a fresh read database of its own
//!    (`PALIMPSEST_READ_DATABASE_URLS="X=…"`), the other read model that process runs staying
//!    caught up where it was: the process' CPU is that read model's; three times each.
//!
//! A catch-up's process is at work before it answers `/healthz`, so its CPU is counted from its
//! start, less the CPU of an idle start (the same process on the caught-up database, up to
//! 200 ms after `/healthz`).
//!
//! For each window it reads the CPU (utime + stime from `/proc/<pid>/stat`, not wall time: the
//! machine is a shared two-core VM) of the palimpsest process doing the work, of the Postgres
//! server (every process of the postmaster, plus what it reaped), of the nats-server, of this
//! bench's own clients, and of the whole machine (`/proc/stat`): what is left is "other", the
//! other engineers' work, printed so a busy window can be told from a quiet one. The share of
//! the Postgres server's transactions that were this bench's (`pg_stat_database`) says how much
//! of its CPU was ours. Last, the sizes: bytes per event in the log's tables, in JetStream and in
//! each read model, for the disk a day of load needs.

use palimpsest_e2e::chaos::processes::{Env, binary};
use palimpsest_e2e::postgres::connect;
use palimpsest_e2e::workload::{form, json_body};
use palimpsest_testkit::{NatsServer, TestDb, free_port};
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio_postgres::Client as Pg;

/// Linux reports process and machine CPU in ticks of 1/100 s (USER_HZ) on every architecture
/// this runs on.
const TICK_MS: f64 = 10.0;

/// Catch-ups (relay, each projector) are repeated this many times: each lasts well under a
/// second here, a few dozen ticks of CPU.
const REPEATS: u32 = 3;

/// A number from the environment (`CAPACITY_CLIENTS`, `CAPACITY_SECONDS`), else `default`:
/// a longer or wider run without editing the bench.
fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

// ---------------------------------------------------------------------------------------------
// CPU accounting from /proc.

/// The fields of `/proc/<pid>/stat` after the command name (field 3 onwards).
fn stat_fields(pid: u32) -> Option<Vec<u64>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = text.rsplit_once(')')?;
    // The state is a letter; keep its place so indexes stay the documented field - 3.
    Some(
        rest.split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect(),
    )
}

/// utime + stime of `pid` (ticks); with `children`, plus what it reaped (cutime + cstime).
fn ticks(pid: u32, children: bool) -> u64 {
    let Some(f) = stat_fields(pid) else {
        return 0;
    };
    let own = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    if children {
        own + f.get(13).copied().unwrap_or(0) + f.get(14).copied().unwrap_or(0)
    } else {
        own
    }
}

/// Every Postgres server process's CPU: the postmaster, its live children, and what it reaped
/// from children that exited (a connection's backend ends with its connection).
fn postgres_ticks(postmaster: u32) -> u64 {
    let mut total = ticks(postmaster, true);
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return total;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == postmaster {
            continue;
        }
        if let Some(f) = stat_fields(pid)
            && f.get(1).copied() == Some(u64::from(postmaster))
        {
            total += f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
        }
    }
    total
}

/// The whole machine's busy CPU (user, nice, system, irq, softirq), in ticks.
fn machine_ticks() -> u64 {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(line) = text.lines().next() else {
        return 0;
    };
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().unwrap_or(0))
        .collect();
    // user nice system idle iowait irq softirq steal
    [0, 1, 2, 5, 6].iter().filter_map(|&i| f.get(i)).sum()
}

/// The nats-server listening on `port` (its command line names it).
fn nats_pid(port: u16) -> Option<u32> {
    let wanted = port.to_string();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        let is_nats = args.first().is_some_and(|a| a.ends_with(b"nats-server"));
        if is_nats
            && args
                .windows(2)
                .any(|w| w[0] == b"-p" && w[1] == wanted.as_bytes())
        {
            return Some(pid);
        }
    }
    None
}

/// The pid of the Postgres server at 127.0.0.1:5432: the parent of its checkpointer.
async fn postmaster_pid(admin: &Pg) -> u32 {
    let row = admin
        .query_one(
            "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'",
            &[],
        )
        .await
        .expect("checkpointer");
    let checkpointer: i32 = row.get(0);
    let fields = stat_fields(checkpointer as u32).expect("checkpointer's /proc (same machine?)");
    fields[1] as u32
}

/// What one window's CPU is split into, in ticks: the process measured apart from everything
/// else that ran, so each figure is charged to the process that spent it.
#[derive(Debug, Clone, Copy, Default)]
struct Cpu {
    /// The palimpsest process doing the measured work.
    worker: u64,
    /// The other palimpsest processes of the bench (live relay and projector during HTTP).
    helpers: u64,
    postgres: u64,
    nats: u64,
    /// This bench (its HTTP clients).
    bench: u64,
    machine: u64,
}

impl Cpu {
    fn plus(self, other: Cpu) -> Cpu {
        Cpu {
            worker: self.worker + other.worker,
            helpers: self.helpers + other.helpers,
            postgres: self.postgres + other.postgres,
            nats: self.nats + other.nats,
            bench: self.bench + other.bench,
            machine: self.machine + other.machine,
        }
    }

    fn since(self, before: Cpu) -> Cpu {
        Cpu {
            worker: self.worker.saturating_sub(before.worker),
            helpers: self.helpers.saturating_sub(before.helpers),
            postgres: self.postgres.saturating_sub(before.postgres),
            nats: self.nats.saturating_sub(before.nats),
            bench: self.bench.saturating_sub(before.bench),
            machine: self.machine.saturating_sub(before.machine),
        }
    }

    /// What the machine spent beyond everything this bench accounts for: others' work.
    fn other(self) -> u64 {
        self.machine
            .saturating_sub(self.worker + self.helpers + self.postgres + self.nats + self.bench)
    }
}

/// Which processes a window reads.
struct Meter {
    postmaster: u32,
    worker: u32,
    helpers: Vec<u32>,
    nats: Option<u32>,
}

impl Meter {
    fn read(&self) -> Cpu {
        Cpu {
            worker: ticks(self.worker, false),
            helpers: self.helpers.iter().map(|&p| ticks(p, false)).sum(),
            postgres: postgres_ticks(self.postmaster),
            nats: self.nats.map_or(0, |p| ticks(p, false)),
            bench: ticks(std::process::id(), false),
            machine: machine_ticks(),
        }
    }
}

/// Transactions the whole Postgres server and this bench's databases committed or rolled back,
/// and the WAL position: how much of the server's work in a window was ours.
#[derive(Debug, Clone, Copy, Default)]
struct Server {
    all: i64,
    ours: i64,
    wal: i64,
}

/// The server's transaction counters and WAL position now (a fresh statistics snapshot).
async fn server(admin: &Pg, ours: &[String]) -> Server {
    admin
        .batch_execute("SELECT pg_stat_clear_snapshot()")
        .await
        .expect("clear snapshot");
    let row = admin
        .query_one(
            "SELECT coalesce(sum(xact_commit + xact_rollback), 0)::bigint, \
                    coalesce(sum(xact_commit + xact_rollback) FILTER (WHERE datname = ANY($1)), 0)::bigint, \
                    (pg_current_wal_lsn() - '0/0')::bigint \
             FROM pg_stat_database",
            &[&ours],
        )
        .await
        .expect("pg_stat_database");
    Server {
        all: row.get(0),
        ours: row.get(1),
        wal: row.get(2),
    }
}

// ---------------------------------------------------------------------------------------------
// The palimpsest processes.

/// One `palimpsest` process of the bench, with its pid for the CPU it uses.
struct Role {
    name: String,
    port: u16,
    child: Option<Child>,
}

impl Role {
    /// Starts `palimpsest <args> --http 127.0.0.1:<port>` with the environment every process
    /// of the bench shares (as the chaos harness sets it) and `extra`, and waits for `/healthz`.
    async fn start(args: &[&str], env: &Env, extra: &[(&str, String)]) -> Role {
        let port = free_port();
        let name = args.join(" ");
        let log = |kind: &str| {
            let file = format!("{}.{kind}", name.replace([' ', ','], "_"));
            std::fs::File::create(env.data_dir.join(file))
                .map(Stdio::from)
                .unwrap_or_else(|_| Stdio::null())
        };
        let child = Command::new(binary())
            .args(args)
            .args(["--http", &format!("127.0.0.1:{port}")])
            .env("DATABASE_URL", &env.database_url)
            .env("NATS_URL", &env.nats_url)
            .env("PALIMPSEST_NATS_REPLICAS", "1")
            .env("PALIMPSEST_DATA_DIR", &env.data_dir)
            .env("PALIMPSEST_RESOURCES_CONTENT_DIR", env.resources_content())
            .env("RUST_LOG", "warn")
            .envs(extra.iter().map(|(k, v)| (*k, v.as_str())))
            .stdout(log("out"))
            .stderr(log("err"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start palimpsest {name}: {e}"));
        let role = Role {
            name,
            port,
            child: Some(child),
        };
        let url = format!("http://127.0.0.1:{port}/healthz");
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(60) {
            if reqwest::get(&url)
                .await
                .is_ok_and(|r| r.status().is_success())
            {
                return role;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("palimpsest {} did not answer /healthz", role.name);
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// The value of metric `series` (name and labels exactly as `/metrics` prints them).
    async fn metric(&self, series: &str) -> f64 {
        let url = format!("http://127.0.0.1:{}/metrics", self.port);
        let text = match reqwest::get(&url).await {
            Ok(answer) => answer.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        text.lines()
            .filter_map(|line| line.rsplit_once(' '))
            .find(|(name, _)| *name == series)
            .and_then(|(_, value)| value.parse().ok())
            .unwrap_or(0.0)
    }

    /// Stops it with SIGINT (its clean shutdown), kill -9 after 10 s.
    async fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Err(e) = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
        {
            eprintln!("kill -INT {}: {e}", self.name);
        }
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _killed = child.kill();
        let _reaped = child.wait();
    }
}

impl Drop for Role {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _killed = child.kill();
            let _reaped = child.wait();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The HTTP load: each context's typical write and read, as the latency bench does them.

/// A context the HTTP phases write to and read from, one at a time so that `serve`'s CPU in a
/// window is that context's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Pads,
    Docs,
    Records,
    Resources,
    Atlas,
}

impl Ctx {
    const ALL: [Ctx; 5] = [
        Ctx::Pads,
        Ctx::Docs,
        Ctx::Records,
        Ctx::Resources,
        Ctx::Atlas,
    ];

    fn name(self) -> &'static str {
        match self {
            Ctx::Pads => "pads",
            Ctx::Docs => "docs",
            Ctx::Records => "records",
            Ctx::Resources => "resources",
            Ctx::Atlas => "atlas",
        }
    }

    fn write_name(self) -> &'static str {
        match self {
            Ctx::Pads => "appendText",
            Ctx::Docs => "PUT /db/{doc}",
            Ctx::Records => "insertDoc",
            Ctx::Resources => "PUT files/{name}",
            Ctx::Atlas => "POST commits",
        }
    }

    fn read_name(self) -> &'static str {
        match self {
            Ctx::Pads => "getText",
            Ctx::Docs => "GET /db/{doc}",
            Ctx::Records => "getDoc",
            Ctx::Resources => "GET files/{name}",
            Ctx::Atlas => "GET sections/{id}",
        }
    }
}

/// Where and as whom the clients call.
struct Http {
    client: reqwest::Client,
    base: String,
    admin: String,
    apikey: String,
}

/// One client's own things: its pad, its atlas section and head commit, and what it wrote
/// (the reads read those back).
#[derive(Debug, Clone, Default)]
struct Slot {
    client: usize,
    pad: String,
    section: String,
    head: Value,
    written: Vec<String>,
}

impl Http {
    /// Sends a request and gives its status and JSON body (`Null` when it has none).
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<(&'static str, String)>,
        bearer: bool,
        keyed: bool,
    ) -> Result<Value, String> {
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if bearer {
            request = request.bearer_auth(&self.admin);
        }
        if keyed {
            request = request.header("idempotency-key", uuid::Uuid::new_v4().to_string());
        }
        if let Some((kind, body)) = body {
            request = request.header("content-type", kind).body(body);
        }
        let answer = request.send().await.map_err(|e| format!("{path}: {e}"))?;
        let status = answer.status();
        let text = answer.text().await.map_err(|e| format!("{path}: {e}"))?;
        if !status.is_success() {
            return Err(format!(
                "{path}: {status} {}",
                text.chars().take(200).collect::<String>()
            ));
        }
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// What client `client` needs before writing to `ctx`.
    async fn prepare(&self, ctx: Ctx, slot: &mut Slot) -> Result<(), String> {
        use reqwest::Method as M;
        match ctx {
            Ctx::Pads => {
                slot.pad = format!("cap{}", slot.client);
                let created = form(&[("apikey", &self.apikey), ("padID", &slot.pad), ("text", "")]);
                let answer = self
                    .call(
                        M::POST,
                        "/pads/api/1.3.0/createPad",
                        Some(created),
                        false,
                        true,
                    )
                    .await?;
                if answer["code"] != 0 {
                    return Err(format!("createPad: {answer}"));
                }
            }
            Ctx::Atlas => {
                let body = json_body(json!({"title": format!("Capacity {}", slot.client)}));
                let section = self
                    .call(M::POST, "/atlas/sections", Some(body), true, true)
                    .await?;
                slot.section = section["id"].as_str().ok_or("no section id")?.to_owned();
                let path = format!("/atlas/sections/{}/lock", slot.section);
                self.call(M::POST, &path, Some(json_body(json!({}))), true, true)
                    .await?;
                slot.head = Value::Null;
            }
            Ctx::Docs | Ctx::Records | Ctx::Resources => {}
        }
        Ok(())
    }

    /// What every client needs before any writes to `ctx` (the docs database, the records
    /// class).
    async fn prepare_once(&self, ctx: Ctx) -> Result<(), String> {
        use reqwest::Method as M;
        match ctx {
            Ctx::Docs => {
                self.call(M::PUT, "/docs/bench", None, true, true).await?;
            }
            Ctx::Records => {
                let class = json!({"clazz": "Book", "sync": true, "pk": ["p1"],
                                   "collections": [], "indexes": []});
                self.call(
                    M::POST,
                    "/records/api/declareClass",
                    Some(json_body(class)),
                    true,
                    true,
                )
                .await?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Write `n` of `slot`'s client to `ctx`.
    async fn write(&self, ctx: Ctx, slot: &mut Slot, n: u64) -> Result<(), String> {
        use reqwest::Method as M;
        let c = slot.client;
        match ctx {
            Ctx::Pads => {
                let text = format!(" {n}");
                let params = [
                    ("apikey", self.apikey.as_str()),
                    ("padID", slot.pad.as_str()),
                    ("text", &text),
                ];
                let answer = self
                    .call(
                        M::POST,
                        "/pads/api/1.3.0/appendText",
                        Some(form(&params)),
                        false,
                        true,
                    )
                    .await?;
                if answer["code"] != 0 {
                    return Err(format!("appendText: {answer}"));
                }
                slot.written.push(slot.pad.clone());
            }
            Ctx::Docs => {
                let id = format!("d{c}-{n}");
                let doc = json!({"type": "note", "n": n, "text": "a small document"});
                self.call(
                    M::PUT,
                    &format!("/docs/bench/{id}"),
                    Some(json_body(doc)),
                    true,
                    true,
                )
                .await?;
                slot.written.push(id);
            }
            Ctx::Records => {
                let doc = json!({"org": "o1", "data": {"clazz": "Book", "p1": format!("b{c}-{n}"),
                                 "title": "a small record", "n": n}});
                let answer = self
                    .call(
                        M::POST,
                        "/records/api/insertDoc",
                        Some(json_body(doc)),
                        true,
                        true,
                    )
                    .await?;
                slot.written.push(answer["result"]["pk"].to_string());
            }
            Ctx::Resources => {
                let path = format!(
                    "/resources/@api/deki/pages/{}/files/f{c}-{n}.txt",
                    1 + c % 8
                );
                self.call(
                    M::PUT,
                    &path,
                    Some(("text/plain", format!("file {n}"))),
                    true,
                    true,
                )
                .await?;
                slot.written.push(path);
            }
            Ctx::Atlas => {
                let mut commit = json!({"snapshot": snapshot(n)});
                if !slot.head.is_null() {
                    commit["expected_head_commit_id"] = slot.head.clone();
                }
                let path = format!("/atlas/sections/{}/commits", slot.section);
                let answer = self
                    .call(M::POST, &path, Some(json_body(commit)), true, true)
                    .await?;
                slot.head = answer["commit"]["id"].clone();
                slot.written.push(slot.section.clone());
            }
        }
        Ok(())
    }

    /// Read `n` of `slot`'s client: one of the things it wrote to `ctx`.
    async fn read(&self, ctx: Ctx, slot: &Slot, n: u64) -> Result<(), String> {
        use reqwest::Method as M;
        if slot.written.is_empty() {
            return Err(format!("client {} wrote nothing to read", slot.client));
        }
        let item = &slot.written[(n as usize * 7919) % slot.written.len()];
        match ctx {
            Ctx::Pads => {
                let path = format!(
                    "/pads/api/1.3.0/getText?apikey={}&padID={item}",
                    self.apikey
                );
                let answer = self.call(M::GET, &path, None, false, false).await?;
                if answer["code"] != 0 {
                    return Err(format!("getText: {answer}"));
                }
            }
            Ctx::Docs => {
                self.call(M::GET, &format!("/docs/bench/{item}"), None, true, false)
                    .await?;
            }
            Ctx::Records => {
                let pk: Value = serde_json::from_str(item).unwrap_or(Value::Null);
                let call = json_body(json!({"org": "o1", "cl": "Book", "pk": pk}));
                let got = self
                    .call(M::POST, "/records/api/getDoc", Some(call), true, false)
                    .await?;
                if got["result"]["pk"] != pk {
                    return Err(format!("getDoc {item}: {got}"));
                }
            }
            Ctx::Resources => {
                self.call(M::GET, item, None, true, false).await?;
            }
            Ctx::Atlas => {
                self.call(
                    M::GET,
                    &format!("/atlas/sections/{item}"),
                    None,
                    true,
                    false,
                )
                .await?;
            }
        }
        Ok(())
    }
}

/// A section snapshot that differs with `n` (the latency bench's).
fn snapshot(n: u64) -> Value {
    json!({
        "schema_version": 1,
        "editor_feature_collection": {"type": "FeatureCollection", "features": []},
        "entities": [{"operation": "create", "id": "e", "name": format!("Entity {n}"),
                      "slug": "e", "type_id": "country"}],
        "geometries": [{"operation": "create", "id": "g", "type": "path", "time_start": 968,
                        "draw_geometry": {"type": "Polygon", "coordinates":
                            [[[104.0, 19.0], [106.0, 19.0], [106.0, 21.0], [104.0, 19.0]]]}}],
        "link_scopes": [{"geometry_id": "g", "entity_ids": ["e"]}]
    })
}

/// What one window measured.
struct Window {
    ops: u64,
    errors: u64,
    first_error: Option<String>,
    seconds: f64,
    cpu: Cpu,
    server: Server,
    events: i64,
}

impl Window {
    fn per_op(&self, ticks: u64) -> f64 {
        ticks as f64 * TICK_MS / self.ops.max(1) as f64
    }

    fn rate(&self) -> f64 {
        self.ops as f64 / self.seconds
    }

    /// Of the Postgres server's transactions in the window, the share that were ours.
    fn ours(&self) -> String {
        share(self.server.ours, self.server.all)
    }
}

/// `ours` of `all` transactions as a percentage. Statistics are flushed once a second (a few
/// percent above 100 happen), and a database dropped in the window takes its counts out of
/// `all`: then the share says nothing, and is printed as such.
fn share(ours: i64, all: i64) -> String {
    if all <= 0 || ours as f64 > 1.2 * all as f64 {
        "n/a (a database was dropped)".to_owned()
    } else {
        format!("{:.0}%", 100.0 * ours as f64 / all as f64)
    }
}

/// Runs `slots.len()` clients against `ctx` (writes, or reads of what they wrote) for a second
/// of warm-up and `seconds` measured; gives the slots back and the window.
#[allow(clippy::too_many_arguments)]
async fn drive(
    http: &Arc<Http>,
    ctx: Ctx,
    writes: bool,
    slots: Vec<Slot>,
    seconds: u64,
    meter: &Meter,
    admin: &Pg,
    log: &Pg,
    ours: &[String],
) -> (Vec<Slot>, Window) {
    let ok = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let first_error = Arc::new(std::sync::Mutex::new(None::<String>));
    let stop_at = Instant::now() + Duration::from_secs(1 + seconds);
    let mut tasks = Vec::new();
    for mut slot in slots {
        let (http, ok, failed, first_error) = (
            http.clone(),
            ok.clone(),
            failed.clone(),
            first_error.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut n = slot.written.len() as u64;
            while Instant::now() < stop_at {
                n += 1;
                let done = if writes {
                    http.write(ctx, &mut slot, n).await
                } else {
                    http.read(ctx, &slot, n).await
                };
                match done {
                    Ok(()) => ok.fetch_add(1, Ordering::Relaxed),
                    Err(e) => {
                        let mut first = first_error.lock().unwrap_or_else(|p| p.into_inner());
                        first.get_or_insert(e);
                        failed.fetch_add(1, Ordering::Relaxed)
                    }
                };
            }
            slot
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (ops0, err0, head0) = (
        ok.load(Ordering::Relaxed),
        failed.load(Ordering::Relaxed),
        head(log).await,
    );
    let (cpu0, server0, t0) = (meter.read(), server(admin, ours).await, Instant::now());
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let (cpu1, t1) = (meter.read(), Instant::now());
    let (ops1, err1) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    let server1 = server(admin, ours).await;
    let head1 = head(log).await;
    let mut back = Vec::new();
    for task in tasks {
        back.push(task.await.expect("client task"));
    }
    let first_error = first_error.lock().unwrap_or_else(|p| p.into_inner()).take();
    let window = Window {
        ops: ops1 - ops0,
        errors: err1 - err0,
        first_error,
        seconds: (t1 - t0).as_secs_f64(),
        cpu: cpu1.since(cpu0),
        server: Server {
            all: server1.all - server0.all,
            ours: server1.ours - server0.ours,
            wal: server1.wal - server0.wal,
        },
        events: head1 - head0,
    };
    (back, window)
}

/// The log's last position: events appended in a window are the difference.
async fn head(log: &Pg) -> i64 {
    log.query_one("SELECT coalesce(max(position), 0) FROM log.events", &[])
        .await
        .map(|r| r.get(0))
        .unwrap_or(0)
}

/// The position read model `model`'s checkpoint shows in `reads` (its only checkpoint there).
async fn checkpoint(reads: &Pg) -> i64 {
    let Ok(rows) = reads
        .query(
            "SELECT table_schema::text FROM information_schema.tables \
             WHERE table_name = 'projection_checkpoint'",
            &[],
        )
        .await
    else {
        return 0;
    };
    let mut lowest = None::<i64>;
    for row in rows {
        let schema: String = row.get(0);
        let sql = format!("SELECT min(position) FROM {schema}.projection_checkpoint");
        if let Ok(row) = reads.query_one(&sql, &[]).await {
            let position: Option<i64> = row.get(0);
            let position = position.unwrap_or(0);
            lowest = Some(lowest.map_or(position, |l: i64| l.min(position)));
        }
    }
    lowest.unwrap_or(0)
}

/// Bytes the read models in `reads` take on disk (tables, indexes, TOAST), beside the
/// checkpoint tables.
async fn read_model_bytes(reads: &Pg) -> i64 {
    reads
        .query_one(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relkind IN ('r', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'public') \
             AND n.nspname NOT LIKE 'pg_toast%'",
            &[],
        )
        .await
        .map(|r| r.get(0))
        .unwrap_or(0)
}

/// The CPU (ticks) a process started with `args` uses from its start until 200 ms after it
/// answers `/healthz`, when it finds nothing to do: what a catch-up's figure leaves out.
async fn idle_start(args: &[&str], env: &Env, extra: &[(&str, String)]) -> u64 {
    let mut role = Role::start(args, env, extra).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let used = ticks(role.pid(), false);
    role.stop().await;
    used
}

/// The port of a `nats://host:port` URL.
fn port_of(url: &str) -> u16 {
    url.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {url}"))
}

/// A row of the summary table.
struct Row {
    kind: String,
    what: String,
    rate: f64,
    process_ms: f64,
    postgres_ms: f64,
    nats_ms: Option<f64>,
    note: String,
}

impl Row {
    /// The row of an HTTP window: `serve`'s CPU and Postgres' per operation.
    fn http(kind: &str, what: String, w: &Window, note: String) -> Row {
        Row {
            kind: kind.into(),
            what,
            rate: w.rate(),
            process_ms: w.per_op(w.cpu.worker),
            postgres_ms: w.per_op(w.cpu.postgres),
            nats_ms: None,
            note,
        }
    }
}

/// Prints the summary table, the one `docs/performance/capacity.md` keeps.
fn print_rows(rows: &[Row]) {
    println!(
        "| kind | operation | ops/s reached | CPU ms/op, its process | Postgres CPU ms/op | NATS CPU ms/op | note |"
    );
    println!("|---|---|---|---|---|---|---|");
    for r in rows {
        println!(
            "| {} | {} | {:.0} | {:.3} | {:.3} | {} | {} |",
            r.kind,
            r.what,
            r.rate,
            r.process_ms,
            r.postgres_ms,
            r.nats_ms.map_or("—".to_owned(), |v| format!("{v:.3}")),
            r.note
        );
    }
}

/// What every phase shares: the processes' environment, the Postgres server's postmaster (its
/// CPU is measured), connections to the admin database and the log, the bench's own databases
/// (their share of the server's transactions), the load's shape, and the table's rows.
struct Bench {
    env: Env,
    postmaster: u32,
    admin: Pg,
    log: Pg,
    ours: Vec<String>,
    clients: usize,
    seconds: u64,
    rows: Vec<Row>,
}

/// Runs the phases in order (HTTP writes, HTTP reads, relay, projectors) and prints each
/// phase's table, then the sizes and the summary.
#[tokio::main]
async fn main() {
    let clients = env_number("CAPACITY_CLIENTS", 32) as usize;
    let seconds = env_number("CAPACITY_SECONDS", 8);
    let started = Instant::now();
    let db = TestDb::create().await;
    let nats = NatsServer::start().await;
    let data_dir = tempfile::tempdir().expect("data dir");
    let env = Env {
        database_url: db.url().to_owned(),
        nats_url: nats.url(),
        replicas: 1,
        data_dir: data_dir.path().to_path_buf(),
        extra: Vec::new(),
    };
    env.configure().expect("data dir");
    let admin = connect(&palimpsest_testkit::admin_url()).await;
    let postmaster = postmaster_pid(&admin).await;
    let nats_first = nats_pid(port_of(&nats.url()));

    let mut serve = Role::start(&["serve"], &env, &[]).await;
    let mut relay = Role::start(&["relay"], &env, &[]).await;
    let mut project = Role::start(&["project"], &env, &[]).await;
    let secret = |file: &str| {
        std::fs::read_to_string(env.data_dir.join(file))
            .map(|text| text.trim().to_owned())
            .unwrap_or_else(|e| panic!("{file}: {e}"))
    };
    let http = Arc::new(Http {
        client: reqwest::Client::builder()
            .tcp_nodelay(true)
            .timeout(Duration::from_secs(30))
            .build()
            .expect("http client"),
        base: format!("http://127.0.0.1:{}", serve.port),
        admin: secret("admin-token"),
        apikey: secret("APIKEY.txt"),
    });
    let log = connect(db.url()).await;
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "capacity bench: release binary as processes (serve, relay, project) on a fresh database \
         of the shared Postgres (127.0.0.1:5432) and a private nats-server; {clients} clients, \
         {seconds} s windows after 1 s of warm-up; load average at start: {}",
        loadavg.trim()
    );
    println!(
        "CPU from /proc (utime+stime); \"other\" = the machine's busy CPU minus everything listed (other engineers' work)"
    );

    let meter = Meter {
        postmaster,
        worker: serve.pid(),
        helpers: vec![relay.pid(), project.pid()],
        nats: nats_first,
    };
    println!();
    println!(
        "| phase | ops/s | errors | events/op | serve ms/op | project+relay ms/op | Postgres ms/op | NATS ms/op | bench ms/op | other ms/op | WAL B/op | our share of PG xacts |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut b = Bench {
        env,
        postmaster,
        admin,
        log,
        ours: vec![db.name().to_owned()],
        clients,
        seconds,
        rows: Vec::new(),
    };
    http_phases(&mut b, &http, &meter).await;
    serve.stop().await;
    project.stop().await;
    relay.stop().await;
    let total = head(&b.log).await;
    relay_phase(&mut b, total).await;
    println!();
    println!(
        "| read model | events counted (events_total) | its own events | catch-up s | project ms/event counted | Postgres ms/event counted | project ms/own event | Postgres ms/own event | other ms/own event | idle start ms | read model bytes/own event | our share of PG xacts |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let models = [
        "pads",
        "docs",
        "records",
        "resources",
        "atlas",
        "stream_heads",
    ];
    for model in models {
        projector_phase(&mut b, model, total).await;
    }
    print_sizes(&b, total).await;
    println!();
    print_rows(&b.rows);
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average at end: {}; whole bench {:.0} s",
        loadavg.trim(),
        started.elapsed().as_secs_f64()
    );
    drop(b);
    db.drop().await;
}

/// Prints one HTTP phase's line of the table (and its first error, if any).
fn print_phase(label: String, w: &Window) {
    println!(
        "| {label} | {:.0} | {} | {:.2} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.0} | {} |",
        w.rate(),
        w.errors,
        w.events as f64 / w.ops.max(1) as f64,
        w.per_op(w.cpu.worker),
        w.per_op(w.cpu.helpers),
        w.per_op(w.cpu.postgres),
        w.per_op(w.cpu.nats),
        w.per_op(w.cpu.bench),
        w.per_op(w.cpu.other()),
        w.server.wal as f64 / w.ops.max(1) as f64,
        w.ours()
    );
    if let Some(e) = &w.first_error {
        println!("  first error: {e}");
    }
}

/// Every context's write, then every context's read, each at saturation for a window: the
/// `serve` process's CPU per operation, with the live projectors' and relay's beside it.
async fn http_phases(b: &mut Bench, http: &Arc<Http>, meter: &Meter) {
    let mut written = Vec::new();
    for ctx in Ctx::ALL {
        http.prepare_once(ctx).await.expect("prepare");
        let mut slots = Vec::new();
        for client in 0..b.clients {
            let mut slot = Slot {
                client,
                ..Slot::default()
            };
            http.prepare(ctx, &mut slot).await.expect("prepare client");
            slots.push(slot);
        }
        let (slots, w) = drive(
            http, ctx, true, slots, b.seconds, meter, &b.admin, &b.log, &b.ours,
        )
        .await;
        let what = format!("{} {}", ctx.name(), ctx.write_name());
        print_phase(format!("write {what}"), &w);
        let note = format!(
            "serve; {:.2} events/op; live projector+relay {:.3} ms/op",
            w.events as f64 / w.ops.max(1) as f64,
            w.per_op(w.cpu.helpers)
        );
        b.rows.push(Row::http("HTTP write", what, &w, note));
        written.push((ctx, slots));
    }
    for (ctx, slots) in written {
        let (_, w) = drive(
            http, ctx, false, slots, b.seconds, meter, &b.admin, &b.log, &b.ours,
        )
        .await;
        let what = format!("{} {}", ctx.name(), ctx.read_name());
        print_phase(format!("read {what}"), &w);
        b.rows
            .push(Row::http("HTTP read", what, &w, "serve".into()));
    }
}

/// The relay at saturation: the whole log (`total` events) into an empty nats-server.
async fn relay_phase(b: &mut Bench, total: i64) {
    let mut relay_cpu = Cpu::default();
    let (mut published, mut relay_secs, mut stream_bytes) = (0.0, 0.0, 0u64);
    let mut relay_idle = 0u64;
    for repeat in 0..REPEATS {
        let nats2 = NatsServer::start().await;
        let port = port_of(&nats2.url());
        let mut env2 = b.env.clone();
        env2.nats_url = nats2.url();
        let mut meter = Meter {
            postmaster: b.postmaster,
            worker: 0,
            helpers: Vec::new(),
            nats: nats_pid(port),
        };
        let c0 = meter.read();
        let t0 = Instant::now();
        let mut relay2 = Role::start(&["relay"], &env2, &[]).await;
        meter.worker = relay2.pid();
        let js = async_nats::jetstream::new(async_nats::connect(nats2.url()).await.expect("nats"));
        stream_bytes = loop {
            if let Ok(mut s) = js.get_stream(palimpsest_log::relay::STREAM_NAME).await
                && let Ok(info) = s.info().await
                && info.state.last_sequence as i64 >= total
            {
                break info.state.bytes;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(180),
                "relay: no catch-up"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let (c1, t1) = (meter.read(), Instant::now());
        published += relay2.metric("palimpsest_relay_published_total").await;
        relay_secs += (t1 - t0).as_secs_f64();
        relay_cpu = relay_cpu.plus(c1.since(c0));
        relay2.stop().await;
        if repeat == 0 {
            relay_idle = idle_start(&["relay"], &env2, &[]).await;
        }
    }
    let published = published.max(1.0);
    let work = relay_cpu
        .worker
        .saturating_sub(relay_idle * u64::from(REPEATS));
    let per = |t: u64| t as f64 * TICK_MS / published;
    println!();
    println!(
        "relay catch-up, {REPEATS} times: {published:.0} events published in {relay_secs:.2} s; relay {:.4} ms/event (its idle start, {:.0} ms, taken off), Postgres {:.4}, NATS {:.4}, bench {:.4}, other {:.4}",
        per(work),
        relay_idle as f64 * TICK_MS,
        per(relay_cpu.postgres),
        per(relay_cpu.nats),
        per(relay_cpu.bench),
        per(relay_cpu.other()),
    );
    b.rows.push(Row {
        kind: "relay".into(),
        what: "event published (catch-up)".into(),
        rate: published / relay_secs,
        process_ms: per(work),
        postgres_ms: per(relay_cpu.postgres),
        nats_ms: Some(per(relay_cpu.nats)),
        note: format!(
            "JetStream {:.0} B/event stored",
            stream_bytes as f64 / total.max(1) as f64
        ),
    });
}

/// One read model at saturation: rebuilt from 0 into a read database of its own, `REPEATS`
/// times, its CPU from the process' start less an idle start's.
async fn projector_phase(b: &mut Bench, model: &str, total: i64) {
    let contexts = if model == "stream_heads" {
        "pads"
    } else {
        model
    };
    let series = format!("palimpsest_projection_events_total{{projection=\"{model}\"}}");
    let own: i64 = if model == "stream_heads" {
        total
    } else {
        b.log
            .query_one(
                "SELECT count(*) FROM log.events WHERE context = $1",
                &[&model],
            )
            .await
            .map(|r| r.get(0))
            .unwrap_or(0)
    };
    let (mut cpu, mut counted, mut secs, mut bytes, mut idle) = (Cpu::default(), 0.0, 0.0, 0, 0);
    let (mut xacts_all, mut xacts_ours) = (0, 0);
    for repeat in 0..REPEATS {
        let reads = TestDb::create().await;
        b.ours.push(reads.name().to_owned());
        let extra = [(
            "PALIMPSEST_READ_DATABASE_URLS",
            format!("{model}={}", reads.url()),
        )];
        let args = ["project", "--contexts", contexts];
        let mut meter = Meter {
            postmaster: b.postmaster,
            worker: 0,
            helpers: Vec::new(),
            nats: None,
        };
        let s0 = server(&b.admin, &b.ours).await;
        let (c0, t0) = (meter.read(), Instant::now());
        let mut proc = Role::start(&args, &b.env, &extra).await;
        meter.worker = proc.pid();
        let client = connect(reads.url()).await;
        while checkpoint(&client).await < total {
            assert!(
                t0.elapsed() < Duration::from_secs(180),
                "{model}: no catch-up"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let (c1, t1) = (meter.read(), Instant::now());
        counted += proc.metric(&series).await;
        let s1 = server(&b.admin, &b.ours).await;
        proc.stop().await;
        cpu = cpu.plus(c1.since(c0));
        secs += (t1 - t0).as_secs_f64();
        xacts_all += s1.all - s0.all;
        xacts_ours += s1.ours - s0.ours;
        if repeat == 0 {
            bytes = read_model_bytes(&client).await;
            idle = idle_start(&args, &b.env, &extra).await;
        }
        drop(client);
        reads.drop().await;
    }
    let work = cpu.worker.saturating_sub(idle * u64::from(REPEATS));
    let own_total = (own * i64::from(REPEATS)).max(1) as f64;
    let per_own = |t: u64| t as f64 * TICK_MS / own_total;
    println!(
        "| {model} | {counted:.0} | {own_total:.0} | {secs:.2} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:.0} | {:.0} | {} |",
        work as f64 * TICK_MS / counted.max(1.0),
        cpu.postgres as f64 * TICK_MS / counted.max(1.0),
        per_own(work),
        per_own(cpu.postgres),
        per_own(cpu.other()),
        idle as f64 * TICK_MS,
        bytes as f64 / own.max(1) as f64,
        share(xacts_ours, xacts_all)
    );
    let per_counted = |t: u64| t as f64 * TICK_MS / counted.max(1.0);
    b.rows.push(Row {
        kind: "projector".into(),
        what: format!("{model}: an event of the log passed through (catch-up)"),
        rate: counted / secs,
        process_ms: per_counted(work),
        postgres_ms: per_counted(cpu.postgres),
        nats_ms: None,
        note: format!(
            "{:.4} ms per event of its own ({:.0}% of the log); read model {:.0} B per event of its own",
            per_own(work),
            100.0 * own as f64 / total.max(1) as f64,
            bytes as f64 / own.max(1) as f64
        ),
    });
}

/// The log's bytes per event on disk, and its payloads' by context.
async fn print_sizes(b: &Bench, total: i64) {
    let sizes = b
        .log
        .query(
            "SELECT context, count(*), avg(octet_length(payload::text))::float8 \
             FROM log.events GROUP BY 1 ORDER BY 1",
            &[],
        )
        .await
        .expect("sizes");
    let log_bytes: i64 = b
        .log
        .query_one(
            "SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'log' AND c.relkind = 'r'",
            &[],
        )
        .await
        .map(|r| r.get(0))
        .unwrap_or(0);
    println!();
    println!(
        "the log: {total} events, schema `log` {:.0} B/event on disk (tables, indexes, idempotency keys and replies); payload bytes per event by context: {}",
        log_bytes as f64 / total.max(1) as f64,
        sizes
            .iter()
            .map(|r| {
                let (context, count, avg): (String, i64, f64) = (r.get(0), r.get(1), r.get(2));
                format!("{context} {avg:.0} ({count} events)")
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
}
