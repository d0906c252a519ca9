//! resources (MindTouch Deki), as sec/resources-auth makes it: API keys in
//! `resources-keys.json` name a user id (the user is 10, the other user 11); the admin token is
//! Deki's admin. Pages and files are public to read; a file (its revisions, name, place,
//! description and properties) is written by its creator or the admin; anyone with a key may add
//! a file or a property to a page, and a page's property is changed by its creator; a user's
//! properties are that user's and the admin's, to read as to write; the site's properties,
//! hiding revisions and the archive are the admin's. A refusal is `{"error": …}`.
//!
//! How keys are given ([`KEYS_FILE`], [`keys`]) and the objects made ([`context`]) are kept here
//! alone, to adapt when sec/resources-auth lands.

use super::{Setup, WRONG_SECRET, error_message, vars};
use crate::authorization::{Context, Credential, Policy, Principal, Row};
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The file in the data folder that holds the API keys (written before the app starts).
pub const KEYS_FILE: &str = "resources-keys.json";
/// The user's key and id.
const USER_KEY: &str = "authz-user-key-0123456789abcdef0123456789";
const USER_ID: i64 = 10;
/// The other user's key and id.
const OTHER_KEY: &str = "authz-other-key-0123456789abcdef012345678";
const OTHER_ID: i64 = 11;
/// What only the user's own properties hold (pages and files are public).
const SECRET: &str = "authz-secret-of-user-10";
/// The page the user's objects hang on.
const PAGE: &str = "5";
/// Where the API is served.
const API: &str = "/resources/@api/deki";

/// The keys file's content: the user's and the other user's keys.
pub fn keys() -> String {
    json!({ USER_KEY: {"user_id": USER_ID}, OTHER_KEY: {"user_id": OTHER_ID} }).to_string()
}

