//! records (the organisation store): the user is organisation `orga`'s bearer token, the other
//! user organisation `orgb`'s, both issued by the admin with `issueOrgToken`; the admin is the
//! platform's admin token. `Owner` functions act on the org they name (or the token's own): every
//! row names `orga`, so `orgb`'s token is refused with 403. A refusal is
//! `{"error": {"code": "FORBIDDEN", "message": …}}`.

use super::{Setup, WRONG_SECRET, vars};
use crate::authorization::{Context, Credential, Policy, Principal, Row};
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The user's organisation.
const USER_ORG: &str = "orga";
/// What only the user's document holds.
const SECRET: &str = "authz-secret-of-orga";
/// The other user's organisation.
const OTHER_ORG: &str = "orgb";

/// The class every fixture document is of (as in tests/schemathesis/records-schema.json).
fn class() -> Value {
    json!({"clazz": "Article", "sync": true, "pk": ["p1"],
        "collections": [{"name": "auteurs", "props": ["auteurs"], "list": true}, {"name": "auteur", "props": ["auteur"]}],
        "indexes": [{"name": "taille", "type": "int"}, {"name": "code", "type": "uniq"},
                    {"name": "isbn", "type": "uniq", "scope": "G"}, {"name": "tags", "type": "list"}]})
}

/// `POST /records/api/<function>` with `body`, held to `policy`.
fn function(name: &str, policy: Policy, body: &str) -> Row {
    Row::new("POST", format!("/records/api/{name}"), policy).json(body)
}

