//! `_changes` filtered by a design document: `filter=<ddoc>/<name>` runs
//! `function (doc, req)` (`req.query` holds the request's parameters, as CouchDB passes a
//! replication's `query_params`), `filter=_view&view=<ddoc>/<name>` keeps the documents the
//! view's map function emits for. Both see the winner as a view does (design documents
//! included, as CouchDB's filters see them) and run only over rows the caller may read (the
//! channel query selects them first); one engine serves each batch of rows, under the sync
//! function's limits. A filter function that throws fails the answer (CouchDB's
//! `render_error`); a view's map function that throws keeps the document out, as in a view.

use super::js::{Functions, JsError};
use super::query_error;
use crate::http::error::CouchError;
use serde_json::json;

/// A design document's filter of `_changes`.
#[derive(Debug, Clone)]
pub enum ChangesFilter {
    /// `filter=<ddoc>/<name>`: the function and the `req` it is given (JSON).
    Function {
        /// Its source.
        source: String,
        /// `{query, method, userCtx}` as JSON.
        req: String,
    },
    /// `filter=_view`: the view's map function.
    View {
        /// Its source.
        map: String,
    },
}

impl ChangesFilter {
    /// The filter `function (doc, req)` with `req` built from the query string and caller.
    pub fn function(
        source: &str,
        query: &std::collections::HashMap<String, String>,
        db: &str,
        name: Option<&str>,
        roles: &[String],
    ) -> ChangesFilter {
        let req = json!({
            "query": query,
            "method": "GET",
            "userCtx": {"db": db, "name": name, "roles": roles},
        });
        ChangesFilter::Function {
            source: source.to_owned(),
            req: req.to_string(),
        }
    }

    /// Which of `docs` (each the JSON a design function sees, `None` for a row passed as it
    /// is: one the caller reads as removed) pass. One engine for the batch; a function past its
    /// limits fails the whole answer (CouchDB's `os_process_error`).
    pub fn keep(&self, docs: &[Option<String>]) -> Result<Vec<bool>, CouchError> {
        let functions = Functions::new().map_err(query_error)?;
        let source = match self {
            ChangesFilter::Function { source, .. } => source,
            ChangesFilter::View { map } => map,
        };
        functions.compile("filter", source).map_err(query_error)?;
        docs.iter()
            .map(|doc| match doc {
                None => Ok(true),
                Some(doc) => self.passes(&functions, doc),
            })
            .collect::<Result<Vec<bool>, JsError>>()
            .map_err(query_error)
    }

    fn passes(&self, functions: &Functions, doc: &str) -> Result<bool, JsError> {
        match self {
            ChangesFilter::Function { req, .. } => functions.test("filter", &[doc, req]),
            // A map function that throws emits nothing for that document, as in a view.
            ChangesFilter::View { .. } => match functions.map("filter", doc) {
                Ok(emitted) => Ok(!emitted.is_empty()),
                Err(JsError::Threw(_)) => Ok(false),
                Err(other) => Err(other),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_filter_sees_the_query_and_a_view_filter_keeps_what_it_emits_for() {
        let query = [("parity".to_owned(), "1".to_owned())]
            .into_iter()
            .collect();
        let odd = ChangesFilter::function(
            "function (doc, req) { return doc.n % 2 === Number(req.query.parity); }",
            &query,
            "db",
            None,
            &[],
        );
        let docs = [
            Some(r#"{"n":1}"#.to_owned()),
            Some(r#"{"n":2}"#.to_owned()),
            None,
        ];
        assert_eq!(odd.keep(&docs).expect("runs"), [true, false, true]);
        let view = ChangesFilter::View {
            map: "function (doc) { if (doc.n > 1) emit(doc.n); }".into(),
        };
        assert_eq!(view.keep(&docs).expect("runs"), [false, true, true]);
        let throws = ChangesFilter::Function {
            source: "function (doc) { throw new Error('no'); }".into(),
            req: "{}".into(),
        };
        assert_eq!(throws.keep(&docs).expect_err("fails").error, "render_error");
    }
}
