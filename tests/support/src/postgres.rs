//! A private Postgres cluster (initdb in a temporary directory, a free port) for tests that crash
//! and restart the database, which the machine's shared server must never be.

use crate::free_port;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A postgres server owned by a test; stopped and its directory removed on drop. The data
/// directory survives [`PgCluster::stop_immediate`], so a restart recovers from the WAL like a
/// real server after a crash.
pub struct PgCluster {
    port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

/// Where the server binaries are: `PG_BIN`, else the newest `/usr/lib/postgresql/*/bin`.
fn bindir() -> PathBuf {
    if let Ok(dir) = std::env::var("PG_BIN") {
        return PathBuf::from(dir);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path().join("bin"))
                .filter(|p| p.join("postgres").exists())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
        .pop()
        .unwrap_or_else(|| panic!("no Postgres binaries: set PG_BIN"))
}

/// A command run as the `postgres` user when the test runs as root (Postgres refuses root).
fn as_server_user(program: &Path) -> Command {
    let root = std::env::var("USER").is_ok_and(|u| u == "root")
        || Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if root {
        let mut command = Command::new("setpriv");
        command
            .args(["--reuid=postgres", "--regid=postgres", "--init-groups"])
            .arg(program);
        command
    } else {
        Command::new(program)
    }
}

/// A new directory for one cluster, owned by the server user (a no-op chown when the test is not
/// root), removed with the cluster.
fn cluster_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("palimpsest-pg-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("mkdir {dir:?}: {e}"));
    if let Err(e) = Command::new("chown")
        .args(["-R", "postgres:postgres"])
        .arg(&dir)
        .status()
    {
        eprintln!("chown {dir:?}: {e}");
    }
    dir
}

impl PgCluster {
    /// The cluster whose data directory is `dir/data`, started on a free port.
    async fn started_in(dir: PathBuf) -> PgCluster {
        let mut cluster = PgCluster {
            port: free_port(),
            dir,
            child: None,
        };
        cluster.restart().await;
        cluster
    }

    /// Creates a cluster (trust authentication, user `postgres`) and starts it.
    pub async fn start() -> PgCluster {
        let dir = cluster_dir();
        let status = as_server_user(&bindir().join("initdb"))
            .args(["-A", "trust", "-U", "postgres", "-E", "UTF8", "-D"])
            .arg(dir.join("data"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("initdb: {e}"));
        assert!(status.success(), "initdb failed");
        PgCluster::started_in(dir).await
    }

    /// A streaming replica of this cluster: `pg_basebackup -R` into a directory of its own,
    /// started as a hot standby following this server on a free port (stopped and removed on
    /// drop like any cluster). Tests read through it and pause its replay
    /// (`pg_wal_replay_pause()`) to make it lag.
    pub async fn streaming_replica(&self) -> PgCluster {
        let dir = cluster_dir();
        let mut backup = as_server_user(&bindir().join("pg_basebackup"));
        backup
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
            ])
            .args(["-R", "-X", "stream", "-c", "fast", "-D"])
            .arg(dir.join("data"))
            .stdout(Stdio::null());
        let status = tokio::process::Command::from(backup)
            .status()
            .await
            .unwrap_or_else(|e| panic!("pg_basebackup: {e}"));
        assert!(status.success(), "pg_basebackup failed");
        PgCluster::started_in(dir).await
    }

    /// The connection URL of database `database`.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// Stops the server the way `pg_ctl stop -m immediate` does (SIGQUIT: no checkpoint, crash
    /// recovery on the next start).
    pub fn stop_immediate(&mut self) {
        if let Some(mut child) = self.child.take() {
            if let Err(e) = Command::new("kill")
                .args(["-QUIT", &child.id().to_string()])
                .status()
            {
                eprintln!("kill -QUIT postgres: {e}");
            }
            if let Err(e) = child.wait() {
                eprintln!("wait for postgres: {e}");
            }
        }
    }

    /// Starts the server again on the same port and data, and waits until it accepts
    /// connections.
    pub async fn restart(&mut self) {
        self.stop_immediate();
        let child = as_server_user(&bindir().join("postgres"))
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-p", &self.port.to_string(), "-k"])
            .arg(&self.dir)
            .args([
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=200",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start postgres: {e}"));
        self.child = Some(child);
        for _ in 0..400 {
            if tokio_postgres::connect(&self.url("postgres"), tokio_postgres::NoTls)
                .await
                .is_ok()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("postgres did not start on port {}", self.port);
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        self.stop_immediate();
        if let Err(e) = std::fs::remove_dir_all(&self.dir) {
            eprintln!("remove {}: {e}", self.dir.display());
        }
    }
}
