//! docs (Sync Gateway behind CouchDB's API), as sec/docs-access and sec/docs-revisions make it:
//! the admin made database `authz` with a sync function that keeps each document to its
//! `owner` (`requireUser` of the existing document's owner, or of a new one's) and puts it in its
//! `channels`; the user is Sync Gateway user `ann`
//! (channel `ch-ann`), the other user `bob` (channel `ch-bob`), both with HTTP Basic passwords;
//! the admin is the admin token as CouchDB clients send it, Basic `admin:<token>` (the fixtures
//! use it as a bearer token, the other form). Database create, delete and list, `_design/`
//! writes and the whole `/_admin` API are the admin's; a document, its revisions and its
//! attachments are readable only through their channels and writable only by their owner; the
//! feeds and bulk reads answer any user, filtered to its channels (no answer to bob may hold
//! ann's secret). A refusal is CouchDB's `{"error", "reason"}`.
//!
//! The wrong credential is a wrong bearer token, not a wrong password: wrong passwords are
//! throttled per address (issue #25), and hundreds of them would hold every later login.

use super::{Setup, WRONG_SECRET, vars};
use crate::authorization::{Context, Credential, Policy, Principal, Row};
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The database.
const DB: &str = "authz";
/// The user, their password and channel.
const USER: (&str, &str, &str) = ("ann", "ann-password-1", "ch-ann");
/// The other user, their password and channel.
const OTHER: (&str, &str, &str) = ("bob", "bob-password-1", "ch-bob");
/// What only the user's document holds.
const SECRET: &str = "authz-secret-of-ann";
/// The sync function: a document is its owner's, in its channels.
const SYNC: &str = "function (doc, oldDoc) { if (oldDoc) { requireUser(oldDoc.owner); } else { requireUser(doc.owner); } channel(doc.channels); }";

/// The revision id of a grafted branch with no common ancestor.
const GRAFT: &str = "0123456789abcdef0123456789abcdef";
/// A document body of the user's, as rows send it.
const OWNED: &str = r#""owner": "${user}", "channels": ["${channel}"]"#;

