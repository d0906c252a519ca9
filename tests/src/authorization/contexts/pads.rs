//! pads (Etherpad): the HTTP API has one credential, the API key; its holder is Etherpad's
//! administrator and may call every function (Etherpad has no other HTTP principal: authors and
//! sessions matter to its editor socket, not to the API). So the user and the other user are
//! absent here, every function is `Admin`, and a refusal is Etherpad's envelope `{"code": 4,
//! "message": "no or wrong API Key", "data": null}` with status 401.

use super::{Setup, WRONG_SECRET, vars};
use crate::authorization::{Context, Credential, Policy, Principal, Row};
use palimpsest_testkit::TestApp;
use serde_json::Value;
use std::collections::HashMap;

/// Where the functions are served (the document's server).
const API: &str = "/pads/api/1.3.0";

/// Every function of the document with the query that tries it on the fixture pad, group,
/// author and session, and whether it removes one of them.
const FUNCTIONS: &[(&str, &str, bool)] = &[
    ("createGroup", "", false),
    (
        "createGroupIfNotExistsFor",
        "groupMapper=authz-mapper",
        false,
    ),
    ("deleteGroup", "groupID=${group}", true),
    ("listPads", "groupID=${group}", false),
    ("createPad", "padID=authz-created&text=x", false),
    (
        "createGroupPad",
        "groupID=${group}&padName=authz-gp&text=x",
        false,
    ),
    ("createAuthor", "name=ann", false),
    (
        "createAuthorIfNotExistsFor",
        "authorMapper=authz-am&name=ann",
        false,
    ),
    ("listPadsOfAuthor", "authorID=${author}", false),
    (
        "createSession",
        "groupID=${group}&authorID=${author}&validUntil=4102444800",
        false,
    ),
    ("deleteSession", "sessionID=${session}", true),
    ("getSessionInfo", "sessionID=${session}", false),
    ("listSessionsOfGroup", "groupID=${group}", false),
    ("listSessionsOfAuthor", "authorID=${author}", false),
    ("getText", "padID=${pad}", false),
    ("setText", "padID=${pad}&text=replaced", false),
    ("getHTML", "padID=${pad}", false),
    ("setHTML", "padID=${pad}&html=%3Cp%3Ehi%3C%2Fp%3E", false),
    ("getRevisionsCount", "padID=${pad}", false),
    ("getLastEdited", "padID=${pad}", false),
    ("deletePad", "padID=${pad}", true),
    ("getReadOnlyID", "padID=${pad}", false),
    ("setPublicStatus", "padID=${pad}&publicStatus=true", false),
    ("getPublicStatus", "padID=${pad}", false),
    ("listAuthorsOfPad", "padID=${pad}", false),
    ("padUsersCount", "padID=${pad}", false),
    ("getAuthorName", "authorID=${author}", false),
    ("padUsers", "padID=${pad}", false),
    ("sendClientsMessage", "padID=${pad}&msg=hi", false),
    ("listAllGroups", "", false),
    ("checkToken", "", false),
    ("listAllPads", "", false),
    ("createDiffHTML", "padID=${pad}&startRev=0&endRev=1", false),
    ("getChatHistory", "padID=${pad}", false),
    ("getChatHead", "padID=${pad}", false),
    ("getAttributePool", "padID=${pad}", false),
    ("getRevisionChangeset", "padID=${pad}&rev=0", false),
    (
        "copyPad",
        "sourceID=${pad}&destinationID=authz-copy&force=true",
        false,
    ),
    (
        "movePad",
        "sourceID=${pad}&destinationID=authz-moved&force=true",
        true,
    ),
    ("getPadID", "roID=${readonly}", false),
    ("getSavedRevisionsCount", "padID=${pad}", false),
    ("listSavedRevisions", "padID=${pad}", false),
    ("saveRevision", "padID=${pad}&rev=0", false),
    ("restoreRevision", "padID=${pad}&rev=0", false),
    (
        "appendChatMessage",
        "padID=${pad}&text=hi&authorID=${author}&time=1",
        false,
    ),
    ("appendText", "padID=${pad}&text=more", false),
    ("getStats", "", false),
    (
        "copyPadWithoutHistory",
        "sourceID=${pad}&destinationID=authz-copy2&force=true",
        false,
    ),
];

