//! Design documents (`_design/<name>`), past Sync Gateway and as CouchDB keeps them: `views`
//! queried per request over the documents the caller may read ([`view`]), `filters` for
//! `_changes` ([`filter`]), and `validate_doc_update` run on every write ([`validate`]). Their
//! functions run in the sync function's engine under its limits ([`js`]); view keys sort in
//! CouchDB's collation ([`collate`]). Decision 0032 says why views are computed per query.

pub mod collate;
pub mod filter;

pub mod js;
pub mod validate;

pub mod view;

use crate::http::error::CouchError;
use axum::http::StatusCode;
use serde::Deserialize;

/// The id prefix of design documents.
pub const PREFIX: &str = "_design/";

/// One view: its map function and its reduce (a built-in `_count`, `_sum`, `_stats` or a
/// function).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct ViewSource {
    /// `function (doc) { emit(key, value); }`.
    pub map: String,
    /// The reduce, if any.
    #[serde(default)]
    pub reduce: Option<String>,
}

/// What a design document defines (its other members are kept in its body, unread). Read
/// leniently, as CouchDB reads it: a member of another shape (`views.lib`, a filter that is
/// not a string) defines nothing.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct DesignDoc {
    #[serde(default)]
    views: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    filters: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    validate_doc_update: serde_json::Value,
}

impl DesignDoc {
    /// Reads a design document's body (a body that is not a JSON object defines nothing).
    pub fn parse(body: &str) -> DesignDoc {
        serde_json::from_str(body).unwrap_or_default()
    }

    /// View `name`: its map and reduce, if it has one of that name with a `map` string.
    pub fn view(&self, name: &str) -> Option<ViewSource> {
        self.views
            .get(name)
            .and_then(|view| serde_json::from_value(view.clone()).ok())
    }

    /// Filter `name`'s source.
    pub fn filter(&self, name: &str) -> Option<&str> {
        self.filters.get(name).and_then(serde_json::Value::as_str)
    }

    /// `validate_doc_update`'s source.
    pub fn validate_doc_update(&self) -> Option<&str> {
        self.validate_doc_update.as_str()
    }

    /// Compiles every function, as CouchDB does when a design document is saved: one that is
    /// not a JavaScript function is a 400 `compilation_error`, nothing stored. Built-in reduces
    /// (`_count`, `_sum`, `_stats`) are not compiled; another `_` name is refused.
    pub fn check(&self) -> Result<(), CouchError> {
        let functions = js::Functions::new().map_err(compilation)?;
        for name in self.views.keys() {
            let Some(view) = self.view(name) else {
                continue;
            };
            functions.compile(name, &view.map).map_err(compilation)?;
            match view.reduce.as_deref() {
                None => {}
                Some(builtin) if builtin.starts_with('_') => {
                    view::Builtin::parse(builtin)?;
                }
                Some(reduce) => functions.compile(name, reduce).map_err(compilation)?,
            }
        }
        for name in self.filters.keys() {
            if let Some(source) = self.filter(name) {
                functions.compile(name, source).map_err(compilation)?;
            }
        }
        if let Some(source) = self.validate_doc_update() {
            functions
                .compile("validate_doc_update", source)
                .map_err(compilation)?;
        }
        Ok(())
    }
}

fn compilation(e: js::JsError) -> CouchError {
    CouchError::new(StatusCode::BAD_REQUEST, "compilation_error", e.to_string())
}

/// CouchDB's 404 for a design document, view or filter that is not there.
pub fn missing(reason: impl Into<String>) -> CouchError {
    CouchError::not_found(reason)
}

/// A function error of a query as an answer: a runaway (time) is CouchDB's `os_process_error`
/// timeout, a throw its `render_error`; both with their JSON.
pub fn query_error(e: js::JsError) -> CouchError {
    match e {
        js::JsError::Limit => CouchError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "os_process_error",
            "a design document's function ran longer than its limit",
        ),
        js::JsError::Compile(_) => compilation(e),
        other => CouchError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "render_error",
            other.to_string(),
        ),
    }
}
