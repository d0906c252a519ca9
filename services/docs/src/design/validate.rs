//! `validate_doc_update(newDoc, oldDoc, userCtx, secObj)`: every design document's function
//! checks each write of a document (not of design or `_local/` documents, as in CouchDB), new
//! edits and replicated revisions alike. The functions come from the database's stream
//! ([`crate::database::DbState::validators`]), which the write command loads: never from a
//! read model. `throw({forbidden: reason})` refuses with 403, `throw({unauthorized: reason})`
//! with 401; in `_bulk_docs` each refused document gets its own error entry.

use super::js::{Functions, JsError};
use super::query_error;
use crate::http::error::CouchError;
use crate::sync::Writer;
use axum::http::StatusCode;
use serde_json::json;
use std::collections::BTreeMap;

/// A batch's validators, compiled on the first document that needs them (one engine for
/// the batch; not `Send`: made and used between awaits).
pub struct Validators<'a> {
    sources: &'a BTreeMap<String, String>,
    user_ctx: String,
    engine: Option<Result<Functions, JsError>>,
}

impl<'a> Validators<'a> {
    /// The validators `sources` (design document id → source) for `writer` writing to `db`.
    pub fn new(sources: &'a BTreeMap<String, String>, writer: &Writer, db: &str) -> Self {
        let mut roles = writer.roles.clone();
        if writer.admin {
            roles.push("_admin".to_owned());
        }
        let user_ctx = json!({"db": db, "name": writer.name, "roles": roles}).to_string();
        Validators {
            sources,
            user_ctx,
            engine: None,
        }
    }

    /// Checks the new revision `doc` (JSON with `_id`, `_rev`, `_deleted`) of a document
    /// whose current revision is `old` (none for a new document) against every validator, in
    /// design document id order.
    pub fn check(&mut self, doc_id: &str, doc: &str, old: Option<&str>) -> Result<(), CouchError> {
        if self.sources.is_empty() || doc_id.starts_with(super::PREFIX) {
            return Ok(());
        }
        let sources = self.sources;
        let engine = self.engine.get_or_insert_with(|| compile(sources));
        let functions = engine.as_ref().map_err(|e| query_error(e.clone()))?;
        let old = old.unwrap_or("null");
        for design in sources.keys() {
            functions
                .call(design, &[doc, old, &self.user_ctx, "{}"])
                .map_err(refusal)?;
        }
        Ok(())
    }
}

fn compile(sources: &BTreeMap<String, String>) -> Result<Functions, JsError> {
    let functions = Functions::new()?;
    for (design, source) in sources {
        functions.compile(design, source)?;
    }
    Ok(functions)
}

/// A validator's throw as CouchDB answers it.
fn refusal(e: JsError) -> CouchError {
    match e {
        JsError::Forbidden(reason) => CouchError::new(StatusCode::FORBIDDEN, "forbidden", reason),
        JsError::Unauthorized(reason) => {
            CouchError::new(StatusCode::UNAUTHORIZED, "unauthorized", reason)
        }
        other => query_error(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_is_403_unauthorized_401_and_design_documents_are_not_checked() {
        let sources: BTreeMap<String, String> = [(
            "_design/v".to_owned(),
            "function (doc, old, user) { if (doc.f) throw({forbidden: 'no f'}); if (!user.name) throw({unauthorized: 'log in'}); }".to_owned(),
        )]
        .into_iter()
        .collect();
        let ann = Writer {
            name: Some("ann".into()),
            ..Writer::default()
        };
        let mut validators = Validators::new(&sources, &ann, "db");
        assert_eq!(
            validators
                .check("d", r#"{"f":1}"#, None)
                .expect_err("refused")
                .status,
            StatusCode::FORBIDDEN
        );
        assert!(validators.check("d", "{}", None).is_ok());
        assert!(validators.check("_design/x", r#"{"f":1}"#, None).is_ok());
        let guest = Writer::default();
        let mut validators = Validators::new(&sources, &guest, "db");
        let refused = validators.check("d", "{}", None).expect_err("refused");
        assert_eq!(
            (refused.status, refused.reason.as_str()),
            (StatusCode::UNAUTHORIZED, "log in")
        );
    }
}
