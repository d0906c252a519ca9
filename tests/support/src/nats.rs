//! A private nats-server with JetStream on a free port, for tests that stop and restart it.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A free TCP port on loopback (bound, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}

/// A nats-server process owned by a test; killed on drop. Its store directory survives
/// [`NatsServer::stop`] so a restart keeps the JetStream data, like a real server restart.
pub struct NatsServer {
    port: u16,
    store: PathBuf,
    max_payload: Option<usize>,
    child: Option<Child>,
}

/// The nats-server binary: `NATS_SERVER_BIN`, else `nats-server` on the PATH.
fn binary() -> String {
    std::env::var("NATS_SERVER_BIN").unwrap_or_else(|_| "nats-server".to_owned())
}

impl NatsServer {
    /// Starts a server on a free port with a fresh store directory and waits until it answers.
    pub async fn start() -> NatsServer {
        Self::start_with(None).await
    }

    /// Like [`NatsServer::start`], with the server's `max_payload` (bytes) set lower than its
    /// 1 MiB default.
    pub async fn start_with_max_payload(bytes: usize) -> NatsServer {
        Self::start_with(Some(bytes)).await
    }

    async fn start_with(max_payload: Option<usize>) -> NatsServer {
        let port = free_port();
        let store = std::env::temp_dir().join(format!("palimpsest-nats-{}", uuid::Uuid::new_v4()));
        let mut server = NatsServer {
            port,
            store,
            max_payload,
            child: None,
        };
        server.restart().await;
        server
    }

    /// The client URL.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Kills the server (as a crash would).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port and store, and waits until it answers.
    pub async fn restart(&mut self) {
        self.stop();
        let mut command = Command::new(binary());
        if let Some(bytes) = self.max_payload {
            std::fs::create_dir_all(&self.store).unwrap_or_else(|e| panic!("nats store: {e}"));
            let conf = self.store.join("server.conf");
            std::fs::write(&conf, format!("max_payload: {bytes}\n"))
                .unwrap_or_else(|e| panic!("nats config: {e}"));
            command.arg("-c").arg(conf);
        }
        let child = command
            .args([
                "-a",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-js",
                "-sd",
            ])
            .arg(&self.store)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start nats-server ({}): {e}", binary()));
        self.child = Some(child);
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port))
                .await
                .is_ok()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("nats-server did not start on port {}", self.port);
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.store);
    }
}
