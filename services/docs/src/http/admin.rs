//! Sync Gateway's admin API under `/docs/_admin`, behind the admin bearer token: database
//! creation with its configuration and the sync function.

use super::error::CouchError;
use crate::command::Reply;
use crate::database::command::{check_name, database_command};
use crate::database::{DEFAULT_REVS_LIMIT, DbCommand};
use crate::read;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;
use serde::Deserialize;

/// A database's configuration, as `PUT /_admin/{db}` takes it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default)]
    sync: Option<String>,
    #[serde(default, deserialize_with = "crate::body::optional_whole_u32")]
    revs_limit: Option<u32>,
    #[serde(default)]
    guest: Option<GuestConfig>,
}

/// Sync Gateway's guest configuration: disabled unless said otherwise.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GuestConfig {
    #[serde(default)]
    disabled: Option<bool>,
    #[serde(default)]
    admin_channels: Vec<String>,
}

/// `PUT /_admin/{db}` `{sync?, revs_limit?}`: creates the database with its configuration.
pub async fn create(
    State(state): State<AppState>,
    Path(name): Path<String>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, CouchError> {
    let config: Config = super::params::body_or_default(&body)?;
    check_name(&name)?;
    let command = DbCommand::Create {
        name: name.clone(),
        incarnation: uuid::Uuid::now_v7(),
        revs_limit: config
            .revs_limit
            .unwrap_or(DEFAULT_REVS_LIMIT)
            .clamp(1, 100_000),
        sync: config.sync,
        guest: config
            .guest
            .filter(|g| g.disabled != Some(true))
            .map(|g| g.admin_channels),
    };
    database_command(&state, &request, &name, command, StatusCode::CREATED).await
}

/// `GET /_admin/{db}/_config/sync`: the sync function's source (the default when none is set).
pub async fn get_sync(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Response, CouchError> {
    let client = read::client(&state).await?;
    read::database(&client, &name).await?;
    let row = client
        .query_one("SELECT sync FROM docs.databases WHERE name = $1", &[&name])
        .await?;
    let source: Option<String> = row.get(0);
    Ok((
        StatusCode::OK,
        [(axum::http::header::CONTENT_TYPE, "application/javascript")],
        source.unwrap_or_else(|| crate::sync::DEFAULT.to_owned()),
    )
        .into_response())
}

/// `PUT /_admin/{db}/_config/sync` (the JavaScript as the body): later writes run it.
pub async fn put_sync(
    State(state): State<AppState>,
    Path(name): Path<String>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, CouchError> {
    let source = String::from_utf8(body.to_vec())
        .map_err(|_| CouchError::bad_request("the sync function must be UTF-8 text"))?;
    if source.contains('\0') || source.len() > 100_000 {
        return Err(CouchError::bad_request(
            "the sync function must be under 100 kB, without U+0000",
        ));
    }
    check_compiles(&source)?;
    let command = DbCommand::SetSync { sync: Some(source) };
    database_command(&state, &request, &name, command, StatusCode::OK).await
}

/// `DELETE /_admin/{db}/_config/sync`: back to the default.
pub async fn delete_sync(
    State(state): State<AppState>,
    Path(name): Path<String>,
    request: CommandRequest,
) -> Result<Reply, CouchError> {
    database_command(
        &state,
        &request,
        &name,
        DbCommand::SetSync { sync: None },
        StatusCode::OK,
    )
    .await
}

/// Refuses a function that does not compile.
fn check_compiles(source: &str) -> Result<(), CouchError> {
    crate::sync::compiles(source).map_err(|e| CouchError::bad_request(e.to_string()))
}

/// `GET /_admin/{db}/_raw/{doc}`: the stored key-value form, `_sync` included.
pub async fn raw(
    State(state): State<AppState>,
    Path((name, doc_id)): Path<(String, String)>,
) -> Result<Response, CouchError> {
    let client = read::client(&state).await?;
    read::database(&client, &name).await?;
    let row = client
        .query_opt(
            "SELECT value FROM docs.kv WHERE db = $1 AND key = $2 AND seq IS NOT NULL",
            &[&name, &doc_id],
        )
        .await?
        .ok_or_else(|| CouchError::not_found("missing"))?;
    let value: String = row.get(0);
    Ok((
        StatusCode::OK,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        value,
    )
        .into_response())
}

/// `GET /_admin/{db}/_revtree/{doc}`: the revision tree as Graphviz `dot` (Sync Gateway's form).
pub async fn revtree(
    State(state): State<AppState>,
    Path((name, doc_id)): Path<(String, String)>,
) -> Result<Response, CouchError> {
    let client = read::client(&state).await?;
    read::database(&client, &name).await?;
    let stored = read::document(&client, &name, &doc_id)
        .await?
        .ok_or_else(|| CouchError::not_found("missing"))?;
    let tree = stored.tree()?;
    let mut dot = String::from("digraph revtree {\n");
    for node in tree.nodes() {
        let rev = node.rev.to_string();
        if node.deleted {
            dot.push_str(&format!("  \"{rev}\" [style=dashed];\n"));
        }
        if let Some(parent) = node.parent {
            dot.push_str(&format!(
                "  \"{}\" -> \"{rev}\";\n",
                tree.nodes()[parent].rev
            ));
        }
    }
    dot.push_str("}\n");
    Ok((
        StatusCode::OK,
        [(axum::http::header::CONTENT_TYPE, "text/plain")],
        dot,
    )
        .into_response())
}

/// Sync Gateway's default tombstone retention: 30 days.
const DEFAULT_RETENTION_SECS: u64 = 30 * 24 * 3600;

/// `POST /_admin/{db}/_compact?retention_secs=`: purges the tombstones last changed before the
/// retention (default 30 days) from the read model; the log keeps them.
pub async fn compact(
    State(state): State<AppState>,
    Path(name): Path<String>,
    axum::extract::Query(params): axum::extract::Query<super::params::Params>,
    request: CommandRequest,
) -> Result<Reply, CouchError> {
    let retention = super::params::number(&params, "retention_secs")?
        .unwrap_or(DEFAULT_RETENTION_SECS)
        .min(100 * 365 * 24 * 3600);
    let seconds = retention as f64;
    let client = state.store.pool().get().await?;
    let up_to_seq: i64 = client
        .query_one(
            "SELECT coalesce(max(position), 0) FROM log.events \
             WHERE recorded_at <= now() - make_interval(secs => $1)",
            &[&seconds],
        )
        .await?
        .get(0);
    drop(client);
    let command = DbCommand::PurgeTombstones { up_to_seq };
    database_command(&state, &request, &name, command, StatusCode::OK).await
}