/// The table. `DELETE /docs/{db}` is last: it removes everything the destroying rows before it
/// still use.
pub fn table() -> Vec<Row> {
    use Policy::{Admin, AnyUser, Owner, Public};
    let admin = |tail: &str| format!("/docs/_admin/{{db}}{tail}");
    let db = |tail: &str| format!("/docs/{{db}}{tail}");
    vec![
        Row::new("GET", "/docs/", Public),
        Row::new("GET", "/docs/openapi.json", Public),
        Row::new("GET", "/docs/_all_dbs", Admin),
        Row::new("PUT", db(""), Admin).param("db", "authz-created"),
        Row::new("GET", db(""), AnyUser),
        Row::new("POST", db(""), Owner).json(&format!(r#"{{"_id": "authz-posted", {OWNED}}}"#)),
        Row::new("GET", db("/_all_docs"), AnyUser).query("include_docs=true"),
        Row::new("POST", db("/_all_docs"), AnyUser)
            .query("include_docs=true")
            .json(r#"{"keys": ["${doc}"]}"#),
        // A replicated branch with no common ancestor grafted onto the user's document (issue
        // #25, defect 3): the sync function must meet it with the current winner as oldDoc, so
        // only ann (or the admin) may; without the fix bob, naming himself owner, takes it over.
        // The branch stays in ann's channel too, so her allowed graft leaves her document
        // readable to her for the rows after it.
        Row::new("POST", db("/_bulk_docs"), Owner)
            .json(&format!(
                r#"{{"new_edits": false, "docs": [{{"_id": "${{doc}}", "_rev": "9-{GRAFT}", "_revisions": {{"start": 9, "ids": ["{GRAFT}"]}}, "owner": "${{other}}", "channels": ["${{channel}}", "${{other_channel}}"], "grafted": true}}]}}"#
            ))
            .refuses_in_body("\"forbidden\""),
        Row::new("POST", db("/_bulk_get"), AnyUser)
            .query("revs=true")
            .json(r#"{"docs": [{"id": "${doc}"}, {"id": "${doc}", "rev": "${rev}"}]}"#),
        Row::new("GET", db("/_changes"), AnyUser).query("include_docs=true&style=all_docs"),
        Row::new("POST", db("/_changes"), AnyUser)
            .query("include_docs=true")
            .json("{}"),
        Row::new("GET", db("/_design/{ddoc}"), Admin),
        // A view answers any user, over the documents that user may read (decision 0032).
        Row::new("GET", db("/_design/{ddoc}/_view/{view}"), AnyUser).query("reduce=false"),
        Row::new("POST", db("/_design/{ddoc}/_view/{view}"), AnyUser)
            .json(r#"{"keys": ["${user}"]}"#),
        Row::new("PUT", db("/_design/{ddoc}"), Admin).json(r#"{"views": {}}"#),
        Row::new("DELETE", db("/_design/{ddoc}"), Admin).query("rev=${ddoc_rev}"),
        Row::new("POST", db("/_ensure_full_commit"), AnyUser),
        Row::new("POST", db("/_compact"), Admin),
        Row::new("GET", db("/_local/{id}"), AnyUser),
        Row::new("PUT", db("/_local/{id}"), AnyUser).json(r#"{"checkpoint": 2}"#),
        Row::new("DELETE", db("/_local/{id}"), AnyUser),
        Row::new("POST", db("/_revs_diff"), AnyUser)
            .json(r#"{"${doc}": ["${rev}", "9-ffffffffffffffffffffffffffffffff"]}"#),
        // Sync Gateway answers 401 "Login required" on every route of a database whose guest
        // is disabled, its `_session` GET included (only the login and logout are open).
        Row::new("GET", db("/_session"), AnyUser),
        Row::new("POST", db("/_session"), Public)
            .json(r#"{"name": "${user}", "password": "${password}"}"#),
        Row::new("DELETE", db("/_session"), Public),
        Row::new("GET", db("/{doc}"), Owner).query("revs=true&open_revs=all"),
        Row::new("PUT", db("/{doc}"), Owner).json(&format!(
            r#"{{"_rev": "${{rev}}", {OWNED}, "edited": true}}"#
        )),
        Row::new("DELETE", db("/{doc}"), Owner).query("rev=${rev}"),
        Row::new("GET", db("/{doc}/{name}"), Owner),
        Row::new("PUT", db("/{doc}/{name}"), Owner)
            .query("rev=${rev}")
            .body("text/plain", "replaced"),
        Row::new("DELETE", db("/{doc}/{name}"), Owner).query("rev=${rev}"),
        Row::new("PUT", "/docs/_admin/{db}", Admin)
            .param("db", "authz-admin-created")
            .json("{}"),
        Row::new("PUT", "/docs/_admin/{db}/", Admin)
            .param("db", "authz-admin-slash")
            .json("{}"),
        Row::new("POST", admin("/_compact"), Admin),
        Row::new("GET", admin("/_config/sync"), Admin),
        Row::new("PUT", admin("/_config/sync"), Admin).body("application/javascript", SYNC),
        Row::new("DELETE", admin("/_config/sync"), Admin),
        Row::new("POST", admin("/_purge"), Admin)
            .json(r#"{"${doc}": ["${rev}"]}"#)
            .destroying(),
        Row::new("GET", admin("/_raw/{doc}"), Admin),
        Row::new("POST", admin("/_resync"), Admin),
        Row::new("GET", admin("/_revtree/{doc}"), Admin),
        Row::new("GET", admin("/_role/"), Admin),
        Row::new("GET", admin("/_role/{name}"), Admin).param("name", "authz-role"),
        Row::new("PUT", admin("/_role/{name}"), Admin)
            .param("name", "authz-role")
            .json(r#"{"admin_channels": ["ch-role"]}"#),
        Row::new("DELETE", admin("/_role/{name}"), Admin).param("name", "authz-role"),
        Row::new("POST", admin("/_session"), Admin).json(r#"{"name": "${user}"}"#),
        Row::new("GET", admin("/_user/"), Admin),
        Row::new("GET", admin("/_user/{name}"), Admin).param("name", "${user}"),
        // Another user than ann: a new password for ann would end her logins mid-walk.
        Row::new("PUT", admin("/_user/{name}"), Admin)
            .param("name", "authz-carol")
            .json(r#"{"password": "carol-password-1", "admin_channels": ["ch-carol"]}"#),
        Row::new("DELETE", admin("/_user/{name}"), Admin).param("name", "authz-carol"),
        Row::new("DELETE", db(""), Admin),
    ]
}

/// CouchDB's refusal: `{"error": …, "reason": …}`.
fn refusal(_status: u16, body: &str) -> Result<(), String> {
    let value: Value = serde_json::from_str(body).map_err(|e| format!("not JSON: {e}"))?;
    match (value["error"].as_str(), value["reason"].as_str()) {
        (Some(_), Some(_)) => Ok(()),
        _ => Err("not CouchDB's {error, reason}".to_owned()),
    }
}

/// Sends `body` to `path` with `request`'s credential; answers JSON.
async fn put(setup: &Setup<'_>, request: reqwest::RequestBuilder, what: &str) -> Value {
    setup.ok(what, request).await
}

/// Database `authz` with its sync function, users ann and bob, ann's document (with an
/// attachment and her secret), `_local` checkpoint and `_design` document, bob's own document,
/// and a role.
pub async fn context(app: &TestApp) -> Context {
    use reqwest::Method;
    let setup = Setup::new(app);
    let admin = app.admin_token();
    let as_admin = |method: Method, path: &str| setup.request(method, path).bearer_auth(&admin);
    put(
        &setup,
        as_admin(Method::PUT, &format!("/docs/_admin/{DB}")).json(&json!({})),
        "database",
    )
    .await;
    put(
        &setup,
        as_admin(Method::PUT, &format!("/docs/_admin/{DB}/_config/sync"))
            .header("content-type", "application/javascript")
            .body(SYNC),
        "sync function",
    )
    .await;
    for (name, password, channel) in [USER, OTHER] {
        put(
            &setup,
            as_admin(Method::PUT, &format!("/docs/_admin/{DB}/_user/{name}"))
                .json(&json!({"password": password, "admin_channels": [channel]})),
            "user",
        )
        .await;
    }
    put(
        &setup,
        as_admin(Method::PUT, &format!("/docs/_admin/{DB}/_role/authz-role"))
            .json(&json!({"admin_channels": ["ch-role"]})),
        "role",
    )
    .await;
    let design = put(
        &setup,
        as_admin(Method::PUT, &format!("/docs/{DB}/_design/authz")).json(&json!({"views": {
            "owners": {"map": "function (doc) { emit(doc.owner, 1); }", "reduce": "_count"}
        }})),
        "design document",
    )
    .await;
    let ddoc_rev = design["rev"].as_str().unwrap_or_default().to_owned();
    let as_user =
        |method: Method, path: &str| setup.request(method, path).basic_auth(USER.0, Some(USER.1));
    let doc = "doc-ann";
    let created = put(
        &setup,
        as_user(Method::PUT, &format!("/docs/{DB}/{doc}"))
            .json(&json!({"owner": USER.0, "channels": [USER.2], "secret": SECRET})),
        "document",
    )
    .await;
    let first = created["rev"].as_str().unwrap_or_default();
    let attached = put(
        &setup,
        as_user(
            Method::PUT,
            &format!("/docs/{DB}/{doc}/note.txt?rev={first}"),
        )
        .header("content-type", "text/plain")
        .body(format!("attachment {SECRET}")),
        "attachment",
    )
    .await;
    let rev = attached["rev"].as_str().unwrap_or_default().to_owned();
    put(
        &setup,
        as_user(Method::PUT, &format!("/docs/{DB}/_local/authz-local"))
            .json(&json!({"checkpoint": 1})),
        "local document",
    )
    .await;
    put(
        &setup,
        setup
            .request(Method::PUT, &format!("/docs/{DB}/doc-bob"))
            .basic_auth(OTHER.0, Some(OTHER.1))
            .json(&json!({"owner": OTHER.0, "channels": [OTHER.2]})),
        "other user's document",
    )
    .await;

    let basic = |(name, password, _): (&str, &str, &str)| Credential::Basic {
        user: name.to_owned(),
        password: password.to_owned(),
    };
    let credentials = HashMap::from([
        (
            Principal::Wrong,
            Credential::Bearer(WRONG_SECRET.to_owned()),
        ),
        (Principal::OtherUser, basic(OTHER)),
        (Principal::User, basic(USER)),
        (
            Principal::Admin,
            Credential::Basic {
                user: "admin".to_owned(),
                password: admin.clone(),
            },
        ),
    ]);
    Context {
        name: "docs",
        documents: vec!["/docs/openapi.json"],
        rows: table(),
        credentials,
        roles: Vec::new(),
        vars: vars([
            ("db", DB.to_owned()),
            ("doc", doc.to_owned()),
            ("rev", rev),
            ("name", "note.txt".to_owned()),
            ("ddoc", "authz".to_owned()),
            ("view", "owners".to_owned()),
            ("ddoc_rev", ddoc_rev),
            ("id", "authz-local".to_owned()),
            ("user", USER.0.to_owned()),
            ("password", USER.1.to_owned()),
            ("channel", USER.2.to_owned()),
            ("other", OTHER.0.to_owned()),
            ("other_channel", OTHER.2.to_owned()),
        ]),
        secret: Some(SECRET.to_owned()),
        refusal,
        allowed: super::any_answer,
    }
}
