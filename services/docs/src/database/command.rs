//! A database's commands through the platform's runner: create, delete and configure it,
//! deciding with [`super::decide`] on its stream, after checking CouchDB's naming rule.

use super::{DbCommand, DbState};
use crate::command::{Attempt, Decided, Decision, DocsCommand, Reply, encode, run};
use crate::http::error::CouchError;
use crate::streams;
use axum::http::StatusCode;
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;
use serde_json::json;

/// CouchDB's database names: `^[a-z][a-z0-9_$()+/-]*$`, at most 238 characters.
pub fn check_name(name: &str) -> Result<(), CouchError> {
    let ok = name.len() <= 238
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_$()+/-".contains(c));
    if ok {
        Ok(())
    } else {
        Err(CouchError::new(
            StatusCode::BAD_REQUEST,
            "illegal_database_name",
            format!(
                "Name: '{name}'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / are allowed. Must begin with a letter."
            ),
        ))
    }
}

/// Runs a database command (create, delete, set the sync function).
pub async fn database_command(
    state: &AppState,
    request: &CommandRequest,
    name: &str,
    command: DbCommand,
    status: StatusCode,
) -> Result<Reply, CouchError> {
    check_name(name)?;
    let stream = streams::database(name).map_err(|e| CouchError::bad_request(e.to_string()))?;
    let command = DatabaseCommand {
        stream,
        command,
        status,
    };
    run(state, request, &command).await
}

/// One command on a database's stream, answering `status` when it succeeds.
struct DatabaseCommand {
    stream: palimpsest_events::StreamName,
    command: DbCommand,
    status: StatusCode,
}

impl DocsCommand for DatabaseCommand {
    fn decide<'a>(&'a self, attempt: &'a Attempt) -> Decided<'a> {
        Box::pin(async move {
            let current: DbState = attempt.load(&self.stream).await?;
            let events = super::decide(self.command.clone(), &current)?;
            Ok(
                Decision::new(Reply::json(self.status, &json!({"ok": true})))
                    .write(self.stream.clone(), encode(&events)?),
            )
        })
    }
}