/// The table: every function by GET and POST (the document has both), Etherpad's unversioned
/// routes and the editing extensions outside the document.
pub fn table() -> Vec<Row> {
    let mut rows = Vec::new();
    for (function, query, destroys) in FUNCTIONS {
        for method in ["GET", "POST"] {
            let mut row = Row::new(method, format!("{API}/{function}"), Policy::Admin).query(query);
            if *destroys {
                row = row.destroying();
            }
            rows.push(row);
        }
    }
    rows.extend([
        Row::new("GET", "/pads/api", Policy::Public).undocumented(),
        Row::new("GET", "/pads/api/", Policy::Public).undocumented(),
        Row::new("GET", "/pads/api/openapi.json", Policy::Public).undocumented(),
        // An old version of the API is the same API key's.
        Row::new("GET", "/pads/api/1.2.14/getText", Policy::Admin)
            .query("padID=${pad}")
            .undocumented(),
        Row::new("POST", "/pads/ext/submitChangeset", Policy::Admin)
            .query("padID=${pad}&baseRev=0&changeset=Z:6%3E0$&authorId=${author}")
            .undocumented(),
        Row::new("POST", "/pads/ext/authorForToken", Policy::Admin)
            .query("token=t.authz")
            .undocumented(),
        Row::new("GET", "/pads/ext/authorForToken", Policy::Admin)
            .query("token=t.authz")
            .undocumented(),
    ]);
    rows
}

/// Etherpad's refusal of a missing or wrong key.
fn refusal(status: u16, body: &str) -> Result<(), String> {
    let value: Value = serde_json::from_str(body).map_err(|e| format!("not JSON: {e}"))?;
    if status == 401 && value["code"] == 4 && value["message"] == "no or wrong API Key" {
        return Ok(());
    }
    Err("not Etherpad's code 4 \"no or wrong API Key\"".to_owned())
}

/// Not refused in Etherpad's way (code 4), whatever else the call answered.
fn allowed(_status: u16, body: &str) -> Result<(), String> {
    match serde_json::from_str::<Value>(body) {
        Ok(value) if value["code"] == 4 => Err("answered Etherpad's code 4".to_owned()),
        _ => Ok(()),
    }
}

/// Calls `function` with the API key; answers `data`.
async fn call(setup: &Setup<'_>, key: &str, function: &str, query: &[(&str, &str)]) -> Value {
    let mut all = vec![("apikey", key)];
    all.extend_from_slice(query);
    let answer = setup
        .ok(
            function,
            setup
                .request(reqwest::Method::GET, &format!("{API}/{function}"))
                .query(&all),
        )
        .await;
    assert_eq!(answer["code"], 0, "fixture {function}: {answer}");
    answer["data"].clone()
}

/// A pad with text, a group, an author and a session, made with the API key.
pub async fn context(app: &TestApp) -> Context {
    let key = std::fs::read_to_string(app.data_dir().join("APIKEY.txt"))
        .unwrap_or_else(|e| panic!("APIKEY.txt: {e}"))
        .trim()
        .to_owned();
    let setup = Setup::new(app);
    let pad = "authz-pad";
    call(
        &setup,
        &key,
        "createPad",
        &[("padID", pad), ("text", "hello")],
    )
    .await;
    let group = call(&setup, &key, "createGroup", &[]).await["groupID"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let author = call(&setup, &key, "createAuthor", &[("name", "ann")]).await["authorID"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let session = call(
        &setup,
        &key,
        "createSession",
        &[
            ("groupID", &group),
            ("authorID", &author),
            ("validUntil", "4102444800"),
        ],
    )
    .await["sessionID"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let readonly = call(&setup, &key, "getReadOnlyID", &[("padID", pad)]).await["readOnlyID"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let credentials = HashMap::from([
        (
            Principal::Wrong,
            Credential::Query {
                name: "apikey",
                value: WRONG_SECRET.to_owned(),
            },
        ),
        (
            Principal::Admin,
            Credential::Query {
                name: "apikey",
                value: key,
            },
        ),
    ]);
    Context {
        name: "pads",
        documents: vec!["/pads/api/openapi.json"],
        rows: table(),
        credentials,
        roles: Vec::new(),
        vars: vars([
            ("pad", pad.to_owned()),
            ("group", group),
            ("author", author),
            ("session", session),
            ("readonly", readonly),
        ]),
        secret: None,
        refusal,
        allowed,
    }
}