/// The property routes of one parent (`/pages/{pageid}` …): reads, a new property (`Slug`),
/// a batch, and one property, each with its policy.
fn properties(parent: &str, read: Policy, create: Policy, change: Policy) -> Vec<Row> {
    let path = |tail: &str| format!("{API}{parent}/properties{tail}");
    vec![
        Row::new("GET", path(""), read),
        Row::new("POST", path(""), create)
            .header("Slug", "authz-new")
            .body("text/plain", "new"),
        Row::new("PUT", path(""), change)
            .query("abort=never")
            .json(r#"{"property": {"@name": "${property}", "contents": "batched"}}"#),
        Row::new("GET", path("/{key}"), read).param("key", "${property}"),
        Row::new("PUT", path("/{key}"), change)
            .param("key", "${property}")
            .query("abort=never")
            .body("text/plain", "changed"),
        Row::new("DELETE", path("/{key}"), change).param("key", "${property}"),
        Row::new("GET", path("/{key}/info"), read).param("key", "${property}"),
    ]
}

/// The table.
pub fn table() -> Vec<Row> {
    use Policy::{Admin, AnyUser, Owner, Public};
    let file = |tail: &str| format!("{API}/files/{{fileid}}{tail}");
    let mut rows = vec![
        Row::new("GET", format!("{API}/pages/{{pageid}}/files"), Public),
        Row::new(
            "GET",
            format!("{API}/pages/{{pageid}}/files/{{filename}}"),
            Public,
        ),
        Row::new(
            "PUT",
            format!("{API}/pages/{{pageid}}/files/{{filename}}"),
            Owner,
        )
        .body("text/plain", "second revision"),
        Row::new(
            "DELETE",
            format!("{API}/pages/{{pageid}}/files/{{filename}}"),
            Owner,
        ),
        Row::new("GET", file(""), Public),
        Row::new("PUT", file(""), Owner).body("text/plain", "third revision"),
        Row::new("DELETE", file(""), Owner),
        Row::new("GET", file("/info"), Public),
        Row::new("GET", file("/revisions"), Public),
        Row::new("POST", file("/revisions"), Admin).query("hide=true&revisionids=1"),
        Row::new("POST", file("/move"), Owner)
            .query("name=authz-renamed.txt")
            .destroying(),
        Row::new("PUT", file("/description"), Owner).body("text/plain", "described"),
        Row::new("DELETE", file("/description"), Owner),
        Row::new("GET", format!("{API}/archive/files"), Admin),
        Row::new(
            "POST",
            format!("{API}/archive/files/restore/{{fileid}}"),
            Admin,
        )
        .param("fileid", "${archived}"),
        Row::new("DELETE", format!("{API}/archive/files/{{fileid}}"), Admin)
            .param("fileid", "${archived}"),
        Row::new("GET", "/resources/openapi.json", Public).undocumented(),
    ];
    rows.extend(properties("/pages/{pageid}", Public, AnyUser, Owner));
    rows.extend(properties("/files/{fileid}", Public, Owner, Owner));
    rows.extend(properties("/users/{userid}", Owner, Owner, Owner));
    rows.extend(properties("/site", Admin, Admin, Admin));
    rows
}

/// A request with `key`, answering JSON.
async fn send(
    setup: &Setup<'_>,
    key: &str,
    method: reqwest::Method,
    path: &str,
    body: &str,
) -> Value {
    setup
        .ok(
            path,
            setup
                .request(method, &format!("{API}{path}"))
                .bearer_auth(key)
                .header("content-type", "text/plain")
                .body(body.to_owned()),
        )
        .await
}

/// The user's file (with a description and a property) and property on page 5, on user 10 and
/// (the admin's) on the site, a deleted file in the archive; the other user's own file and
/// property. The app must have been started with [`keys`] in [`KEYS_FILE`].
pub async fn context(app: &TestApp) -> Context {
    use reqwest::Method;
    let setup = Setup::new(app);
    let admin = app.admin_token();
    let uploaded = send(
        &setup,
        USER_KEY,
        Method::PUT,
        &format!("/pages/{PAGE}/files/authz.txt"),
        "first",
    )
    .await;
    let file = uploaded["@id"].as_str().unwrap_or_default().to_owned();
    send(
        &setup,
        USER_KEY,
        Method::PUT,
        &format!("/files/{file}/description"),
        "mine",
    )
    .await;
    let property = "authz-prop";
    for parent in [format!("/pages/{PAGE}"), format!("/files/{file}")] {
        send(
            &setup,
            USER_KEY,
            Method::PUT,
            &format!("{parent}/properties/{property}"),
            "v",
        )
        .await;
    }
    let mine = format!("/users/{USER_ID}/properties/{property}");
    send(&setup, USER_KEY, Method::PUT, &mine, SECRET).await;
    send(
        &setup,
        &admin,
        Method::PUT,
        &format!("/site/properties/{property}"),
        "v",
    )
    .await;
    let old = send(
        &setup,
        USER_KEY,
        Method::PUT,
        &format!("/pages/{PAGE}/files/authz-old.txt"),
        "old",
    )
    .await;
    let archived = old["@id"].as_str().unwrap_or_default().to_owned();
    send(
        &setup,
        USER_KEY,
        Method::DELETE,
        &format!("/files/{archived}"),
        "",
    )
    .await;
    send(
        &setup,
        OTHER_KEY,
        Method::PUT,
        "/pages/6/files/bob.txt",
        "bob's",
    )
    .await;
    send(
        &setup,
        OTHER_KEY,
        Method::PUT,
        &format!("/users/{OTHER_ID}/properties/{property}"),
        "bob's",
    )
    .await;

    let credentials = HashMap::from([
        (
            Principal::Wrong,
            Credential::Bearer(WRONG_SECRET.to_owned()),
        ),
        (
            Principal::OtherUser,
            Credential::Bearer(OTHER_KEY.to_owned()),
        ),
        (Principal::User, Credential::Bearer(USER_KEY.to_owned())),
        (Principal::Admin, Credential::Bearer(admin)),
    ]);
    Context {
        name: "resources",
        documents: vec!["/resources/openapi.json"],
        rows: table(),
        credentials,
        roles: Vec::new(),
        vars: vars([
            ("pageid", PAGE.to_owned()),
            ("filename", "authz.txt".to_owned()),
            ("fileid", file),
            ("userid", USER_ID.to_string()),
            ("property", property.to_owned()),
            ("archived", archived),
        ]),
        secret: Some(SECRET.to_owned()),
        refusal: error_message,
        allowed: super::any_answer,
    }
}
