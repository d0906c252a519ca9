//! The bounded contexts this binary serves, and the read models it projects.

use crate::config::DEFAULT_DATA_DIR;
use palimpsest_events::{RecordedEvent, StreamName};
use palimpsest_projections::Projection;
use palimpsest_resources::content::ContentConfig;
use palimpsest_web::AppState;
use std::path::Path;
use std::sync::Arc;

/// Builds a context's routes (without prefix) over the platform's state.
pub type RouterFn = Arc<dyn Fn(AppState) -> axum::Router + Send + Sync>;

/// One bounded context: its URL prefix, its routes and its read model.
pub struct Context {
    /// The name, also the URL prefix (`/pads`) and the read model's schema.
    pub name: &'static str,
    /// Builds the context's routes (without prefix), configured by [`ContextSettings`].
    pub router: RouterFn,
    /// The context's projection.
    pub projection: fn() -> Arc<dyn Projection>,
    /// Folds a stream's events into its state as JSON, for `audit stream --at`; `None` when
    /// the stream's category is not one the context folds.
    pub state_at: fn(&StreamName, &[RecordedEvent]) -> Option<serde_json::Value>,
    /// Routes (without prefix, as routed: `/files/{id}`) whose bodies take the larger upload
    /// limit (`PALIMPSEST_HTTP_UPLOAD_LIMIT`) instead of the ordinary one.
    pub upload_routes: &'static [&'static str],
}

/// How contexts are configured beyond the platform's settings. The binary fills it from its
/// flags and environment (`serve`, `run`: `cli::context_settings`); tests give theirs
/// (`TestApp::builder`), so each app of a process has its own, and a context never reads a
/// process-wide global (an environment variable) to find it.
#[derive(Clone, Debug)]
pub struct ContextSettings {
    /// records: the schema file's classes, the clock, DELTA, task handlers, the site key and
    /// the previous ones.
    pub records: palimpsest_records::settings::Settings,
    /// resources: the content folder and the inline size.
    pub resources_content: ContentConfig,
    /// docs: the administrator's Basic user name, the password keys, the attachment folder and
    /// inline size.
    pub docs: palimpsest_docs::Settings,
    /// pads: the API key the operator gives.
    pub pads: palimpsest_pads::Settings,
}

impl Default for ContextSettings {
    /// What the binary gives with no flag and no environment: every context's defaults, the
    /// resources content inside the default data folder.
    fn default() -> Self {
        ContextSettings {
            records: Default::default(),
            resources_content: palimpsest_resources::content::in_data_dir(Path::new(
                DEFAULT_DATA_DIR,
            )),
            docs: Default::default(),
            pads: Default::default(),
        }
    }
}

/// Every context the binary knows, configured by default (what commands that serve no routes
/// need: projections, `state_at`).
pub fn all() -> Vec<Context> {
    configured(ContextSettings::default())
}

/// Every context the binary knows, configured by `settings`.
pub fn configured(settings: ContextSettings) -> Vec<Context> {
    let ContextSettings {
        records,
        resources_content,
        docs,
        pads,
    } = settings;
    vec![
        Context {
            name: "pads",
            router: Arc::new(move |state| palimpsest_pads::router_with(state, pads.clone())),
            projection: palimpsest_pads::projection,
            state_at: palimpsest_pads::state_at,
            upload_routes: &[],
        },
        Context {
            name: "atlas",
            router: Arc::new(palimpsest_atlas::router),
            projection: palimpsest_atlas::projection,
            state_at: palimpsest_atlas::state_at,
            upload_routes: &[],
        },
        Context {
            name: "docs",
            router: Arc::new(move |state| palimpsest_docs::router_with(state, docs.clone())),
            projection: palimpsest_docs::projection,
            state_at: palimpsest_docs::state_at,
            // Replication batches and inline attachments outgrow the ordinary body limit;
            // the log's per-event and per-append limits still bound what is accepted.
            upload_routes: &["/{db}/_bulk_docs", "/{db}/{doc}", "/{db}/{doc}/{*name}"],
        },
        Context {
            name: "resources",
            router: Arc::new(move |state| {
                palimpsest_resources::http::routes(
                    palimpsest_resources::http::Resources::with_content(
                        state,
                        resources_content.clone(),
                    ),
                )
            }),
            projection: palimpsest_resources::projection,
            state_at: palimpsest_resources::state_at,
            upload_routes: &[
                "/@api/deki/pages/{pageid}/files/{filename}",
                "/@api/deki/pages/{pageid}/properties",
                "/@api/deki/files/{fileid}/properties",
                "/@api/deki/users/{userid}/properties",
                "/@api/deki/site/properties",
                "/@api/deki/pages/{pageid}/properties/{key}",
                "/@api/deki/files/{fileid}/properties/{key}",
                "/@api/deki/users/{userid}/properties/{key}",
                "/@api/deki/site/properties/{key}",
            ],
        },
        Context {
            name: "records",
            router: Arc::new(move |state| {
                palimpsest_records::http::router_with(state, records.clone())
            }),
            projection: palimpsest_records::projection,
            state_at: palimpsest_records::state_at,
            upload_routes: &[],
        },
    ]
}

/// The contexts named in `only` (all when empty), configured by `settings`; an unknown name is
/// an error.
pub fn select(only: &[String], settings: ContextSettings) -> Result<Vec<Context>, String> {
    let all = configured(settings);
    if only.is_empty() {
        return Ok(all);
    }
    for name in only {
        if !all.iter().any(|c| c.name == name) {
            return Err(format!(
                "unknown context `{name}`; known: {}",
                all.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    Ok(all
        .into_iter()
        .filter(|c| only.iter().any(|n| n == c.name))
        .collect())
}

/// Every read model: the platform's `stream_heads` and each context's.
pub fn projections(contexts: &[Context]) -> Vec<Arc<dyn Projection>> {
    let mut all: Vec<Arc<dyn Projection>> = vec![Arc::new(palimpsest_stream_heads::StreamHeads)];
    all.extend(contexts.iter().map(|c| (c.projection)()));
    all
}

/// The state of `stream` after `events`, folded by its context's deciders.
pub fn state_at(stream: &StreamName, events: &[RecordedEvent]) -> Option<serde_json::Value> {
    all()
        .iter()
        .find(|c| c.name == stream.context)
        .and_then(|c| (c.state_at)(stream, events))
}
