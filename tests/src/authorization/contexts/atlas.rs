//! atlas (Ultimate History Map), as sec/atlas-auth makes it: users are issued bearer tokens by
//! the administrator (`PUT /atlas/admin/users/{user_id}` with roles `editor`, `reviewer`); the
//! published map's reads are public; the section workflow's reads need any user, its writes the
//! editor role, approve and reject the reviewer role; the acting user is the caller, so a body or
//! query naming another user is refused with 403, the admin's included (`Actor`); a reviewer
//! may not approve their own submission. The user is `ann` (editor and reviewer), the other
//! user `bob` (editor). A refusal is `{"error": …}`. See docs/authorization/atlas-auth.md.
//!
//! Everything that depends on how users are issued is in [`issue`] and [`context`], to adapt
//! when sec/atlas-auth lands.

use super::{Setup, WRONG_SECRET, error_message, vars};
use crate::authorization::{Context, Credential, Policy, Principal, Row};
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The user (editor and reviewer).
const USER: &str = "ann";
/// The other user (editor).
const OTHER: &str = "bob";

/// A snapshot the workflow accepts: one entity and one geometry linked to it, ids from `name`.
fn snapshot(name: &str) -> Value {
    let (entity, geometry) = (format!("{name}-e"), format!("{name}-g"));
    json!({
        "schema_version": 1,
        "editor_feature_collection": {"type": "FeatureCollection", "features": []},
        "entities": [{"operation": "create", "id": entity, "name": name, "slug": entity, "type_id": "country"}],
        "geometries": [{"operation": "create", "id": geometry, "type": "city",
            "draw_geometry": {"type": "Point", "coordinates": [105.85, 21.03]}}],
        "link_scopes": [{"geometry_id": geometry, "entity_ids": [entity]}]
    })
}

