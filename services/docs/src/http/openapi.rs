//! `GET /docs/openapi.json`: the OpenAPI 3 description of what this context serves, kept in
//! `openapi.json` beside this file (a test checks it parses and names every route).

use axum::Json;
use serde_json::Value;

/// The document's text.
const TEXT: &str = include_str!("openapi.json");

/// The document, every write operation documented with the platform's `Idempotency-Key`.
pub async fn document() -> Json<Value> {
    match serde_json::from_str(TEXT) {
        Ok(value) => Json(palimpsest_web::command::document_commands(value)),
        Err(e) => {
            tracing::error!(error = %e, "openapi.json does not parse");
            Json(Value::Null)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_parses_and_names_every_route() {
        let doc: Value = serde_json::from_str(TEXT).expect("openapi.json parses");
        let paths = doc["paths"].as_object().expect("paths");
        for route in [
            "/",
            "/_all_dbs",
            "/{db}",
            "/{db}/_bulk_docs",
            "/{db}/_bulk_get",
            "/{db}/_revs_diff",
            "/{db}/_all_docs",
            "/{db}/_changes",
            "/{db}/_ensure_full_commit",
            "/{db}/_local/{id}",
            "/{db}/_design/{ddoc}",
            "/{db}/_design/{ddoc}/_view/{view}",
            "/{db}/{doc}",
            "/{db}/{doc}/{name}",
            "/_admin/{db}",
            "/_admin/{db}/",
            "/{db}/_compact",
            "/_admin/{db}/_config/sync",
            "/_admin/{db}/_raw/{doc}",
            "/_admin/{db}/_revtree/{doc}",
            "/openapi.json",
            "/_admin/{db}/_user/",
            "/_admin/{db}/_user/{name}",
            "/_admin/{db}/_role/",
            "/_admin/{db}/_role/{name}",
            "/_admin/{db}/_purge",
            "/_admin/{db}/_resync",
        ] {
            assert!(paths.contains_key(route), "{route} is not documented");
        }
    }

    #[tokio::test]
    async fn writes_are_documented_with_the_idempotency_key() {
        let Json(doc) = document().await;
        let put = &doc["paths"]["/{db}/{doc}"]["put"];
        let names: Vec<&str> = put["parameters"]
            .as_array()
            .expect("parameters")
            .iter()
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert!(names.contains(&"Idempotency-Key"), "{names:?}");
        assert!(put["responses"]["422"].is_object());
    }
}
