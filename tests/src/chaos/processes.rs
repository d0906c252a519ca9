//! The real `palimpsest` binary, run as child processes the harness can kill -9 and restart.

use super::load::{records, resources};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where the binary is: `PALIMPSEST_BIN`, else `palimpsest` beside the running executable's
/// target directory (built with `cargo build -p palimpsest` first if it is missing).
pub fn binary() -> PathBuf {
    if let Ok(bin) = std::env::var("PALIMPSEST_BIN") {
        return PathBuf::from(bin);
    }
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("current exe: {e}"));
    // target/<profile>/deps/<test> or target/<profile>/<bin>
    let mut profile = exe
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| panic!("no directory above {exe:?}"));
    if profile.ends_with("deps") {
        profile.pop();
    }
    let bin = profile.join("palimpsest");
    if !bin.is_file() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "palimpsest", "--bin", "palimpsest"])
            .status()
            .unwrap_or_else(|e| panic!("cargo build: {e}"));
        assert!(status.success(), "cargo build -p palimpsest failed");
    }
    bin
}

/// The environment every process of a case shares.
#[derive(Debug, Clone)]
pub struct Env {
    /// The case's database.
    pub database_url: String,
    /// NATS server(s), comma separated.
    pub nats_url: String,
    /// Replicas of the JetStream stream.
    pub replicas: usize,
    /// Secrets (admin token, pads API key), the records schema, resources' API keys, its
    /// content store and process logs.
    pub data_dir: PathBuf,
    /// More environment every process of the case is given (`PALIMPSEST_PROJECTOR_SOURCE`,
    /// `PALIMPSEST_READ_DATABASE_URLS`, ...).
    pub extra: Vec<(String, String)>,
}

impl Env {
    /// The records schema file every process is given.
    pub fn records_schema(&self) -> PathBuf {
        self.data_dir.join("records-schema.json")
    }

    /// Where resources keeps content above its inline limit.
    pub fn resources_content(&self) -> PathBuf {
        self.data_dir.join("resources-content")
    }

    /// Creates the data folder with what the contexts read at start: the records schema
    /// ([`records::SCHEMA`]) and `resources-keys.json` with one user key, which it returns.
    pub fn configure(&self) -> Result<String, String> {
        std::fs::create_dir_all(&self.data_dir)
            .map_err(|e| format!("{}: {e}", self.data_dir.display()))?;
        std::fs::write(self.records_schema(), records::SCHEMA)
            .map_err(|e| format!("records schema: {e}"))?;
        let key = uuid::Uuid::new_v4().simple().to_string();
        let keys = serde_json::json!({ &key: { "user_id": resources::USER_ID } });
        std::fs::write(self.data_dir.join("resources-keys.json"), keys.to_string())
            .map_err(|e| format!("resources-keys.json: {e}"))?;
        Ok(key)
    }

    /// Where the read models are: the `all=` entry of `PALIMPSEST_READ_DATABASE_URLS` in
    /// [`Env::extra`] when there is one (the topology keeps them on a Postgres of their own),
    /// else the log's database. The checks read and rebuild them there.
    pub fn read_database_url(&self) -> &str {
        self.extra
            .iter()
            .filter(|(name, _)| name == "PALIMPSEST_READ_DATABASE_URLS")
            .flat_map(|(_, value)| value.split_whitespace())
            .find_map(|entry| entry.strip_prefix("all="))
            .unwrap_or(&self.database_url)
    }

    /// Sets what every `palimpsest` process of the case reads from its environment.
    fn apply(&self, command: &mut Command) {
        command
            .env("DATABASE_URL", &self.database_url)
            .env("NATS_URL", &self.nats_url)
            .env("PALIMPSEST_NATS_REPLICAS", self.replicas.to_string())
            .env("PALIMPSEST_DATA_DIR", &self.data_dir)
            .env("PALIMPSEST_RECORDS_SCHEMA", self.records_schema())
            .env("PALIMPSEST_RESOURCES_CONTENT_DIR", self.resources_content())
            .env("RUST_LOG", "warn")
            .envs(self.extra.iter().map(|(name, value)| (name, value)));
    }
}

/// One running role (`run`, `serve`, `relay`, `project`), restartable with the same arguments.
pub struct Proc {
    /// The subcommand.
    pub role: &'static str,
    /// Its HTTP port (API for `run`/`serve`, health for `relay`/`project`).
    pub port: u16,
    env: Env,
    child: Option<Child>,
    starts: usize,
}

impl Proc {
    /// Starts `palimpsest <role> --http 127.0.0.1:<port>` and waits for `/healthz`.
    pub async fn start(role: &'static str, port: u16, env: &Env) -> Proc {
        let mut proc = Proc {
            role,
            port,
            env: env.clone(),
            child: None,
            starts: 0,
        };
        proc.spawn().await;
        proc
    }

    async fn spawn(&mut self) {
        self.starts += 1;
        let log = |kind: &str| {
            std::fs::File::create(
                self.env
                    .data_dir
                    .join(format!("{}-{}.{kind}", self.role, self.starts)),
            )
            .map(Stdio::from)
            .unwrap_or_else(|_| Stdio::null())
        };
        let mut command = Command::new(binary());
        command
            .arg(self.role)
            .args(["--http", &format!("127.0.0.1:{}", self.port)]);
        self.env.apply(&mut command);
        let child = command
            .stdout(log("out"))
            .stderr(log("err"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start palimpsest {}: {e}", self.role));
        self.child = Some(child);
        self.wait_healthy().await;
    }

    async fn wait_healthy(&mut self) {
        let url = format!("http://127.0.0.1:{}/healthz", self.port);
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(60) {
            if reqwest::get(&url)
                .await
                .is_ok_and(|r| r.status().is_success())
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let left = self.what_it_left();
        panic!(
            "palimpsest {} did not answer /healthz within 60 s; {left}",
            self.role
        );
    }

    /// Whether the process is still running, and the end of its standard error: what a
    /// start that never became healthy says about itself (its log is removed with the test's
    /// folder).
    fn what_it_left(&mut self) -> String {
        let status = match self.child.as_mut().map(Child::try_wait) {
            Some(Ok(Some(status))) => format!("it exited ({status})"),
            Some(Ok(None)) => "it is still running".to_owned(),
            Some(Err(e)) => format!("its state is unknown ({e})"),
            None => "it was not started".to_owned(),
        };
        let err = self
            .env
            .data_dir
            .join(format!("{}-{}.err", self.role, self.starts));
        let text = std::fs::read_to_string(&err).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(40)..].join("\n");
        format!("{status}; the end of its stderr:\n{tail}")
    }

    /// kill -9.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            if let Err(e) = child.kill() {
                eprintln!("kill {}: {e}", self.role);
            }
            if let Err(e) = child.wait() {
                eprintln!("wait {}: {e}", self.role);
            }
        }
    }

    /// Starts it again after a kill.
    pub async fn restart(&mut self) {
        self.kill();
        self.spawn().await;
    }

    /// Stops it with SIGTERM (kill -9 after 10 s).
    pub async fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Err(e) = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
        {
            eprintln!("kill -TERM {}: {e}", self.role);
        }
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.child = Some(child);
        self.kill();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs a one-shot subcommand (`audit verify`, `replay --projection X`) and returns whether it
/// succeeded and its output.
pub fn one_shot(env: &Env, args: &[&str]) -> (bool, String) {
    let mut command = Command::new(binary());
    command.args(args);
    env.apply(&mut command);
    match command.output() {
        Ok(out) => (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        ),
        Err(e) => (false, e.to_string()),
    }
}
