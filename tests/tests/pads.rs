//! The pads context end to end, through the real app under `/pads`: Etherpad's HTTP API driven
//! the way Etherpad's own API tests drive it (groups, authors, sessions, pad text, revisions,
//! changesets, chat, copy/move/delete, read-only ids), two concurrent writers converging, bad
//! input refused without a trace, and the `pads.store` table equal to a replayed rebuild.

use palimpsest::config::Settings;
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::collections::BTreeMap;

struct Etherpad<'a> {
    app: &'a TestApp,
    http: reqwest::Client,
    key: String,
}

impl<'a> Etherpad<'a> {
    fn new(app: &'a TestApp) -> Self {
        let key =
            std::fs::read_to_string(app.state.data_dir.join("APIKEY.txt")).expect("APIKEY.txt");
        Etherpad {
            app,
            http: reqwest::Client::new(),
            key: key.trim().to_owned(),
        }
    }

    async fn call(&self, function: &str, params: &[(&str, &str)]) -> (u16, Value) {
        let mut query: Vec<(&str, &str)> = vec![("apikey", &self.key)];
        query.extend_from_slice(params);
        let res = self
            .http
            .get(self.app.url(&format!("/pads/api/1.3.0/{function}")))
            .query(&query)
            .send()
            .await
            .expect("request");
        let status = res.status().as_u16();
        (status, res.json().await.expect("json"))
    }

    async fn ok(&self, function: &str, params: &[(&str, &str)]) -> Value {
        let (status, body) = self.call(function, params).await;
        assert_eq!(
            (status, body["code"].clone()),
            (200, json!(0)),
            "{function}: {body}"
        );
        body["data"].clone()
    }

    async fn refused(&self, function: &str, params: &[(&str, &str)]) -> String {
        let (status, body) = self.call(function, params).await;
        assert_eq!(
            (status, body["code"].clone()),
            (200, json!(1)),
            "{function}: {body}"
        );
        body["message"].as_str().expect("message").to_owned()
    }

    async fn post_json(&self, function: &str, mut body: Value) -> Value {
        body["apikey"] = json!(self.key);
        let res = self
            .http
            .post(self.app.url(&format!("/pads/api/1.3.0/{function}")))
            .json(&body)
            .send()
            .await
            .expect("request");
        res.json().await.expect("json")
    }

    async fn submit(&self, mut body: Value) -> (u16, Value) {
        body["apikey"] = json!(self.key);
        let res = self
            .http
            .post(self.app.url("/pads/ext/submitChangeset"))
            .json(&body)
            .send()
            .await
            .expect("request");
        let status = res.status().as_u16();
        (status, res.json().await.expect("json"))
    }

    async fn id(&self, function: &str, params: &[(&str, &str)], field: &str) -> String {
        self.ok(function, params).await[field]
            .as_str()
            .expect("id")
            .to_owned()
    }
}

