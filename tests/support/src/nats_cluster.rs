//! A private JetStream cluster of nats-server processes on loopback, for tests that lose a node.
//!
//! Each node gets its own client port, cluster (route) port and store directory; every node is
//! told the routes of all of them, so the cluster forms whatever order they start in and a
//! restarted node finds its peers again. The cluster is ready when a stream with one replica per
//! node can be created, which needs a JetStream meta leader and every peer known to it.

use async_nats::jetstream::{self, stream};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tokio::time::{Instant, sleep};

/// How long the cluster (or a restarted node) may take to be ready before the test fails.
const READY_WITHIN: Duration = Duration::from_secs(60);

/// The stream created and deleted to prove the cluster can place a stream on every node.
const PROBE_STREAM: &str = "PALIMPSEST_TESTKIT_PROBE";

/// A JetStream cluster owned by one test: every node is killed and every directory removed on
/// drop. A node's store survives [`NatsCluster::stop`], so [`NatsCluster::restart`] brings it
/// back with its data, like a machine that crashed and came back.
pub struct NatsCluster {
    name: String,
    root: PathBuf,
    routes: String,
    nodes: Vec<Node>,
}

/// One nats-server of the cluster.
struct Node {
    name: String,
    client_port: u16,
    cluster_port: u16,
    store: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

/// The nats-server binary: `NATS_SERVER_BIN`, else `nats-server` on the PATH.
fn binary() -> String {
    std::env::var("NATS_SERVER_BIN").unwrap_or_else(|_| "nats-server".to_owned())
}

/// `count` distinct free loopback ports (all bound at once, then released).
fn free_ports(count: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> = (0..count)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("no free port: {e}")))
        .collect();
    listeners
        .iter()
        .map(|l| {
            l.local_addr()
                .map(|a| a.port())
                .unwrap_or_else(|e| panic!("no free port: {e}"))
        })
        .collect()
}

/// The last lines of a server log, shown when a test fails.
fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

impl Node {
    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.client_port)
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn spawn(&mut self, cluster_name: &str, routes: &str) {
        self.kill();
        let child = Command::new(binary())
            .args(["-a", "127.0.0.1", "-p", &self.client_port.to_string()])
            .args(["--server_name", &self.name, "-js", "-sd"])
            .arg(&self.store)
            .args(["--cluster_name", cluster_name])
            .args([
                "--cluster",
                &format!("nats://127.0.0.1:{}", self.cluster_port),
            ])
            .args(["--routes", routes])
            .arg("-l")
            .arg(&self.log)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start nats-server ({}): {e}", binary()));
        self.child = Some(child);
    }

    async fn wait_answers(&self, deadline: Instant) {
        while Instant::now() < deadline {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.client_port))
                .await
                .is_ok()
            {
                return;
            }
            sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "nats-server {} did not answer on port {}:\n{}",
            self.name,
            self.client_port,
            log_tail(&self.log, 20)
        );
    }
}

impl NatsCluster {
    /// Starts `size` nodes with JetStream on free loopback ports and fresh store directories,
    /// and waits (bounded) until a stream replicated on all of them can be created.
    pub async fn start(size: usize) -> NatsCluster {
        assert!(size > 0, "a cluster needs at least one node");
        let id = uuid::Uuid::new_v4().simple().to_string();
        let root = std::env::temp_dir().join(format!("palimpsest-nats-cluster-{id}"));
        let ports = free_ports(size * 2);
        let nodes: Vec<Node> = (0..size)
            .map(|i| Node {
                name: format!("node-{i}"),
                client_port: ports[2 * i],
                cluster_port: ports[2 * i + 1],
                store: root.join(format!("node-{i}")),
                log: root.join(format!("node-{i}.log")),
                child: None,
            })
            .collect();
        let routes = nodes
            .iter()
            .map(|n| format!("nats://127.0.0.1:{}", n.cluster_port))
            .collect::<Vec<_>>()
            .join(",");
        std::fs::create_dir_all(&root)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", root.display()));
        let mut cluster = NatsCluster {
            name: format!("palimpsest-{}", &id[..8]),
            root,
            routes,
            nodes,
        };
        for node in &mut cluster.nodes {
            node.spawn(&cluster.name, &cluster.routes);
        }
        let deadline = Instant::now() + READY_WITHIN;
        for node in &cluster.nodes {
            node.wait_answers(deadline).await;
        }
        cluster.wait_ready(deadline).await;
        cluster
    }

