//! A `_local/` document's write through the platform's runner: loads the database (it must be
//! live) and the document's stream, decides with [`super::decide`], answers CouchDB's
//! `{"ok", "id", "rev"}`.

use super::{LocalCommand, LocalState, local_rev};
use crate::command::{Attempt, Decided, Decision, DocsCommand, Reply, encode, run_timed};
use crate::database::DbState;
use crate::http::error::CouchError;
use crate::streams;
use axum::http::StatusCode;
use palimpsest_events::docs::LocalEvent;
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;
use serde_json::json;

/// Runs `command` on the local document `doc_id` of `db`, answering `status` when it succeeds;
/// laps `phases` at the runner's return.
pub async fn local_command(
    state: &AppState,
    request: &CommandRequest,
    db: &str,
    doc_id: &str,
    command: LocalCommand,
    status: StatusCode,
    phases: &mut crate::phases::Phases,
) -> Result<Reply, CouchError> {
    if doc_id.is_empty() || doc_id.contains('\0') {
        return Err(CouchError::bad_request("invalid local document id"));
    }
    let db_stream = streams::database(db).map_err(|e| CouchError::bad_request(e.to_string()))?;
    let command = LocalWrite {
        route: phases.route(),
        db_stream,
        doc_id: doc_id.to_owned(),
        command,
        status,
    };
    run_timed(state, request, &command, phases).await
}

/// A save or deletion of one local document, as one command.
struct LocalWrite {
    /// The route's label, for the decision's [`crate::phases::Phases`].
    route: &'static str,
    db_stream: palimpsest_events::StreamName,
    doc_id: String,
    command: LocalCommand,
    status: StatusCode,
}

impl DocsCommand for LocalWrite {
    fn decide<'a>(&'a self, attempt: &'a Attempt) -> Decided<'a> {
        Box::pin(async move {
            let mut phases = crate::phases::Phases::start(self.route);
            let db_state: DbState = attempt.load(&self.db_stream).await?;
            let (incarnation, _) = db_state.live.ok_or_else(CouchError::no_database)?;
            let stream = streams::local(incarnation, &self.doc_id)
                .map_err(|e| CouchError::bad_request(e.to_string()))?;
            let current: LocalState = attempt.load(&stream).await?;
            phases.lap("load");
            let events = super::decide(self.command.clone(), &current)?;
            let rev = match events.first() {
                Some(LocalEvent::LocalSaved { number, .. }) => local_rev(*number),
                _ => "0-0".into(),
            };
            let reply = Reply::json(
                self.status,
                &json!({"ok": true, "id": format!("_local/{}", self.doc_id), "rev": rev}),
            );
            Ok(Decision::new(reply)
                .check(self.db_stream.clone())
                .write(stream, encode(&events)?))
        })
    }
}
