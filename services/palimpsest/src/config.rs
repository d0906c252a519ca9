//! Configuration shared by every subcommand, from flags and the environment.

use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Where the log, NATS and secrets are, and which contexts to serve.
#[derive(Debug, Clone, Args)]
pub struct Settings {
    /// Postgres holding the log and the read models.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/palimpsest",
        global = true
    )]
    pub database_url: String,
    /// NATS server(s) with JetStream.
    #[arg(
        long,
        env = "NATS_URL",
        default_value = "nats://127.0.0.1:4222",
        global = true
    )]
    pub nats_url: String,
    /// Replicas of the JetStream stream the relay creates (3 on a three-node cluster).
    #[arg(
        long,
        env = "PALIMPSEST_NATS_REPLICAS",
        default_value_t = 1,
        global = true
    )]
    pub nats_replicas: usize,
    /// Where generated secrets (admin token, pads API key) are kept.
    #[arg(
        long,
        env = "PALIMPSEST_DATA_DIR",
        default_value = ".data",
        global = true
    )]
    pub data_dir: PathBuf,
}

/// HTTP settings of `serve` and `run`.
#[derive(Debug, Clone, Args)]
pub struct HttpSettings {
    /// Address to listen on.
    #[arg(
        long = "http",
        env = "PALIMPSEST_HTTP",
        default_value = "127.0.0.1:8080"
    )]
    pub addr: SocketAddr,
    /// Serve only these contexts (comma separated); all of them when absent.
    #[arg(long, value_delimiter = ',')]
    pub contexts: Vec<String>,
    /// The records context's schema file: a JSON list of class declarations.
    #[arg(long, env = "PALIMPSEST_RECORDS_SCHEMA")]
    pub records_schema: Option<PathBuf>,
}