    /// How many nodes the cluster has (running or not).
    pub fn size(&self) -> usize {
        self.nodes.len()
    }

    /// Every node's client URL, comma separated (split it for `async_nats` with
    /// `palimpsest_log::relay::server_list`).
    pub fn urls(&self) -> String {
        self.nodes
            .iter()
            .map(Node::url)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The client URLs of the nodes that are running, comma separated: where to read from after
    /// a node was lost.
    pub fn running_urls(&self) -> String {
        self.nodes
            .iter()
            .filter(|n| n.child.is_some())
            .map(Node::url)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Node `i`'s client URL.
    pub fn url(&self, i: usize) -> String {
        self.nodes[i].url()
    }

    /// Node `i`'s server name, as JetStream reports it (stream leader, peers).
    pub fn name(&self, i: usize) -> &str {
        &self.nodes[i].name
    }

    /// The index of the node with server name `name`, if it is one of ours.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// Whether node `i` is running.
    pub fn is_running(&self, i: usize) -> bool {
        self.nodes[i].child.is_some()
    }

    /// Kills node `i` (as a crash would); its store directory is kept.
    pub fn stop(&mut self, i: usize) {
        self.nodes[i].kill();
    }

    /// Starts node `i` again on the same ports and store, and waits (bounded) until it answers
    /// and serves JetStream requests again, which needs its routes and a meta leader.
    pub async fn restart(&mut self, i: usize) {
        self.nodes[i].spawn(&self.name, &self.routes);
        let deadline = Instant::now() + READY_WITHIN;
        self.nodes[i].wait_answers(deadline).await;
        while Instant::now() < deadline {
            if jetstream_answers(&self.nodes[i].url()).await {
                return;
            }
            sleep(Duration::from_millis(250)).await;
        }
        panic!("{} did not rejoin:\n{}", self.nodes[i].name, self.logs());
    }

    /// Waits until a stream with one replica per node can be created (and deletes it).
    async fn wait_ready(&self, deadline: Instant) {
        let mut last_error = String::from("no attempt");
        while Instant::now() < deadline {
            match self.probe().await {
                Ok(()) => return,
                Err(e) => last_error = e,
            }
            sleep(Duration::from_millis(250)).await;
        }
        panic!(
            "the NATS cluster was not ready within {READY_WITHIN:?} ({last_error}):\n{}",
            self.logs()
        );
    }

    async fn probe(&self) -> Result<(), String> {
        let client = connect(&self.urls()).await?;
        let mut js = jetstream::new(client);
        // Requests sent before there is a meta leader get no answer: retry soon instead.
        js.set_timeout(Duration::from_secs(1));
        js.create_stream(stream::Config {
            name: PROBE_STREAM.to_owned(),
            subjects: vec![format!("{PROBE_STREAM}.>")],
            storage: stream::StorageType::Memory,
            num_replicas: self.nodes.len(),
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
        js.delete_stream(PROBE_STREAM)
            .await
            .map_err(|e| e.to_string())?;
        Ok(())
    }

    /// The tail of every node's log.
    fn logs(&self) -> String {
        self.nodes
            .iter()
            .map(|n| format!("--- {} ---\n{}", n.name, log_tail(&n.log, 20)))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Whether the server at `url` answers JetStream's account info request without an error.
///
/// The request is sent raw and its JSON checked for an `error` member, rather than through
/// `jetstream::Context::query_account`, whose typed answer needs fields (`reserved_memory`) that
/// servers before 2.10 do not send.
async fn jetstream_answers(url: &str) -> bool {
    let Ok(client) = connect(url).await else {
        return false;
    };
    let Ok(Ok(reply)) = tokio::time::timeout(
        Duration::from_secs(2),
        client.request("$JS.API.INFO", Vec::new().into()),
    )
    .await
    else {
        return false;
    };
    serde_json::from_slice::<serde_json::Value>(&reply.payload)
        .is_ok_and(|v| v.get("error").is_none() && v.get("type").is_some())
}

/// A client of the comma-separated `urls`, failing fast when none answers.
async fn connect(urls: &str) -> Result<async_nats::Client, String> {
    let servers: Vec<&str> = urls
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .collect();
    async_nats::ConnectOptions::new()
        .connection_timeout(Duration::from_secs(2))
        .connect(servers)
        .await
        .map_err(|e| e.to_string())
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("NATS cluster {} logs:\n{}", self.name, self.logs());
        }
        for node in &mut self.nodes {
            node.kill();
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
