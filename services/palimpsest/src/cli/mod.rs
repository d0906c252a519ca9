//! The command line: `serve`, `relay`, `project`, `run`, `replay`, `audit`, `tail`.

pub mod audit;
pub mod replay;
pub mod tail;

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
    Relay,
    /// Run the projectors that keep the read models.
    Project {
        /// Only these contexts' read models (and stream_heads).
        #[arg(long, value_delimiter = ',')]
        contexts: Vec<String>,
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
    /// Print live events from NATS.
    Tail {
        /// Subject filter (default: every event, `palimpsest.>`).
        subject: Option<String>,
    },
}

/// Runs a parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let settings = cli.settings;
    match cli.command {
        Command::Serve(http) => serve(&settings, http, false).await,
        Command::Run(http) => serve(&settings, http, true).await,
        Command::Relay => {
            let running = processes::start(
                &settings,
                vec![],
                Roles {
                    http: None,
                    relay: true,
                    project: false,
                },
            )
            .await?;
            until_signal(running).await
        }
        Command::Project { contexts: only } => {
            let selected = contexts::select(&only).map_err(anyhow::Error::msg)?;
            let running = processes::start(
                &settings,
                selected,
                Roles {
                    http: None,
                    relay: false,
                    project: true,
                },
            )
            .await?;
            until_signal(running).await
        }
        Command::Replay { projection } => replay::run(&settings, &projection).await,
        Command::Audit(cmd) => audit::run(&settings, cmd).await,
        Command::Tail { subject } => tail::run(&settings, subject.as_deref()).await,
    }
}

async fn serve(settings: &Settings, http: HttpSettings, everything: bool) -> anyhow::Result<()> {
    let selected = contexts::select(&http.contexts).map_err(anyhow::Error::msg)?;
    let listener = tokio::net::TcpListener::bind(http.addr).await?;
    let running = processes::start(
        settings,
        selected,
        Roles {
            http: Some(listener),
            relay: everything,
            project: everything,
        },
    )
    .await?;
    if let Some(addr) = running.addr {
        println!("palimpsest listening on http://{addr}");
    }
    until_signal(running).await
}

async fn until_signal(running: processes::Running) -> anyhow::Result<()> {
    let stop = running.shutdown.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("stopping");
        stop.cancel();
    });
    running.join().await;
    Ok(())
}