async fn store(app: &TestApp) -> BTreeMap<String, String> {
    let client = app.state.read.get().await.expect("client");
    client
        .query("SELECT key, value FROM pads.store", &[])
        .await
        .expect("query")
        .into_iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

async fn head(app: &TestApp) -> i64 {
    app.state.store.head_position().await.expect("head")
}

#[tokio::test]
async fn etherpads_api_end_to_end() {
    let app = TestApp::start().await;
    let e = Etherpad::new(&app);
    let version: Value = e
        .http
        .get(app.url("/pads/api"))
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(version["currentVersion"], json!("1.3.0"));

    // Groups, authors, sessions (sessionsAndGroups.ts).
    let group = e.id("createGroup", &[], "groupID").await;
    assert_eq!(
        e.ok("listSessionsOfGroup", &[("groupID", &group)]).await,
        Value::Null
    );
    let author = e.id("createAuthor", &[("name", "john")], "authorID").await;
    assert_eq!(
        e.ok("getAuthorName", &[("authorID", &author)]).await,
        json!("john")
    );
    let mapped = e
        .id(
            "createAuthorIfNotExistsFor",
            &[("authorMapper", "chris")],
            "authorID",
        )
        .await;
    assert_eq!(
        e.id(
            "createAuthorIfNotExistsFor",
            &[("authorMapper", "chris")],
            "authorID"
        )
        .await,
        mapped
    );
    let session = e
        .id(
            "createSession",
            &[
                ("authorID", &author),
                ("groupID", &group),
                ("validUntil", "999999999999"),
            ],
            "sessionID",
        )
        .await;
    let info = e.ok("getSessionInfo", &[("sessionID", &session)]).await;
    assert_eq!(info["authorID"], json!(author));
    e.ok("deleteSession", &[("sessionID", &session)]).await;
    assert_eq!(
        e.refused("getSessionInfo", &[("sessionID", &session)])
            .await,
        "sessionID does not exist"
    );
    let pad = e
        .id(
            "createGroupPad",
            &[("groupID", &group), ("padName", "notes")],
            "padID",
        )
        .await;
    assert_eq!(
        e.ok("listPads", &[("groupID", &group)]).await["padIDs"],
        json!([pad])
    );
    e.ok(
        "setPublicStatus",
        &[("padID", &pad), ("publicStatus", "true")],
    )
    .await;
    assert_eq!(
        e.ok("getPublicStatus", &[("padID", &pad)]).await["publicStatus"],
        json!(true)
    );

    // Pad text and revisions (pad.ts).
    e.ok("createPad", &[("padID", "e2e"), ("text", "testText")])
        .await;
    assert_eq!(
        e.ok("getText", &[("padID", "e2e")]).await["text"],
        json!("testText\n")
    );
    assert_eq!(
        e.post_json(
            "setText",
            json!({"padID": "e2e", "text": "testTextTwo", "authorId": author})
        )
        .await["code"],
        json!(0)
    );
    assert_eq!(
        e.ok("getRevisionsCount", &[("padID", "e2e")]).await["revisions"],
        json!(1)
    );
    e.ok(
        "appendText",
        &[
            ("padID", "e2e"),
            ("text", " and more"),
            ("authorId", &author),
        ],
    )
    .await;
    assert_eq!(
        e.ok("getText", &[("padID", "e2e")]).await["text"],
        json!("testTextTwo and more\n")
    );
    assert_eq!(
        e.ok("getText", &[("padID", "e2e"), ("rev", "1")]).await["text"],
        json!("testTextTwo\n")
    );
    assert_eq!(
        e.ok("getRevisionChangeset", &[("padID", "e2e"), ("rev", "0")])
            .await,
        json!("Z:1>8+8$testText")
    );
    assert_eq!(
        e.ok("listAuthorsOfPad", &[("padID", "e2e")]).await["authorIDs"],
        json!([author])
    );
    assert_eq!(
        e.ok("listPadsOfAuthor", &[("authorID", &author)]).await["padIDs"],
        json!(["e2e"])
    );
    let pool = e.ok("getAttributePool", &[("padID", "e2e")]).await["pool"].clone();
    assert_eq!(pool["numToAttrib"]["0"], json!(["author", author]));
    assert!(
        e.ok("getHTML", &[("padID", "e2e")]).await["html"]
            .as_str()
            .expect("html")
            .contains("testTextTwo and more<br>")
    );
    e.ok("saveRevision", &[("padID", "e2e"), ("rev", "1")])
        .await;
    assert_eq!(
        e.ok("listSavedRevisions", &[("padID", "e2e")]).await["savedRevisions"],
        json!([1])
    );

    // Chat (chat.ts).
    e.ok(
        "appendChatMessage",
        &[
            ("padID", "e2e"),
            ("text", "hello"),
            ("authorID", &author),
            ("time", "1700000000000"),
        ],
    )
    .await;
    assert_eq!(
        e.ok("getChatHead", &[("padID", "e2e")]).await["chatHead"],
        json!(0)
    );
    assert_eq!(
        e.ok("getChatHistory", &[("padID", "e2e")]).await["messages"],
        json!([{"text": "hello", "time": "1700000000000", "userId": author, "userName": "john"}])
    );

    // Read-only ids, copy, move, delete.
    let ro = e
        .id("getReadOnlyID", &[("padID", "e2e")], "readOnlyID")
        .await;
    assert_eq!(
        e.ok("getPadID", &[("roID", &ro)]).await["padID"],
        json!("e2e")
    );
    e.ok(
        "copyPad",
        &[
            ("sourceID", "e2e"),
            ("destinationID", "e2e-copy"),
            ("force", "false"),
        ],
    )
    .await;
    assert_eq!(
        e.ok("getText", &[("padID", "e2e-copy")]).await["text"],
        json!("testTextTwo and more\n")
    );
    assert_eq!(
        e.ok("getChatHead", &[("padID", "e2e-copy")]).await["chatHead"],
        json!(0)
    );
    e.ok(
        "movePad",
        &[
            ("sourceID", "e2e-copy"),
            ("destinationID", "e2e-moved"),
            ("force", "false"),
        ],
    )
    .await;
    assert_eq!(
        e.refused("getText", &[("padID", "e2e-copy")]).await,
        "padID does not exist"
    );
    assert_eq!(
        e.ok("getRevisionsCount", &[("padID", "e2e-moved")]).await["revisions"],
        json!(2)
    );
    e.ok(
        "copyPadWithoutHistory",
        &[
            ("sourceID", "e2e"),
            ("destinationID", "e2e-flat"),
            ("force", "false"),
        ],
    )
    .await;
    assert_eq!(
        e.ok("getRevisionsCount", &[("padID", "e2e-flat")]).await["revisions"],
        json!(1)
    );
    e.ok("deletePad", &[("padID", "e2e")]).await;
    assert_eq!(
        e.refused("getPadID", &[("roID", &ro)]).await,
        "padID does not exist"
    );
    let rows = store(&app).await;
    assert!(
        rows.keys()
            .all(|k| !k.starts_with("pad:e2e:") && k != "pad:e2e"),
        "the pad's records are gone"
    );
    assert_eq!(
        e.ok("listPadsOfAuthor", &[("authorID", &author)]).await["padIDs"],
        json!(["e2e-moved", "e2e-flat"])
    );
    e.ok("deleteGroup", &[("groupID", &group)]).await;
    assert_eq!(
        e.refused("getText", &[("padID", &pad)]).await,
        "padID does not exist"
    );
    app.stop().await;
}

#[tokio::test]
async fn two_concurrent_writers_converge() {
    let app = TestApp::start().await;
    let e = Etherpad::new(&app);
    e.ok("createPad", &[("padID", "race"), ("text", "hello")])
        .await;
    let first = e.submit(json!({"padID": "race", "baseRev": 0, "changeset": "Z:6>1+1$A"}));
    let second = e.submit(json!({"padID": "race", "baseRev": 0, "changeset": "Z:6>1=5+1$B"}));
    let ((s1, b1), (s2, b2)) = tokio::join!(first, second);
    assert_eq!((s1, s2), (200, 200), "{b1} {b2}");
    assert_eq!(
        e.ok("getText", &[("padID", "race")]).await["text"],
        json!("AhelloB\n")
    );
    let appends: Vec<_> = (0..8)
        .map(|i| {
            let e = &e;
            async move {
                e.ok(
                    "appendText",
                    &[("padID", "race"), ("text", &format!("[{i}]"))],
                )
                .await
            }
        })
        .collect();
    futures::future::join_all(appends).await;
    let text = e.ok("getText", &[("padID", "race")]).await["text"]
        .as_str()
        .expect("text")
        .to_owned();
    assert!((0..8).all(|i| text.contains(&format!("[{i}]"))), "{text}");
    assert_eq!(
        e.ok("getRevisionsCount", &[("padID", "race")]).await["revisions"],
        json!(10)
    );
    app.stop().await;
}

#[tokio::test]
async fn bad_input_is_refused_and_changes_nothing() {
    let app = TestApp::start().await;
    let e = Etherpad::new(&app);
    e.ok("createPad", &[("padID", "p"), ("text", "abc")]).await;
    let before = (head(&app).await, store(&app).await);
    let (status, body) = e
        .submit(json!({"padID": "p", "baseRev": 0, "changeset": "Z:zz"}))
        .await;
    assert_eq!((status, body["code"].clone()), (400, json!(1)), "{body}");
    let (status, _) = e
        .submit(json!({"padID": "p", "baseRev": 0, "changeset": "Z:9>1+1$x"}))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        e.refused("getText", &[("padID", "p"), ("rev", "-1")]).await,
        "rev is not a negative number"
    );
    assert_eq!(
        e.refused("setText", &[("padID", "nope"), ("text", "x")])
            .await,
        "padID does not exist"
    );
    let (status, body) = e.call("createGroup", &[("apikey", "wrong")]).await;
    assert_eq!((status, body["code"].clone()), (401, json!(4)));
    assert_eq!((head(&app).await, store(&app).await), before);
    app.stop().await;
}

