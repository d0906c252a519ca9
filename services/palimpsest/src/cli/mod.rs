//! The command line: `serve`, `relay`, `project`, `run`, `replay`, `audit`, `tail`, `atlas`.

pub mod atlas;
pub mod audit;
pub mod bundle;
pub mod content_audit;
pub mod format;
pub mod kept_head;
pub mod log_client;
pub mod replay;
pub mod tail;
pub mod witness;

use crate::config::{HttpSettings, Settings};
use crate::contexts;
use crate::processes::{self, Roles};
use clap::{Parser, Subcommand};

/// Palimpsest: an event-sourced backend for revisioned data.
#[derive(Debug, Parser)]
#[command(name = "palimpsest", version, about)]
pub struct Cli {
    /// Shared settings.
    #[command(flatten)]
    pub settings: Settings,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTP APIs (health, metrics, /v1 admin, each context under its prefix).
    Serve(HttpSettings),
    /// Publish the log to NATS JetStream.
    Relay {
        /// Serve /healthz, /readyz and /metrics here.
        #[arg(long = "http")]
        health: Option<std::net::SocketAddr>,
        /// First delete the JetStream stream and create it empty for this log: the deliberate
        /// recovery when the relay is blocked by a stream of another log or one ahead of the log
        /// (its consumers must start over). The stream name is `PALIMPSEST_NATS_STREAM`.
        #[arg(long)]
        reset_stream: bool,
    },
    /// Run the projectors that keep the read models.
    Project {
        /// Only these contexts' read models (and stream_heads).
        #[arg(long, value_delimiter = ',')]
        contexts: Vec<String>,
        /// Serve /healthz, /readyz and /metrics here.
        #[arg(long = "http")]
        health: Option<std::net::SocketAddr>,
    },
    /// Everything in one process: HTTP, relay and projectors.
    Run(HttpSettings),
    /// Rebuild a read model from position 0 into a fresh schema and swap it in.
    Replay {
        /// The read model (`stream_heads`, `pads`, `atlas`, ...).
        #[arg(long)]
        projection: String,
    },
    /// Verify hash chains, or show a stream's history.
    #[command(subcommand)]
    Audit(audit::AuditCommand),
    /// Print events from NATS: live, from a position or a time, or through a durable consumer.
    Tail(tail::TailArgs),
    /// Atlas context tools: `import` a History Map SQLite database.
    #[command(subcommand)]
    Atlas(atlas::AtlasCommand),
}

/// Runs a parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let settings = cli.settings;
    match cli.command {
        Command::Serve(http) => serve(&settings, http, false).await,
        Command::Run(http) => serve(&settings, http, true).await,
        Command::Relay {
            health,
            reset_stream,
        } => {
            if reset_stream {
                let store = settings.store().await?;
                let config = processes::relay_config(&settings);
                palimpsest_log::relay::reset_stream(&store, &config).await?;
                println!(
                    "JetStream stream {} reset for log {}",
                    config.stream_name,
                    store.log_id()
                );
            }
            let roles = Roles {
                http: bind(health).await?,
                api: false,
                relay: true,
                project: false,
                tree: true,
            };
            until_signal(processes::start(&settings, vec![], roles).await?).await
        }
        Command::Project {
            contexts: only,
            health,
        } => {
            let selected = contexts::select(&only, contexts::ContextSettings::default())
                .map_err(anyhow::Error::msg)?;
            let roles = Roles {
                http: bind(health).await?,
                api: false,
                relay: false,
                project: true,
                tree: false,
            };
            until_signal(processes::start(&settings, selected, roles).await?).await
        }
        Command::Replay { projection } => replay::run(&settings, &projection).await,
        Command::Audit(cmd) => audit::run(&settings, cmd).await,
        Command::Tail(args) => tail::run(&settings, &args.options(), &mut std::io::stdout()).await,
        Command::Atlas(cmd) => atlas::run(&settings, cmd).await,
    }
}

/// The contexts' settings `serve` and `run` take from their flags and environment (records'
/// schema file, DELTA, zombie retention, previous keys; docs' admin name and attachment store;
/// resources' content store, its folder inside `settings`' data folder unless one is named); a
/// test checks through it that a flag reaches the context.
pub fn context_settings(
    settings: &Settings,
    http: &HttpSettings,
) -> anyhow::Result<contexts::ContextSettings> {
    let mut configured = contexts::ContextSettings::default();
    configured.records.delta_ms = http.records_delta_ms;
    configured.records.zombie_retention_ms = http.records_zombie_retention_ms;
    configured.records.old_keys = http
        .records_old_keys
        .iter()
        .flat_map(|keys| keys.split(','))
        .map(str::trim)
        .filter(|key| !key.is_empty())
        .map(str::to_owned)
        .collect();
    configured.docs.admin_name = http.docs_admin_name.clone();
    configured.docs.password_key = http.docs_password_key.clone();
    configured.records.site_key_hex = http.records_key.clone();
    configured.pads.apikey = http.pads_apikey.clone();
    configured.docs.attachments_dir = http.docs_attachments_dir.clone();
    configured.docs.inline_max = http.docs_inline_max;
    configured.resources_content = palimpsest_resources::content::ContentConfig::new(
        http.resources_content_dir
            .clone()
            .unwrap_or_else(|| palimpsest_resources::content::default_dir(&settings.data_dir)),
        http.resources_inline_max,
    );
    if let Some(path) = &http.records_schema {
        configured.records.schema =
            palimpsest_records::load_schema(path).map_err(anyhow::Error::msg)?;
    }
    Ok(configured)
}

async fn serve(settings: &Settings, http: HttpSettings, everything: bool) -> anyhow::Result<()> {
    let configured = context_settings(settings, &http)?;
    let selected = contexts::select(&http.contexts, configured).map_err(anyhow::Error::msg)?;
    let listener = tokio::net::TcpListener::bind(http.addr).await?;
    let running = processes::start(
        settings,
        selected,
        Roles {
            http: Some(listener),
            api: true,
            relay: everything,
            project: everything,
            tree: everything,
        },
    )
    .await?;
    if let Some(addr) = running.addr {
        println!("palimpsest listening on http://{addr}");
    }
    until_signal(running).await
}

async fn bind(
    addr: Option<std::net::SocketAddr>,
) -> anyhow::Result<Option<tokio::net::TcpListener>> {
    Ok(match addr {
        Some(a) => Some(tokio::net::TcpListener::bind(a).await?),
        None => None,
    })
}

async fn until_signal(running: processes::Running) -> anyhow::Result<()> {
    let stop = running.shutdown.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("stopping");
        stop.cancel();
    });
    running.join().await;
    Ok(())
}

/// Resolves on SIGINT (^C) or SIGTERM (what systemd and container runtimes send).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