/// The table.
pub fn table() -> Vec<Row> {
    use Policy::{Actor, Admin, AnyUser, Public, Role};
    let commit = json!({"created_by": "${user}", "snapshot": snapshot("authz-row")}).to_string();
    vec![
        Row::new("GET", "/atlas/entities", Public),
        Row::new("GET", "/atlas/entities/search", Public).query("q=Authz"),
        Row::new("GET", "/atlas/entities/{id}", Public).param("id", "${entity}"),
        Row::new("GET", "/atlas/entities/{id}/history", Public).param("id", "${entity}"),
        Row::new("GET", "/atlas/geometries", Public)
            .query("minLng=100&minLat=10&maxLng=110&maxLat=30"),
        Row::new("GET", "/atlas/geometries/{id}/history", Public).param("id", "${geometry}"),
        Row::new("GET", "/atlas/sections", AnyUser),
        Row::new("POST", "/atlas/sections", Actor("editor"))
            .json(r#"{"title": "authz-new", "created_by": "${user}"}"#),
        Row::new("GET", "/atlas/sections/{id}", AnyUser).param("id", "${section}"),
        Row::new("GET", "/atlas/sections/{id}/editor", Actor("editor"))
            .param("id", "${section}")
            .query("user_id=${user}"),
        Row::new("POST", "/atlas/sections/{id}/lock", Actor("editor"))
            .param("id", "${section}")
            .json(r#"{"user_id": "${user}"}"#),
        Row::new("POST", "/atlas/sections/{id}/unlock", Actor("editor"))
            .param("id", "${section}")
            .json(r#"{"user_id": "${user}"}"#),
        Row::new("GET", "/atlas/sections/{id}/commits", AnyUser).param("id", "${section}"),
        Row::new("POST", "/atlas/sections/{id}/commits", Actor("editor"))
            .param("id", "${section}")
            .json(&commit),
        Row::new("POST", "/atlas/sections/{id}/restore", Actor("editor"))
            .param("id", "${section}")
            .json(r#"{"commit_id": "${commit}", "created_by": "${user}"}"#),
        Row::new("POST", "/atlas/sections/{id}/submit", Actor("editor"))
            .param("id", "${section}")
            .json(r#"{"submitted_by": "${user}"}"#),
        Row::new("GET", "/atlas/sections/{id}/submissions", AnyUser).param("id", "${section}"),
        // bob's submission: a reviewer may not approve their own (four eyes).
        Row::new("POST", "/atlas/submissions/{id}/approve", Role("reviewer"))
            .param("id", "${submission}")
            .json("{}"),
        Row::new("POST", "/atlas/submissions/{id}/reject", Role("reviewer"))
            .param("id", "${submission}")
            .json("{}"),
        Row::new("GET", "/atlas/admin/users", Admin),
        Row::new("PUT", "/atlas/admin/users/{user_id}", Admin)
            .param("user_id", "authz-carol")
            .json(r#"{"roles": ["editor"]}"#),
        Row::new("DELETE", "/atlas/admin/users/{user_id}", Admin).param("user_id", "${user}"),
        Row::new("GET", "/atlas/openapi.json", Public).undocumented(),
    ]
}

/// Issues `user` a token with `roles` (the administrator); answers the token.
async fn issue(setup: &Setup<'_>, admin: &str, user: &str, roles: &[&str]) -> String {
    let answer = setup
        .ok(
            "atlas user",
            setup
                .request(reqwest::Method::PUT, &format!("/atlas/admin/users/{user}"))
                .bearer_auth(admin)
                .json(&json!({ "roles": roles })),
        )
        .await;
    answer["token"].as_str().unwrap_or_default().to_owned()
}

/// A request as `token`, answering JSON.
async fn post(setup: &Setup<'_>, token: &str, path: &str, body: Value) -> Value {
    setup
        .ok(
            path,
            setup
                .request(reqwest::Method::POST, path)
                .bearer_auth(token)
                .json(&body),
        )
        .await
}

/// Starts section `title` as `token`: created, locked, `snapshot(name)` committed; answers the
/// section's and the commit's ids.
async fn start(setup: &Setup<'_>, token: &str, title: &str) -> (String, String) {
    let section = post(setup, token, "/atlas/sections", json!({ "title": title })).await;
    let section = section["id"].as_str().unwrap_or_default().to_owned();
    post(
        setup,
        token,
        &format!("/atlas/sections/{section}/lock"),
        json!({}),
    )
    .await;
    let committed = post(
        setup,
        token,
        &format!("/atlas/sections/{section}/commits"),
        json!({ "snapshot": snapshot(title) }),
    )
    .await;
    let commit = committed["commit"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (section, commit)
}

/// Submits `section` as `token`; answers the submission's id.
async fn submit(setup: &Setup<'_>, token: &str, section: &str) -> String {
    let submitted = post(
        setup,
        token,
        &format!("/atlas/sections/{section}/submit"),
        json!({}),
    )
    .await;
    submitted["submission"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A first section of ann's approved by the admin (the published entity and geometry); ann's
/// section being edited (locked by her, with a commit); bob's section submitted for review (a
/// reviewer approves another's submission only); the tokens of both.
pub async fn context(app: &TestApp) -> Context {
    let setup = Setup::new(app);
    let admin = app.admin_token();
    let user = issue(&setup, &admin, USER, &["editor", "reviewer"]).await;
    let other = issue(&setup, &admin, OTHER, &["editor"]).await;

    let (published, _) = start(&setup, &user, "authz-published").await;
    let first = submit(&setup, &user, &published).await;
    post(
        &setup,
        &admin,
        &format!("/atlas/submissions/{first}/approve"),
        json!({}),
    )
    .await;
    let (section, commit) = start(&setup, &user, "authz").await;
    let (bobs, _) = start(&setup, &other, "authz-bob").await;
    let submission = submit(&setup, &other, &bobs).await;

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
        name: "atlas",
        documents: vec!["/atlas/openapi.json"],
        rows: table(),
        credentials,
        roles: vec![
            (Principal::User, "editor"),
            (Principal::User, "reviewer"),
            (Principal::OtherUser, "editor"),
        ],
        vars: vars([
            ("user", USER.to_owned()),
            ("section", section),
            ("commit", commit),
            ("submission", submission),
            ("entity", "authz-published-e".to_owned()),
            ("geometry", "authz-published-g".to_owned()),
        ]),
        secret: None,
        refusal: error_message,
        allowed: super::any_answer,
    }
}
