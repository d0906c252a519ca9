//! The platform's own routes: `/v1` (the log, streams and chain audit: admin bearer token only),
//! `/v1/log` (the signed tree's key, heads and proofs: public), the events' contract
//! (`/v1/schemas`, `/v1/asyncapi.json`: public), the console's pages (public) and the health
//! routes (public). Only the admin routes have an OpenAPI document (`/v1/openapi.json`), so this
//! table is their inventory. The admin API has no users: the "user" here is a valid credential of another kind
//! (records organisation `orga`'s bearer token), which must not open it; a refusal is
//! `{"error": …}` with status 401.

use super::{Setup, WRONG_SECRET, error_message, vars};
use crate::authorization::{Context, Credential, Policy, Principal, Row};
use palimpsest_testkit::TestApp;
use serde_json::json;
use std::collections::HashMap;

/// The table.
pub fn table() -> Vec<Row> {
    vec![
        Row::new("GET", "/v1/events", Policy::Admin).query("after=0&limit=5"),
        Row::new("GET", "/v1/head", Policy::Admin),
        Row::new("GET", "/v1/streams", Policy::Admin).query("prefix=records/&limit=5"),
        Row::new(
            "GET",
            "/v1/streams/{context}/{category}/{key}",
            Policy::Admin,
        ),
        Row::new("GET", "/v1/audit/verify", Policy::Admin),
        Row::new("GET", "/v1/operations", Policy::Admin),
        Row::new("GET", "/v1/state/{context}/{category}/{key}", Policy::Admin),
        // What the routes are, not what they hold; the console's pages hold no data either
        // (they read it from the routes above with the admin token).
        Row::new("GET", "/v1/openapi.json", Policy::Public),
        Row::new("GET", "/console/", Policy::Public),
        // The log's tree: public, like a Certificate Transparency log (decision 0024).
        Row::new("GET", "/v1/log/key", Policy::Public),
        Row::new("GET", "/v1/log/head", Policy::Public),
        Row::new("GET", "/v1/log/proof/inclusion", Policy::Public).query("position=1&tree_size=1"),
        Row::new("GET", "/v1/log/proof/consistency", Policy::Public).query("from=1&to=1"),
        Row::new("GET", "/v1/log/batches", Policy::Public).query("from=1&to=5"),
        // The events' contract (JSON Schemas, AsyncAPI): public, like the published docs.
        Row::new("GET", "/v1/schemas", Policy::Public),
        Row::new("GET", "/v1/schemas/{schema}", Policy::Public),
        Row::new("GET", "/v1/asyncapi.json", Policy::Public),
        Row::new("GET", "/healthz", Policy::Public),
        Row::new("GET", "/readyz", Policy::Public),
        Row::new("GET", "/metrics", Policy::Public),
    ]
    .into_iter()
    .map(Row::undocumented)
    .collect()
}

/// The admin token, and a records org token as a valid credential that is not the admin's.
pub async fn context(app: &TestApp) -> Context {
    let setup = Setup::new(app);
    let admin = app.admin_token();
    let issued = setup
        .ok(
            "issueOrgToken",
            setup
                .request(reqwest::Method::POST, "/records/api/issueOrgToken")
                .bearer_auth(&admin)
                .json(&json!({"org": "orga"})),
        )
        .await;
    let org_token = issued["result"]["token"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let credentials = HashMap::from([
        (
            Principal::Wrong,
            Credential::Bearer(WRONG_SECRET.to_owned()),
        ),
        (Principal::User, Credential::Bearer(org_token)),
        (Principal::Admin, Credential::Bearer(admin)),
    ]);
    Context {
        name: "v1",
        documents: Vec::new(),
        rows: table(),
        credentials,
        roles: Vec::new(),
        vars: vars([
            ("context", "records".to_owned()),
            ("category", "token".to_owned()),
            ("key", "orga".to_owned()),
            ("schema", "envelope.v1.json".to_owned()),
        ]),
        secret: None,
        refusal: error_message,
        allowed: super::any_answer,
    }
}
