//! The server and its databases: `GET /`, `GET /_all_dbs`, `PUT|GET|DELETE /{db}`.

use super::error::CouchError;
use crate::command::Reply;
use crate::database::command::database_command;
use crate::database::{DEFAULT_REVS_LIMIT, DbCommand};
use crate::read;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use md5::{Digest, Md5};
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;
use serde_json::{Value, json};

/// `GET /`: the welcome CouchDB clients check, with a uuid stable for this server's data.
pub async fn welcome(State(state): State<AppState>) -> Json<Value> {
    let digest = Md5::digest(format!("palimpsest-docs:{}", state.data_dir.display()).as_bytes());
    Json(json!({
        "couchdb": "Welcome",
        "version": "3.3.3",
        "uuid": hex::encode(digest),
        "vendor": {"name": "Palimpsest"},
        "features": []
    }))
}

/// `GET /_all_dbs`: the names of the live databases, sorted; the administrator's only.
pub async fn all_dbs(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Vec<String>>, CouchError> {
    crate::access::gate::administrator_of(&state, None, &headers).await?;
    let client = read::client(&state).await?;
    let rows = client
        .query(
            "SELECT name FROM docs.databases ORDER BY name COLLATE \"C\"",
            &[],
        )
        .await?;
    Ok(Json(rows.iter().map(|r| r.get(0)).collect()))
}

/// `PUT /{db}`: creates the database (412 if it exists); the administrator's only, as in
/// CouchDB 3. `?revs_limit=` sets how many ancestors per leaf the read model keeps (Sync
/// Gateway's `revs_limit`, default 1000).
pub async fn create(
    State(state): State<AppState>,
    Path(name): Path<String>,
    axum::extract::Query(params): axum::extract::Query<super::params::Params>,
    headers: HeaderMap,
    request: CommandRequest,
) -> Result<Reply, CouchError> {
    crate::access::gate::administrator_of(&state, Some(&name), &headers).await?;
    let revs_limit = super::params::number(&params, "revs_limit")?
        .map(|n| u32::try_from(n.clamp(1, 100_000)).unwrap_or(DEFAULT_REVS_LIMIT))
        .unwrap_or(DEFAULT_REVS_LIMIT);
    let command = DbCommand::Create {
        name: name.clone(),
        incarnation: uuid::Uuid::now_v7(),
        revs_limit,
        sync: None,
        // A database made through CouchDB's API is CouchDB's "admin party": readable by anyone.
        guest: Some(vec!["*".into()]),
    };
    database_command(&state, &request, &name, command, StatusCode::CREATED).await
}

/// `DELETE /{db}`: deletes the database and its documents; the administrator's only.
pub async fn delete(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    request: CommandRequest,
) -> Result<Reply, CouchError> {
    administered(
        &state,
        &request,
        &name,
        &headers,
        DbCommand::Delete,
        StatusCode::OK,
    )
    .await
}

/// Runs `command` on database `name` once its caller is known as the administrator.
async fn administered(
    state: &AppState,
    request: &CommandRequest,
    name: &str,
    headers: &HeaderMap,
    command: DbCommand,
    status: StatusCode,
) -> Result<Reply, CouchError> {
    crate::access::gate::administrator_of(state, Some(name), headers).await?;
    database_command(state, request, name, command, status).await
}

/// `POST /{db}/_compact`: CouchDB's compaction, the database administrator's (as in CouchDB):
/// the bodies of revisions that are no longer leaves leave the read model (the log keeps
/// them). Answered 202 as CouchDB answers it; it is done when answered (`compact_running` is
/// always false).
pub async fn compact(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    request: CommandRequest,
) -> Result<Reply, CouchError> {
    administered(
        &state,
        &request,
        &name,
        &headers,
        DbCommand::Compact,
        StatusCode::ACCEPTED,
    )
    .await
}

/// `GET /{db}`: the database's info.
pub async fn info(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Json<Value>, CouchError> {
    let client = read::client(&state).await?;
    let db = read::database(&client, &name).await?;
    crate::access::auth::caller(&state, &client, &name, &headers).await?;
    let counts = crate::counts::of(&client, &db).await?;
    Ok(Json(json!({
        "db_name": db.name,
        "update_seq": counts.update_seq,
        "doc_count": counts.live,
        "doc_del_count": counts.deleted,
        "purge_seq": 0,
        "compact_running": false,
        "disk_format_version": 8,
        "instance_start_time": "0",
        "revs_limit": db.revs_limit,
        "sizes": {"active": 0, "external": 0, "file": 0},
        "props": {}
    })))
}

/// `POST /{db}/_ensure_full_commit`: every write is already durable when answered.
pub async fn ensure_full_commit(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Reply, CouchError> {
    let client = read::client(&state).await?;
    read::database(&client, &name).await?;
    crate::access::auth::caller(&state, &client, &name, &headers).await?;
    Ok(Reply::json(
        StatusCode::CREATED,
        &json!({"ok": true, "instance_start_time": "0"}),
    ))
}
