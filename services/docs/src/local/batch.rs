//! A `_local/` document inside a `_bulk_docs` batch: CouchDB saves (or, with `_deleted`,
//! deletes) it as a local document beside the batch's other documents, answered in its place
//! with its `0-N` rev. It is decided in the batch's one command, against its own stream.

use super::{LocalCommand, LocalState, decide, evolve, local_rev};
use crate::body::Incoming;
use crate::http::error::CouchError;
use palimpsest_events::docs::LocalEvent;

/// The prefix that makes an id a local document's.
pub const PREFIX: &str = "_local/";

/// Whether a batch item's id names a local document.
pub fn is_local(doc_id: &str) -> bool {
    doc_id.starts_with(PREFIX)
}

/// The command a batch item asks of its local document: a deletion when `_deleted`, else a
/// save. A local document holds no attachments: `_attachments` sent are dropped, as
/// pouchdb-server drops them (PouchDB's suite saves such a document and expects no attachment
/// back).
pub fn command_of(db: &str, doc_id: &str, doc: &Incoming) -> Result<LocalCommand, CouchError> {
    let id = doc_id.strip_prefix(PREFIX).unwrap_or(doc_id);
    if id.is_empty() || id.contains('\0') {
        return Err(CouchError::bad_request("invalid local document id"));
    }
    Ok(if doc.deleted {
        LocalCommand::Delete {
            db: db.to_owned(),
            doc_id: id.to_owned(),
            base: doc.rev.clone(),
        }
    } else {
        LocalCommand::Save {
            db: db.to_owned(),
            doc_id: id.to_owned(),
            base: doc.rev.clone(),
            body: without_attachments(&doc.body),
        }
    })
}

/// `body` without its `_attachments` member (as sent when it has none).
pub fn without_attachments(body: &str) -> String {
    match serde_json::from_str::<crate::body::Members>(body) {
        Ok(members) if members.0.iter().any(|(key, _)| key == "_attachments") => {
            let kept = members
                .0
                .into_iter()
                .filter(|(key, _)| key != "_attachments")
                .collect();
            crate::body::Members(kept).to_json()
        }
        _ => body.to_owned(),
    }
}

/// Decides `command` against `state`: its events, the state after them and the rev to answer
/// (`0-0` for a deletion, as CouchDB answers it).
pub fn decide_in_batch(
    command: LocalCommand,
    state: &LocalState,
) -> Result<(Vec<LocalEvent>, LocalState, String), CouchError> {
    let events = decide(command, state)?;
    let rev = match events.first() {
        Some(LocalEvent::LocalSaved { number, .. }) => local_rev(*number),
        _ => "0-0".into(),
    };
    let after = events.iter().fold(state.clone(), evolve);
    Ok((events, after, rev))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incoming(body: &str, deleted: bool, rev: Option<&str>) -> Incoming {
        Incoming {
            id: None,
            rev: rev.map(str::to_owned),
            revisions: None,
            deleted,
            body: body.into(),
        }
    }

    #[test]
    fn a_deleted_item_deletes_and_another_saves_without_the_prefix() {
        let delete = command_of("db", "_local/cp", &incoming("{}", true, Some("0-1")));
        assert!(matches!(
            delete,
            Ok(LocalCommand::Delete { ref doc_id, ref base, .. })
                if doc_id == "cp" && base.as_deref() == Some("0-1")
        ));
        let save = command_of("db", "_local/cp", &incoming(r#"{"a":1}"#, false, None));
        assert!(matches!(save, Ok(LocalCommand::Save { ref doc_id, .. }) if doc_id == "cp"));
    }

    #[test]
    fn attachments_are_dropped_and_an_empty_id_is_refused() {
        let with = incoming(
            r#"{"n":1,"_attachments":{"a":{"data":"eA=="}}}"#,
            false,
            None,
        );
        assert!(matches!(
            command_of("db", "_local/cp", &with),
            Ok(LocalCommand::Save { ref body, .. }) if body == r#"{"n":1}"#
        ));
        assert!(command_of("db", "_local/", &incoming("{}", false, None)).is_err());
    }

    #[test]
    fn a_save_in_a_batch_answers_its_rev_and_the_state_after_it() {
        let command = command_of("db", "_local/cp", &incoming("{}", false, None)).expect("save");
        let (events, after, rev) = decide_in_batch(command, &LocalState::default()).expect("ok");
        assert_eq!(events.len(), 1);
        assert_eq!(rev, "0-1");
        assert_eq!(after.last_number, 1);
    }
}
