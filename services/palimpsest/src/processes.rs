//! Starting the long-running roles of the binary: HTTP, relay, projectors, the tree maker.

use crate::config::{ProjectorSource, Settings};
use crate::contexts::{self, Context};
use crate::server;
use palimpsest_log::relay::{self, RelayConfig};
use palimpsest_log::tree::maker::{TreeHealth, TreeMaker};
use palimpsest_projections::{
    NatsFeed, ensure_partitions, spawn_nats_runner, spawn_partitioned_runner, spawn_runner_in,
};
use palimpsest_web::AppState;
use palimpsest_web::background::Background;
use std::net::SocketAddr;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Which roles a process plays.
pub struct Roles {
    /// Serve HTTP on this listener.
    pub http: Option<TcpListener>,
    /// Serve the contexts' and admin APIs there too (else only health and metrics).
    pub api: bool,
    /// Publish the log to NATS.
    pub relay: bool,
    /// Run the projectors of the selected contexts (and `stream_heads`).
    pub project: bool,
    /// Grow the log's signed Merkle tree (one tree maker per log runs; others wait).
    pub tree: bool,
}

/// A started process: its HTTP address (if it serves) and its tasks.
pub struct Running {
    /// The HTTP address, when serving.
    pub addr: Option<SocketAddr>,
    /// The state the handlers share.
    pub state: AppState,
    /// Cancelling it stops every task.
    pub shutdown: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl Running {
    /// Waits until every task has ended (after `shutdown` is cancelled, or a server error),
    /// the contexts' background tasks included.
    pub async fn join(self) {
        for t in self.tasks {
            if let Err(e) = t.await {
                tracing::error!(error = %e, "a task failed");
            }
        }
        self.state.background.stop();
        self.state.background.join().await;
    }

    /// Adds a task that stops with the others (it must end when `shutdown` is cancelled).
    pub fn spawn(&mut self, task: JoinHandle<()>) {
        self.tasks.push(task);
    }

    /// Stops every task and waits for them.
    pub async fn stop(self) {
        self.shutdown.cancel();
        self.join().await;
    }
}

/// The relay's configuration: NATS from the settings, the stream name from `--nats-stream`
/// (`PALIMPSEST_NATS_STREAM`; default `PALIMPSEST`).
pub fn relay_config(settings: &Settings) -> RelayConfig {
    let mut config = RelayConfig::new(settings.nats_url.clone());
    config.replicas = settings.nats_replicas;
    config.subject_prefix = settings.nats_subject_prefix.clone();
    config.health = relay::RelayHealth::new(settings.relay_stuck_after);
    if let Some(name) = &settings.nats_stream
        && !name.trim().is_empty()
    {
        config.stream_name = name.trim().to_owned();
    }
    config
}

/// NATS for the tree maker to publish heads on, when one is configured and answers; without
/// it heads are still kept in the log database.
async fn heads_nats(settings: &Settings) -> Option<async_nats::Client> {
    let servers = relay::server_list(&settings.nats_url);
    if servers.is_empty() {
        return None;
    }
    match async_nats::ConnectOptions::new()
        .connection_timeout(std::time::Duration::from_secs(2))
        .retry_on_initial_connect()
        .connect(servers)
        .await
    {
        Ok(client) => Some(client),
        Err(e) => {
            tracing::warn!(error = %e, "tree heads will not be published on NATS");
            None
        }
    }
}

/// Where projectors take their events: the log, or the relay's stream as `settings` name it.
pub fn feed(settings: &Settings) -> Option<NatsFeed> {
    match settings.projector_source {
        ProjectorSource::Log => None,
        ProjectorSource::Nats => {
            let relay = relay_config(settings);
            Some(NatsFeed {
                nats_url: relay.nats_url,
                stream: relay.stream_name,
                subject_prefix: relay.subject_prefix,
            })
        }
    }
}

/// Starts the projector of every read model of `selected` (and `stream_heads`), each writing
/// into its read database, fed by the log or by JetStream (`feed`), and telling its waiters
/// in this process at each commit; they stop with `shutdown`.
pub fn projectors(
    state: &AppState,
    selected: &[Context],
    feed: Option<&NatsFeed>,
    shutdown: &CancellationToken,
) -> Vec<JoinHandle<()>> {
    contexts::projections(selected)
        .into_iter()
        .map(|projection| {
            let name = projection.name();
            let read = state.read_databases.for_projector(name, &state.store);
            let watch = state.for_read_model(name).watch;
            let partitions = watch.partitions(name);
            let (store, stop, watch) = (state.store.clone(), shutdown.clone(), Some(watch));
            match (partitions, feed) {
                // A partition passes over the others' events: it reads the log.
                (Some(count), _) => {
                    spawn_partitioned_runner(store, read, projection, count, watch, stop)
                }
                (None, None) => spawn_runner_in(store, read, projection, watch, stop),
                (None, Some(feed)) => {
                    spawn_nats_runner(store, read, projection, watch, feed.clone(), stop)
                }
            }
        })
        .collect()
}

/// Opens the log and starts the roles for `contexts`.
pub async fn start(
    settings: &Settings,
    selected: Vec<Context>,
    roles: Roles,
) -> anyhow::Result<Running> {
    // The flag's parser checks it too; settings built in code are checked here.
    palimpsest_events::subject::validate_prefix(&settings.nats_subject_prefix)?;
    palimpsest_log::store::create_database_if_missing(&settings.database_url).await?;
    for url in settings.platform().read_databases.values() {
        palimpsest_log::store::create_database_if_missing(url).await?;
    }
    let mut state = AppState::connect(
        &settings.database_url,
        settings.data_dir.clone(),
        settings.platform(),
    )
    .await?;
    let shutdown = CancellationToken::new();
    // Before any router is built: the contexts start their background tasks with it.
    state.background = Background::stopped_by(shutdown.clone());
    let mut tasks = Vec::new();
    if roles.project {
        for projection in contexts::projections(&selected) {
            // Read models exist before the first request is served, so a read right after
            // start finds its tables (empty) rather than failing.
            let name = projection.name();
            let read = state.read_databases.for_projector(name, &state.store);
            let (store, projection) = (&state.store, projection.as_ref());
            match state.for_read_model(name).watch.partitions(name) {
                None => palimpsest_projections::ensure_in(store, &read, projection).await?,
                Some(count) => ensure_partitions(store, &read, projection, count).await?,
            }
        }
        let feed = feed(settings);
        tasks.extend(projectors(&state, &selected, feed.as_ref(), &shutdown));
    }
    if roles.relay {
        let store = state.store.clone();
        let config = relay_config(settings);
        state.relay = Some(config.health.clone());
        let stop = shutdown.clone();
        tasks.push(tokio::spawn(relay::run(store, config, stop)));
    }
    if roles.tree {
        let health = TreeHealth::default();
        state.tree = Some(health.clone());
        let maker = TreeMaker {
            store: state.store.clone(),
            signer: state.signer.clone(),
            policy: settings.head_policy(),
            nats: heads_nats(settings).await,
            subject_prefix: settings.nats_subject_prefix.clone(),
            health,
        };
        tasks.push(tokio::spawn(maker.run(shutdown.clone())));
    }
    let mut addr = None;
    if let Some(listener) = roles.http {
        addr = Some(listener.local_addr()?);
        let limits = settings.limits.limits(server::upload_routes(&selected));
        let header_timeout = limits.header_timeout;
        let app = if roles.api {
            server::app(
                state.clone(),
                &selected,
                limits,
                &settings.nats_subject_prefix,
            )
        } else {
            server::health_only(state.clone(), limits)
        };
        let stop = shutdown.clone();
        tasks.push(tokio::spawn(async move {
            if let Err(e) = server::serve(listener, app, header_timeout, stop.clone()).await {
                tracing::error!(error = %e, "http server failed");
                stop.cancel();
            }
        }));
    }
    tracing::info!(
        http = ?addr,
        relay = roles.relay,
        project = roles.project,
        tree = roles.tree,
        contexts = ?selected.iter().map(|c| c.name).collect::<Vec<_>>(),
        "palimpsest started"
    );
    Ok(Running {
        addr,
        state,
        shutdown,
        tasks,
    })
}
