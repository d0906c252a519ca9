//! Sync Gateway's user and role admin routes: `/_admin/{db}/_user/{name}` and
//! `/_admin/{db}/_role/{name}` (PUT, GET, DELETE) and their lists.

use super::error::CouchError;
use crate::command::Reply;
use crate::principal::command::{self, Change, seal};
use crate::principal::{PrincipalError, UserFields};
use crate::read;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;
use serde::Deserialize;
use serde_json::{Value, json};

impl From<PrincipalError> for CouchError {
    fn from(e: PrincipalError) -> Self {
        match e {
            PrincipalError::NotFound => CouchError::not_found("missing"),
        }
    }
}

/// A user as the admin API takes it.
#[derive(Debug, Default, Deserialize)]
struct UserBody {
    #[serde(default)]
    password: Option<String>,
    #[serde(default)]
    admin_channels: Vec<String>,
    #[serde(default)]
    admin_roles: Vec<String>,
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    disabled: bool,
}

/// A role as the admin API takes it.
#[derive(Debug, Default, Deserialize)]
struct RoleBody {
    #[serde(default)]
    admin_channels: Vec<String>,
}

fn check_principal(name: &str) -> Result<(), CouchError> {
    if name.is_empty() || name.len() > 200 || name.chars().any(|c| c.is_control() || c == ':') {
        return Err(CouchError::bad_request("invalid user or role name"));
    }
    Ok(())
}

use super::params::body_or_default as parse;

/// `PUT /_admin/{db}/_user/{name}` `{password?, admin_channels, admin_roles, email, disabled}`.
pub async fn put_user(
    State(state): State<AppState>,
    Path((db, name)): Path<(String, String)>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, CouchError> {
    check_principal(&name)?;
    let body: UserBody = parse(&body)?;
    let password_sealed = match body.password {
        Some(password) => Some(seal(
            &crate::access::password::hash_password(password).await?,
        )?),
        None => None,
    };
    let change = Change::SaveUser(UserFields {
        db: db.clone(),
        name: name.clone(),
        password_sealed,
        admin_channels: body.admin_channels,
        admin_roles: body.admin_roles,
        email: body.email,
        disabled: body.disabled,
    });
    command::change(&state, &request, db, name, change).await
}

/// `DELETE /_admin/{db}/_user/{name}`.
pub async fn delete_user(
    State(state): State<AppState>,
    Path((db, name)): Path<(String, String)>,
    request: CommandRequest,
) -> Result<Reply, CouchError> {
    let change = Change::DeleteUser;
    command::change(&state, &request, db, name, change).await
}

/// `PUT /_admin/{db}/_role/{name}` `{admin_channels}`.
pub async fn put_role(
    State(state): State<AppState>,
    Path((db, name)): Path<(String, String)>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, CouchError> {
    check_principal(&name)?;
    let body: RoleBody = parse(&body)?;
    let change = Change::SaveRole(body.admin_channels);
    command::change(&state, &request, db, name, change).await
}

/// `DELETE /_admin/{db}/_role/{name}`.
pub async fn delete_role(
    State(state): State<AppState>,
    Path((db, name)): Path<(String, String)>,
    request: CommandRequest,
) -> Result<Reply, CouchError> {
    let change = Change::DeleteRole;
    command::change(&state, &request, db, name, change).await
}

async fn get_principal(state: &AppState, db: &str, key: &str) -> Result<Value, CouchError> {
    let client = read::client(state).await?;
    read::database(&client, db).await?;
    let row = client
        .query_opt(
            "SELECT value FROM docs.kv WHERE db = $1 AND key = $2",
            &[&db, &key],
        )
        .await?
        .ok_or_else(|| CouchError::not_found("missing"))?;
    let mut value: Value =
        serde_json::from_str(row.get::<_, &str>(0)).map_err(CouchError::internal)?;
    if let Some(object) = value.as_object_mut() {
        object.remove("passwordhash_bcrypt");
        object.remove("passwordhash_sealed");
    }
    Ok(value)
}

/// `GET /_admin/{db}/_user/{name}` (the password hash is never shown), with Sync Gateway's
/// derived members: `admin_roles` (granted here), `roles` (those and the ones documents grant
/// through `role()`) and `all_channels`.
pub async fn get_user(
    State(state): State<AppState>,
    Path((db, name)): Path<(String, String)>,
) -> Result<Reply, CouchError> {
    let mut value = get_principal(&state, &db, &format!("user:{name}")).await?;
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let admin_channels = strings(&value["admin_channels"]);
    let admin_roles = strings(&value["roles"]);
    let client = read::client(&state).await?;
    let derived =
        crate::access::user::channels_of(&client, &db, &name, admin_channels, admin_roles.clone())
            .await?;
    if let Some(object) = value.as_object_mut() {
        object.insert("admin_roles".into(), json!(admin_roles));
        object.insert("roles".into(), json!(derived.roles));
        object.insert("all_channels".into(), json!(derived.channels));
    }
    Ok(Reply::json(StatusCode::OK, &value))
}

/// `GET /_admin/{db}/_role/{name}`.
pub async fn get_role(
    State(state): State<AppState>,
    Path((db, name)): Path<(String, String)>,
) -> Result<Reply, CouchError> {
    let value = get_principal(&state, &db, &format!("role:{name}")).await?;
    Ok(Reply::json(StatusCode::OK, &value))
}

async fn list(state: &AppState, db: &str, prefix: &str) -> Result<Reply, CouchError> {
    let client = read::client(state).await?;
    read::database(&client, db).await?;
    let rows = client
        .query(
            "SELECT substr(key, $3) FROM docs.kv WHERE db = $1 AND seq IS NULL AND starts_with(key, $2) \
             ORDER BY key COLLATE \"C\"",
            &[&db, &prefix, &(prefix.len() as i32 + 1)],
        )
        .await?;
    let names: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    Ok(Reply::json(StatusCode::OK, &json!(names)))
}

/// `GET /_admin/{db}/_user/`: every user's name.
pub async fn list_users(
    State(state): State<AppState>,
    Path(db): Path<String>,
) -> Result<Reply, CouchError> {
    list(&state, &db, "user:").await
}

/// `GET /_admin/{db}/_role/`: every role's name.
pub async fn list_roles(
    State(state): State<AppState>,
    Path(db): Path<String>,
) -> Result<Reply, CouchError> {
    list(&state, &db, "role:").await
}
