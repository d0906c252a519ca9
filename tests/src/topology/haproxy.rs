//! HAProxy in front of the topology's `serve` processes, as a real deployment has a load
//! balancer: round-robin, a health check on `/healthz`, and every answer naming the server that
//! gave it (header [`SERVED_BY`]), so the read-your-writes reader can read a write back through
//! the *other* serve.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The header HAProxy adds to every answer: the name of the server that gave it.
pub const SERVED_BY: &str = "x-served-by";

/// The haproxy binary: `HAPROXY_BIN`, else `haproxy` on the PATH (Debian's package puts it in
/// `/usr/sbin`, which a user's PATH may lack).
pub fn binary() -> PathBuf {
    if let Ok(bin) = std::env::var("HAPROXY_BIN") {
        return PathBuf::from(bin);
    }
    let on_path = std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .map(|dir| Path::new(dir).join("haproxy"))
        .find(|p| p.is_file());
    on_path.unwrap_or_else(|| PathBuf::from("/usr/sbin/haproxy"))
}

/// One haproxy process owned by the harness; killed on drop.
pub struct HaProxy {
    /// The port it listens on (loopback).
    pub port: u16,
    child: Option<Child>,
}

/// The configuration: `backends` are (server name, port) pairs of the `serve` processes.
pub fn config(port: u16, backends: &[(String, u16)]) -> String {
    let mut conf = format!(
        "global\n\
         \x20   maxconn 2000\n\
         defaults\n\
         \x20   mode http\n\
         \x20   timeout connect 1s\n\
         \x20   timeout client 60s\n\
         \x20   timeout server 60s\n\
         \x20   retries 3\n\
         \x20   option redispatch 1\n\
         frontend api\n\
         \x20   bind 127.0.0.1:{port}\n\
         \x20   default_backend serves\n\
         backend serves\n\
         \x20   balance roundrobin\n\
         \x20   option httpchk GET /healthz\n\
         \x20   default-server inter 250ms fastinter 100ms downinter 250ms fall 2 rise 1\n\
         \x20   http-response set-header {SERVED_BY} %[srv_name]\n"
    );
    for (name, backend) in backends {
        conf.push_str(&format!("    server {name} 127.0.0.1:{backend} check\n"));
    }
    conf
}

impl HaProxy {
    /// Writes its configuration into `dir` and starts it in the foreground (its output in
    /// `dir/haproxy.log`), then waits (bounded) until `/healthz` answers through it.
    pub async fn start(dir: &Path, port: u16, backends: &[(String, u16)]) -> HaProxy {
        let conf = dir.join("haproxy.cfg");
        std::fs::write(&conf, config(port, backends))
            .unwrap_or_else(|e| panic!("{}: {e}", conf.display()));
        let log = std::fs::File::create(dir.join("haproxy.log"))
            .map(Stdio::from)
            .unwrap_or_else(|_| Stdio::null());
        let child = Command::new(binary())
            .arg("-db")
            .arg("-f")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start haproxy ({}): {e}; install it (apt-get install -y haproxy)",
                    binary().display()
                )
            });
        let proxy = HaProxy {
            port,
            child: Some(child),
        };
        let url = format!("{}/healthz", proxy.url());
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(30) {
            if reqwest::get(&url)
                .await
                .is_ok_and(|r| r.status().is_success())
            {
                return proxy;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "haproxy did not answer {url}:\n{}",
            std::fs::read_to_string(dir.join("haproxy.log")).unwrap_or_default()
        );
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for HaProxy {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            if let Err(e) = child.kill() {
                eprintln!("kill haproxy: {e}");
            }
            if let Err(e) = child.wait() {
                eprintln!("wait for haproxy: {e}");
            }
        }
    }
}