#[tokio::test]
async fn the_store_equals_a_replayed_rebuild() {
    let app = TestApp::start().await;
    let e = Etherpad::new(&app);
    let group = e
        .id(
            "createGroupIfNotExistsFor",
            &[("groupMapper", "team")],
            "groupID",
        )
        .await;
    let author = e
        .id(
            "createAuthorIfNotExistsFor",
            &[("authorMapper", "u1"), ("name", "ann")],
            "authorID",
        )
        .await;
    let pad = e
        .id(
            "createGroupPad",
            &[
                ("groupID", &group),
                ("padName", "log"),
                ("authorId", &author),
            ],
            "padID",
        )
        .await;
    for i in 0..105 {
        e.ok(
            "appendText",
            &[
                ("padID", &pad),
                ("text", &format!("{i} ")),
                ("authorId", &author),
            ],
        )
        .await;
    }
    e.ok(
        "createSession",
        &[
            ("groupID", &group),
            ("authorID", &author),
            ("validUntil", "999999999999"),
        ],
    )
    .await;
    e.ok(
        "appendChatMessage",
        &[("padID", &pad), ("text", "hi"), ("authorID", &author)],
    )
    .await;
    e.ok("getReadOnlyID", &[("padID", &pad)]).await;
    e.ok(
        "copyPad",
        &[
            ("sourceID", &pad),
            ("destinationID", "plain"),
            ("force", "false"),
        ],
    )
    .await;
    e.ok("restoreRevision", &[("padID", "plain"), ("rev", "50")])
        .await;
    let live = store(&app).await;
    assert!(live.contains_key(&format!("pad:{pad}:revs:100")));
    let settings = Settings::for_database(app.database_url(), app.data_dir());
    palimpsest::cli::replay::run(&settings, "pads")
        .await
        .expect("replay");
    assert_eq!(store(&app).await, live);
    app.stop().await;
}