/// The table.
pub fn table() -> Vec<Row> {
    use Policy::{Admin, AnyUser, Owner};
    let declaration = class().to_string();
    vec![
        function(
            "getDoc",
            Owner,
            r#"{"org": "orga", "cl": "Article", "pk": "${pk}"}"#,
        ),
        function(
            "insertDoc",
            Owner,
            r#"{"org": "orga", "data": {"clazz": "Article", "p1": "authz-new", "taille": 1}}"#,
        ),
        function(
            "updateDoc",
            Owner,
            r#"{"org": "orga", "data": {"clazz": "Article", "p1": "authz-1", "taille": 2}, "v": ${v}}"#,
        ),
        function(
            "deleteDoc",
            Owner,
            r#"{"org": "orga", "cl": "Article", "pk": "${pk}"}"#,
        )
        .destroying(),
        function("listDocs", Owner, r#"{"org": "orga", "cl": "Article"}"#),
        function(
            "listDocsSk",
            Owner,
            r#"{"org": "orga", "cl": "Article", "ik": 1, "val": "ann"}"#,
        ),
        function(
            "listDocsIdx",
            Owner,
            r#"{"org": "orga", "cl": "Article", "ix": "taille", "comp": ">=", "val": 0}"#,
        ),
        function("getHdr", AnyUser, "{}"),
        function("insertHdr", Admin, r#"{"data": {"clazz": "Hdr"}}"#),
        function(
            "updateHdr",
            Admin,
            r#"{"data": {"clazz": "Hdr", "note": "x"}, "v": 1}"#,
        ),
        function("getOrg", Owner, r#"{"org": "orga"}"#),
        function(
            "insertOrg",
            Admin,
            r#"{"data": {"clazz": "Org", "org": "orgz"}}"#,
        ),
        function(
            "updateOrg",
            Admin,
            r#"{"data": {"clazz": "Org", "org": "orga"}, "v": 1}"#,
        ),
        function("listOrgs", Admin, "{}"),
        function(
            "listOrgsIdx",
            Admin,
            r#"{"ix": 0, "comp": ">=", "val": ""}"#,
        ),
        function(
            "operation",
            Owner,
            r#"{"org": "orga", "writes": [{"op": "insert", "data": {"clazz": "Article", "p1": "authz-op"}}]}"#,
        ),
        function("declareClass", Admin, &declaration),
        function("issueOrgToken", Admin, r#"{"org": "orgc"}"#),
        function("purgeAllDocs", Admin, r#"{"org": "orga", "cl": "Article"}"#).destroying(),
        function("purgeOrg", Admin, r#"{"org": "orga", "z": 1}"#),
        function("purgeOrgs", Admin, r#"{"z": 1}"#),
        function(
            "purgeDlvDocs",
            Admin,
            r#"{"org": "orga", "cl": "Article", "ix": "taille", "comp": "=", "val": 99}"#,
        ),
        function(
            "setFTP",
            Owner,
            r#"{"org": "orga", "path": "authz/one", "dp": 20300101}"#,
        ),
        function(
            "purgeFTP",
            Owner,
            r#"{"org": "orga", "path": "authz/fixture"}"#,
        ),
        function("listFTP", Admin, r#"{"dp": 20300101}"#),
        function("purgeAllFTP", Admin, r#"{"dp": 19700101}"#),
        function(
            "setTask",
            Owner,
            r#"{"org": "orga", "data": {"process": "authz", "pk": ["a"], "startTime": "99991231000000000"}}"#,
        ),
        function("nextTask", Admin, r#"{"time": "19700101000000000"}"#),
        function("exportOrg", Admin, r#"{"org": "orga"}"#),
        function("importOrg", Admin, r#"{"org": "orga", "docs": []}"#),
        function("rotateKey", Admin, "{}"),
        Row::new("GET", "/records/feed", Owner).query("cl=Article&org=orga"),
        // An operator's read of a document's history, data opened: the administrator's only.
        Row::new("GET", "/records/history/{org}/{clazz}/{pk}", Admin).query("version=1"),
        Row::new("GET", "/records/openapi.json", Policy::Public).undocumented(),
    ]
}

/// records' refusal: `{"error": {"code", "message"}}`.
fn refusal(_status: u16, body: &str) -> Result<(), String> {
    let value: Value = serde_json::from_str(body).map_err(|e| format!("not JSON: {e}"))?;
    match (
        value["error"]["code"].as_str(),
        value["error"]["message"].as_str(),
    ) {
        (Some(_), Some(message)) if !message.is_empty() => Ok(()),
        _ => Err("no error.code and error.message".to_owned()),
    }
}

async fn api(setup: &Setup<'_>, token: &str, name: &str, body: Value) -> Value {
    setup
        .ok(
            name,
            setup
                .request(reqwest::Method::POST, &format!("/records/api/{name}"))
                .bearer_auth(token)
                .json(&body),
        )
        .await["result"]
        .clone()
}

/// The class, both organisations' tokens, and one document and one FTP path of the user's org.
pub async fn context(app: &TestApp) -> Context {
    let setup = Setup::new(app);
    let admin = app.admin_token();
    api(&setup, &admin, "declareClass", class()).await;
    let token = |org: &'static str| {
        let setup = &setup;
        let admin = admin.clone();
        async move {
            api(setup, &admin, "issueOrgToken", json!({"org": org})).await["token"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        }
    };
    let user = token(USER_ORG).await;
    let other = token(OTHER_ORG).await;
    let doc = api(
        &setup,
        &user,
        "insertDoc",
        json!({"data": {"clazz": "Article", "p1": "authz-1", "taille": 1, "auteurs": ["ann"], "note": SECRET}}),
    )
    .await;
    api(
        &setup,
        &user,
        "setFTP",
        json!({"path": "authz/fixture", "dp": 20300101}),
    )
    .await;
    // The other org has a document of the same key: a refusal must not be its answer.
    api(
        &setup,
        &other,
        "insertDoc",
        json!({"data": {"clazz": "Article", "p1": "authz-1", "taille": 5}}),
    )
    .await;
    let credentials = HashMap::from([
        (
            Principal::Wrong,
            Credential::Bearer(WRONG_SECRET.to_owned()),
        ),
        (Principal::OtherUser, Credential::Bearer(other)),
        (Principal::User, Credential::Bearer(user)),
        (Principal::Admin, Credential::Bearer(admin)),
    ]);
    Context {
        name: "records",
        documents: vec!["/records/openapi.json"],
        rows: table(),
        credentials,
        roles: Vec::new(),
        vars: vars([
            ("pk", doc["pk"].as_str().unwrap_or_default().to_owned()),
            ("org", "orga".to_owned()),
            ("clazz", "Article".to_owned()),
            ("v", doc["v"].as_i64().unwrap_or_default().to_string()),
        ]),
        secret: Some(SECRET.to_owned()),
        refusal,
        allowed: super::any_answer,
    }
}
