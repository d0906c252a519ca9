//! A private Postgres cluster for the bench: `initdb` in a temporary directory, started on a
//! free port with `pg_stat_statements` loaded, stopped and removed on drop. Its data directory
//! is on the same disk as the machine's own server, so fsyncs cost what they cost there.

use std::path::PathBuf;
use std::process::Command;

/// A running private cluster.
pub struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

impl Cluster {
    /// Starts one, or says why not (no server binaries, no free port, initdb failed).
    pub fn start() -> Result<Cluster, String> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .map_err(|e| format!("no /usr/lib/postgresql: {e}"))?
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("bin"))
            .filter(|p| p.join("initdb").exists())
            .max()
            .ok_or("no initdb under /usr/lib/postgresql")?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        // initdb refuses to run as root: then the cluster belongs to the `postgres` user.
        let as_postgres = Command::new("id")
            .arg("-u")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
            .unwrap_or(false);
        let base = std::env::temp_dir().join(format!("palimpsest-bench-pg-{}", std::process::id()));
        std::fs::create_dir_all(&base).map_err(|e| e.to_string())?;
        let cluster = Cluster {
            dir: base,
            bin,
            port,
            as_postgres,
        };
        if as_postgres {
            cluster.run("chown", &["postgres:postgres", cluster.path()])?;
        }
        let data = cluster.dir.join("data");
        let data = data.to_str().ok_or("path")?.to_owned();
        cluster.pg(
            "initdb",
            &["-D", &data, "-U", "postgres", "-A", "trust", "--no-sync"],
        )?;
        let options = format!(
            "-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} \
             -c shared_preload_libraries=pg_stat_statements -c max_connections=200 \
             -c shared_buffers=128MB -c max_wal_size=4GB",
            cluster.path()
        );
        let log = cluster.dir.join("log.txt");
        cluster.pg(
            "pg_ctl",
            &[
                "-D",
                &data,
                "-l",
                log.to_str().ok_or("path")?,
                "-o",
                &options,
                "-w",
                "start",
            ],
        )?;
        Ok(cluster)
    }

    fn path(&self) -> &str {
        self.dir.to_str().unwrap_or("/nonexistent")
    }

    /// The URL of its `postgres` database.
    pub fn admin_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Its postmaster's process id (to sum the server's CPU time).
    pub fn postmaster(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.dir.join("data/postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    fn pg(&self, tool: &str, args: &[&str]) -> Result<(), String> {
        let exe = self.bin.join(tool);
        let exe = exe.to_str().ok_or("path")?;
        if self.as_postgres {
            let mut all = vec!["-u", "postgres", "--", exe];
            all.extend_from_slice(args);
            self.run("runuser", &all)
        } else {
            self.run(exe, args)
        }
    }

    fn run(&self, exe: &str, args: &[&str]) -> Result<(), String> {
        let out = Command::new(exe)
            .args(args)
            .current_dir(&self.dir)
            .output()
            .map_err(|e| format!("{exe}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{exe} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(data) = self.dir.join("data").to_str() {
            let _ = self.pg("pg_ctl", &["-D", data, "-m", "immediate", "-w", "stop"]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// CPU seconds (user + system) of a process and, with `children`, of its direct children.
pub fn cpu_seconds(pid: u32, children: bool) -> f64 {
    let tick = 100.0; // USER_HZ on Linux
    let of = |p: u32| -> f64 {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            return 0.0;
        };
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            return 0.0;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        // After the command: state(0) ppid(1) ... utime(11) stime(12).
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        (num(11) + num(12)) / tick
    };
    let reaped = |p: u32| -> f64 {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            return 0.0;
        };
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            return 0.0;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        (num(13) + num(14)) / tick
    };
    let mut total = of(pid);
    if children {
        // Children that have exited and been waited for (closed connections).
        total += reaped(pid);
    }
    if children && let Ok(entries) = std::fs::read_dir("/proc") {
        for e in entries.flatten() {
            let Some(child) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let ppid = std::fs::read_to_string(format!("/proc/{child}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')
                        .and_then(|(_, r)| r.split_whitespace().nth(1).map(str::to_owned))
                })
                .and_then(|p| p.parse::<u32>().ok());
            if ppid == Some(pid) {
                total += of(child);
            }
        }
    }
    total
}

/// The direct children of a process (a cluster's backends and helpers).
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|child| {
            std::fs::read_to_string(format!("/proc/{child}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')
                        .and_then(|(_, r)| r.split_whitespace().nth(1).map(str::to_owned))
                })
                .and_then(|p| p.parse::<u32>().ok())
                == Some(pid)
        })
        .collect()
}
