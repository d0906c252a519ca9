//! The one command path, end to end through the real app: every write route of every context
//! sent twice with the same `Idempotency-Key` answers the same status and body and appends once;
//! the key reused with another body is a 422; a connection killed after the append and retried
//! with its key appends nothing more; concurrent writers on one stream get a success or a 409,
//! never a 5xx; a write right after a create does not depend on a projector.

use palimpsest_e2e::workload;
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// One write request: method, path, body and its media type, and other headers (credentials,
/// a property's `Slug`).
#[derive(Clone, Debug)]
struct Call {
    method: reqwest::Method,
    path: String,
    body: String,
    content_type: &'static str,
    headers: Vec<(&'static str, String)>,
}

impl Call {
    fn json(path: &str, body: Value) -> Call {
        Call {
            method: reqwest::Method::POST,
            path: path.to_owned(),
            body: body.to_string(),
            content_type: "application/json",
            headers: Vec::new(),
        }
    }

    /// A request with a raw body of `content_type`.
    fn raw(method: reqwest::Method, path: &str, body: &str, content_type: &'static str) -> Call {
        Call {
            method,
            path: path.to_owned(),
            body: body.to_owned(),
            content_type,
            headers: Vec::new(),
        }
    }

    /// The same request with `name: value` (in place of any earlier value of `name`).
    fn header(mut self, name: &'static str, value: &str) -> Call {
        self.headers.retain(|(n, _)| *n != name);
        self.headers.push((name, value.to_owned()));
        self
    }

    /// The same request sent with a bearer token.
    fn bearer(self, token: &str) -> Call {
        self.header("authorization", &format!("Bearer {token}"))
    }

    /// An Etherpad API call: `POST /pads/api/1.3.0/<function>` with a form body.
    fn pads(key: &str, function: &str, params: &[(&str, &str)]) -> Call {
        let mut form = vec![format!("apikey={}", encode(key))];
        form.extend(params.iter().map(|(k, v)| format!("{k}={}", encode(v))));
        Call {
            method: reqwest::Method::POST,
            path: format!("/pads/api/1.3.0/{function}"),
            body: form.join("&"),
            content_type: "application/x-www-form-urlencoded",
            headers: Vec::new(),
        }
    }

    /// A records API call: `POST /records/api/<function>` with a JSON body, as `token`.
    fn records(token: &str, function: &str, body: Value) -> Call {
        Call::json(&format!("/records/api/{function}"), body).bearer(token)
    }
}

impl Call {
    /// The same route with another request: another body, or (for a route without a body)
    /// another query.
    fn another(&self) -> Call {
        let mut other = self.clone();
        if self.body.is_empty() {
            let joiner = if self.path.contains('?') { '&' } else { '?' };
            other.path = format!("{}{joiner}another=1", self.path);
        } else if matches!(
            self.content_type,
            "application/json" | "application/javascript"
        ) {
            other.body.push(' ');
        } else {
            other.body.push_str("&x=1");
        }
        other
    }
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

struct Client<'a> {
    app: &'a TestApp,
    http: reqwest::Client,
}

impl<'a> Client<'a> {
    /// A client of `app`.
    fn of(app: &'a TestApp) -> Client<'a> {
        Client {
            app,
            http: reqwest::Client::new(),
        }
    }

    async fn send(&self, call: &Call, key: Option<&str>) -> (u16, Vec<u8>) {
        let mut req = self
            .http
            .request(call.method.clone(), self.app.url(&call.path))
            .header("content-type", call.content_type)
            .body(call.body.clone());
        for (name, value) in &call.headers {
            req = req.header(*name, value);
        }
        if let Some(key) = key {
            req = req.header("idempotency-key", key);
        }
        let res = req.send().await.expect("request");
        let status = res.status().as_u16();
        (status, res.bytes().await.expect("body").to_vec())
    }

    async fn head(&self) -> i64 {
        self.app.state.store.head_position().await.expect("head")
    }

    /// Sends `call` twice with one fresh key: same status and body, one append. Returns the
    /// answer as JSON.
    async fn twice(&self, call: &Call) -> Value {
        self.twice_appending(call, true).await
    }

    /// [`Client::twice`] for a call that may have nothing to change (its answer is still kept
    /// under the key, with no event): `appends` says whether its first run appends events.
    async fn twice_appending(&self, call: &Call, appends: bool) -> Value {
        let key = uuid::Uuid::new_v4().to_string();
        let before = self.head().await;
        let first = self.send(call, Some(&key)).await;
        let after_first = self.head().await;
        let second = self.send(call, Some(&key)).await;
        let after_second = self.head().await;
        let text = String::from_utf8_lossy(&first.1).to_string();
        assert!(
            first.0 < 300,
            "{} {}: {} {text}",
            call.method,
            call.path,
            first.0
        );
        assert_eq!(after_first > before, appends, "{}: appended?", call.path);
        assert_eq!(
            first, second,
            "{}: the repeat answered differently",
            call.path
        );
        assert_eq!(
            after_second, after_first,
            "{}: the repeat appended",
            call.path
        );
        let other = call.another();
        let reused = self.send(&other, Some(&key)).await;
        assert_eq!(reused.0, 422, "{}: key reused for another body", call.path);
        assert_eq!(self.head().await, after_first);
        // A write that answers no JSON (an empty 200) gives `null`.
        serde_json::from_slice(&first.1).unwrap_or(Value::Null)
    }
}

/// A token for atlas user `user` with `roles`, issued by the administrator.
async fn atlas_token(app: &TestApp, user: &str, roles: &[&str]) -> String {
    let res = reqwest::Client::new()
        .put(app.url(&format!("/atlas/admin/users/{user}")))
        .bearer_auth(app.admin_token())
        .json(&json!({ "roles": roles }))
        .send()
        .await
        .expect("issue an atlas user");
    let body: Value = res.json().await.expect("issue answer");
    body["token"].as_str().expect("token").to_owned()
}

fn pads_key(app: &TestApp) -> String {
    std::fs::read_to_string(app.data_dir().join("APIKEY.txt"))
        .expect("APIKEY.txt")
        .trim()
        .to_owned()
}

#[tokio::test]
async fn every_write_route_answers_a_repeated_key_once() {
    let app = TestApp::start().await;
    let c = Client::of(&app);
    let k = pads_key(&app);
    let pad = |f: &str, p: &[(&str, &str)]| Call::pads(&k, f, p);

    // pads: every function that writes.
    let group = c.twice(&pad("createGroup", &[])).await["data"]["groupID"].clone();
    let group = group.as_str().expect("groupID").to_owned();
    c.twice(&pad("createGroupIfNotExistsFor", &[("groupMapper", "m1")]))
        .await;
    // The same mapper again changes nothing, yet its key is bound all the same: another
    // request under it is a 422, not a new group.
    c.twice_appending(
        &pad("createGroupIfNotExistsFor", &[("groupMapper", "m1")]),
        false,
    )
    .await;
    let author = c
        .twice(&pad(
            "createAuthorIfNotExistsFor",
            &[("authorMapper", "a1"), ("name", "Ann")],
        ))
        .await["data"]["authorID"]
        .as_str()
        .expect("authorID")
        .to_owned();
    c.twice(&pad("createAuthor", &[("name", "Bob")])).await;
    c.twice(&pad(
        "createGroupPad",
        &[("groupID", &group), ("padName", "gp")],
    ))
    .await;
    let session = c
        .twice(&pad(
            "createSession",
            &[
                ("groupID", &group),
                ("authorID", &author),
                ("validUntil", "99999999999"),
            ],
        ))
        .await["data"]["sessionID"]
        .as_str()
        .expect("sessionID")
        .to_owned();
    c.twice(&pad("deleteSession", &[("sessionID", &session)]))
        .await;
    c.twice(&pad("createPad", &[("padID", "p1"), ("text", "hello")]))
        .await;
    c.twice(&pad("setText", &[("padID", "p1"), ("text", "set")]))
        .await;
    c.twice(&pad("appendText", &[("padID", "p1"), ("text", " more")]))
        .await;
    c.twice(&pad("restoreRevision", &[("padID", "p1"), ("rev", "1")]))
        .await;
    c.twice(&pad(
        "appendChatMessage",
        &[("padID", "p1"), ("text", "hi"), ("authorID", &author)],
    ))
    .await;
    c.twice(&pad("saveRevision", &[("padID", "p1")])).await;
    c.twice(&pad("getReadOnlyID", &[("padID", "p1")])).await;
    let group_pad = format!("{group}$gp");
    c.twice(&pad(
        "setPublicStatus",
        &[("padID", &group_pad), ("publicStatus", "true")],
    ))
    .await;
    c.twice(&pad(
        "copyPad",
        &[("sourceID", "p1"), ("destinationID", "p2")],
    ))
    .await;
    c.twice(&pad(
        "copyPadWithoutHistory",
        &[("sourceID", "p1"), ("destinationID", "p3")],
    ))
    .await;
    c.twice(&pad(
        "movePad",
        &[("sourceID", "p3"), ("destinationID", "p4")],
    ))
    .await;
    c.twice(&pad("deletePad", &[("padID", "p4")])).await;
    let ext = |path: &str, params: &[(&str, &str)]| Call {
        path: format!("/pads/ext/{path}"),
        ..Call::pads(&k, "", params)
    };
    c.twice(&ext("authorForToken", &[("token", "t.1")])).await;
    let apool = format!(r#"{{"numToAttrib":{{"0":["author","{author}"]}},"nextNum":1}}"#);
    let submit = [
        ("padID", "p1"),
        ("baseRev", "0"),
        ("changeset", "Z:6>1*0+1$x"),
        ("apool", apool.as_str()),
        ("authorId", author.as_str()),
    ];
    c.twice(&ext("submitChangeset", &submit)).await;
    c.twice(&pad("deleteGroup", &[("groupID", &group)])).await;

    // atlas: every route that writes, each as a user the administrator issued.
    let u1 = atlas_token(&app, "u1", &["editor"]).await;
    let u2 = atlas_token(&app, "u2", &["editor"]).await;
    let r1 = atlas_token(&app, "r1", &["reviewer"]).await;
    let section = c
        .twice(
            &Call::json(
                "/atlas/sections",
                json!({"title": "Rome", "created_by": "u1"}),
            )
            .bearer(&u1),
        )
        .await["id"]
        .as_str()
        .expect("section id")
        .to_owned();
    let s = |tail: &str| format!("/atlas/sections/{section}/{tail}");
    c.twice(&Call::json(&s("lock"), json!({"user_id": "u1"})).bearer(&u1))
        .await;
    c.twice(&Call::json(&s("unlock"), json!({"user_id": "u1"})).bearer(&u1))
        .await;
    let snapshot = json!({
        "schema_version": 1,
        "entities": [{"operation": "create", "id": "rome", "name": "Rome", "slug": "rome", "type_id": "city"}],
        "geometries": [{"operation": "create", "id": "g-rome", "type": "city", "draw_geometry": {"type": "Point", "coordinates": [12.5, 41.9]}}],
        "link_scopes": [{"geometry_id": "g-rome", "entity_ids": ["rome"]}]
    });
    let commit = c
        .twice(
            &Call::json(
                &s("commits"),
                json!({"snapshot": snapshot, "created_by": "u1"}),
            )
            .bearer(&u1),
        )
        .await["commit"]["id"]
        .as_str()
        .expect("commit id")
        .to_owned();
    c.twice(
        &Call::json(
            &s("restore"),
            json!({"commit_id": commit, "created_by": "u1"}),
        )
        .bearer(&u1),
    )
    .await;
    let submission = c
        .twice(&Call::json(&s("submit"), json!({"submitted_by": "u1"})).bearer(&u1))
        .await["submission"]["id"]
        .as_str()
        .expect("submission id")
        .to_owned();
    c.twice(
        &Call::json(
            &format!("/atlas/submissions/{submission}/approve"),
            json!({"reviewed_by": "r1"}),
        )
        .bearer(&r1),
    )
    .await;
    let other = c
        .twice(&Call::json("/atlas/sections", json!({"title": "Carthage"})).bearer(&u2))
        .await["id"]
        .as_str()
        .expect("section id")
        .to_owned();
    let o = |tail: &str| format!("/atlas/sections/{other}/{tail}");
    c.twice(
        &Call::json(
            &o("commits"),
            json!({"snapshot": snapshot, "created_by": "u2"}),
        )
        .bearer(&u2),
    )
    .await;
    let second = c
        .twice(&Call::json(&o("submit"), json!({"submitted_by": "u2"})).bearer(&u2))
        .await["submission"]["id"]
        .as_str()
        .expect("submission id")
        .to_owned();
    c.twice(
        &Call::json(
            &format!("/atlas/submissions/{second}/reject"),
            json!({"reviewed_by": "r1"}),
        )
        .bearer(&r1),
    )
    .await;
    // The administrator's revoke (an issue's answer holds its token once, so a repeat of it
    // answers differently by design: the atlas tests check it).
    c.twice(
        &Call::raw(
            reqwest::Method::DELETE,
            "/atlas/admin/users/u2",
            "",
            "application/json",
        )
        .bearer(&app.admin_token()),
    )
    .await;
    app.stop().await;
}

#[tokio::test]
async fn a_write_whose_connection_died_after_the_append_is_answered_by_its_key() {
    // No projector: the handler appends, then waits for the read model, and the connection is
    // killed in that wait: the client never saw an answer.
    let mut app = TestApp::start_without_projectors().await;
    let key_file = pads_key(&app);
    let call = Call::pads(&key_file, "createPad", &[("padID", "lost"), ("text", "x")]);
    let before = app.state.store.head_position().await.expect("head");

    let mut socket = tokio::net::TcpStream::connect(app.addr)
        .await
        .expect("connect");
    let request = format!(
        "POST {} HTTP/1.1\r\nhost: x\r\ncontent-type: {}\r\nidempotency-key: k-lost\r\ncontent-length: {}\r\n\r\n{}",
        call.path,
        call.content_type,
        call.body.len(),
        call.body
    );
    socket.write_all(request.as_bytes()).await.expect("write");
    let mut appended = false;
    for _ in 0..200 {
        if app.state.store.head_position().await.expect("head") > before {
            appended = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(appended, "the append happened");
    drop(socket);
    let after = app.state.store.head_position().await.expect("head");

    app.start_projectors();
    let c = Client::of(&app);
    let (status, body) = c.send(&call, Some("k-lost")).await;
    let body: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!((status, body["code"].clone()), (200, json!(0)), "{body}");
    assert_eq!(
        app.state.store.head_position().await.expect("head"),
        after,
        "the retry appended nothing"
    );
    // Without the key the same request is a new command, refused by the pad's own state.
    let (_, body) = c.send(&call, None).await;
    let body: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(body["message"], json!("padID does already exist"));
    app.stop().await;
}

#[tokio::test]
async fn concurrent_writers_on_one_stream_get_success_or_409_never_5xx() {
    let app = TestApp::start().await;
    let k = pads_key(&app);
    let http = reqwest::Client::new();
    let c = Client {
        app: &app,
        http: http.clone(),
    };
    c.send(&Call::pads(&k, "createPad", &[("padID", "hot")]), None)
        .await;
    let section: Value = serde_json::from_slice(
        &c.send(
            &Call::json("/atlas/sections", json!({"title": "hot"})).bearer(&app.admin_token()),
            None,
        )
        .await
        .1,
    )
    .expect("section");
    let section = section["id"].as_str().expect("id").to_owned();

    let mut writers = Vec::new();
    for i in 0..24 {
        let token = if i % 2 == 0 {
            None
        } else {
            Some(atlas_token(&app, &format!("u{i}"), &["editor"]).await)
        };
        let (http, app_url, k, section) = (http.clone(), app.url(""), k.clone(), section.clone());
        writers.push(tokio::spawn(async move {
            let (path, body, ctype) = if i % 2 == 0 {
                (
                    "/pads/api/1.3.0/appendText".to_owned(),
                    format!("apikey={}&padID=hot&text=w{i}", encode(&k)),
                    "application/x-www-form-urlencoded",
                )
            } else {
                (
                    format!("/atlas/sections/{section}/lock"),
                    json!({"user_id": format!("u{i}")}).to_string(),
                    "application/json",
                )
            };
            let mut request = http
                .post(format!("{app_url}{path}"))
                .header("content-type", ctype);
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            let res = request.body(body).send().await.expect("request");
            let status = res.status().as_u16();
            let body: Value = res.json().await.expect("json");
            (status, body)
        }));
    }
    for w in writers {
        let (status, body) = w.await.expect("writer");
        assert!(status < 500, "a writer got {status}: {body}");
        if status == 409 {
            assert!(
                body["error"].is_string() || body["message"].is_string(),
                "{body}"
            );
        }
    }
    app.stop().await;
}

#[tokio::test]
async fn a_write_right_after_a_create_never_fails_because_the_projector_lags() {
    let app = TestApp::start_without_projectors().await;
    let k = pads_key(&app);
    let c = Client::of(&app);
    for (function, params) in [
        ("createPad", vec![("padID", "fresh")]),
        ("appendText", vec![("padID", "fresh"), ("text", "x")]),
        ("getReadOnlyID", vec![("padID", "fresh")]),
    ] {
        // Each write waits (bounded) for the paused read model, then answers from the stream.
        let (status, body) = c.send(&Call::pads(&k, function, &params), None).await;
        let body: Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(
            (status, body["code"].clone()),
            (200, json!(0)),
            "{function}: {body}"
        );
    }
    let admin = app.admin_token();
    let section: Value = serde_json::from_slice(
        &c.send(
            &Call::json("/atlas/sections", json!({"title": "t"})).bearer(&admin),
            None,
        )
        .await
        .1,
    )
    .expect("section");
    let id = section["id"].as_str().expect("id");
    let (status, _) = c
        .send(
            &Call::json(&format!("/atlas/sections/{id}/lock"), json!({})).bearer(&admin),
            None,
        )
        .await;
    assert_eq!(status, 200);
    app.stop().await;
}

#[tokio::test]
async fn docs_write_routes_answer_a_repeated_key_once() {
    let app = TestApp::start().await;
    let c = Client::of(&app);
    // Databases and design documents are the administrator's.
    let admin = app.admin_token();
    let with = |method: reqwest::Method, path: &str, body: Value| Call {
        method,
        ..Call::json(path, body)
    };
    let bodiless = |method: reqwest::Method, path: &str| Call {
        body: String::new(),
        ..with(method, path, json!({}))
    };
    c.twice(&bodiless(reqwest::Method::PUT, "/docs/keyed").bearer(&admin))
        .await;
    let created = c
        .twice(&with(
            reqwest::Method::PUT,
            "/docs/keyed/d1",
            json!({"a": 1}),
        ))
        .await;
    let rev = created["rev"].as_str().expect("rev").to_owned();
    let bulk = c
        .twice(&Call::json(
            "/docs/keyed/_bulk_docs",
            json!({"docs": [{"_id": "d2", "b": 2}, {"_id": "d3", "c": 3}]}),
        ))
        .await;
    let d2_rev = bulk[0]["rev"].as_str().expect("d2 rev").to_owned();
    c.twice(&Call::json(
        "/docs/keyed",
        json!({"_id": "d4", "posted": true}),
    ))
    .await;
    let local = c
        .twice(&with(
            reqwest::Method::PUT,
            "/docs/keyed/_local/checkpoint",
            json!({"seq": 1}),
        ))
        .await;
    let local_rev = local["rev"].as_str().expect("_local rev").to_owned();
    c.twice(&bodiless(
        reqwest::Method::DELETE,
        &format!("/docs/keyed/d1?rev={rev}"),
    ))
    .await;
    c.twice(&bodiless(
        reqwest::Method::DELETE,
        &format!("/docs/keyed/_local/checkpoint?rev={local_rev}"),
    ))
    .await;
    let design = c
        .twice(
            &with(
                reqwest::Method::PUT,
                "/docs/keyed/_design/app",
                json!({"views": {}}),
            )
            .bearer(&admin),
        )
        .await;
    let design_rev = design["rev"].as_str().expect("design rev").to_owned();
    c.twice(
        &bodiless(
            reqwest::Method::DELETE,
            &format!("/docs/keyed/_design/app?rev={design_rev}"),
        )
        .bearer(&admin),
    )
    .await;
    let attached = c
        .twice(&Call::raw(
            reqwest::Method::PUT,
            &format!("/docs/keyed/d2/note.txt?rev={d2_rev}"),
            "hello",
            "text/plain",
        ))
        .await;
    let attached_rev = attached["rev"].as_str().expect("attachment rev").to_owned();
    c.twice(&bodiless(
        reqwest::Method::DELETE,
        &format!("/docs/keyed/d2/note.txt?rev={attached_rev}"),
    ))
    .await;
    c.twice(&bodiless(reqwest::Method::DELETE, "/docs/keyed").bearer(&admin))
        .await;

    // Sync Gateway's admin API.
    let admin = app.admin_token();
    let db = "/docs/_admin/keyed2";
    c.twice(&with(reqwest::Method::PUT, db, json!({"revs_limit": 50})).bearer(&admin))
        .await;
    let sync = Call::raw(
        reqwest::Method::PUT,
        &format!("{db}/_config/sync"),
        "function (doc) { channel(doc.channels); }",
        "application/javascript",
    );
    c.twice(&sync.bearer(&admin)).await;
    c.twice(&bodiless(reqwest::Method::DELETE, &format!("{db}/_config/sync")).bearer(&admin))
        .await;
    let ann = json!({"password": "secret-1", "admin_channels": ["a"]});
    c.twice(&with(reqwest::Method::PUT, &format!("{db}/_user/ann"), ann).bearer(&admin))
        .await;
    c.twice(&bodiless(reqwest::Method::DELETE, &format!("{db}/_user/ann")).bearer(&admin))
        .await;
    let role = json!({"admin_channels": ["a"]});
    c.twice(&with(reqwest::Method::PUT, &format!("{db}/_role/r1"), role).bearer(&admin))
        .await;
    c.twice(&bodiless(reqwest::Method::DELETE, &format!("{db}/_role/r1")).bearer(&admin))
        .await;
    // No tombstone is old enough: nothing to purge, and the key is bound all the same.
    c.twice_appending(
        &bodiless(reqwest::Method::POST, &format!("{db}/_compact")).bearer(&admin),
        false,
    )
    .await;
    c.twice(
        &with(
            reqwest::Method::PUT,
            "/docs/keyed2/p1",
            json!({"channels": ["a"]}),
        )
        .bearer(&admin),
    )
    .await;
    // The default function routes p1 as it was: nothing to change, the answer kept all the same.
    c.twice_appending(
        &bodiless(reqwest::Method::POST, &format!("{db}/_resync")).bearer(&admin),
        false,
    )
    .await;
    let purged = c
        .twice(&Call::json(&format!("{db}/_purge"), json!({"p1": ["*"]})).bearer(&admin))
        .await;
    assert_eq!(purged, json!({"purged": {"p1": ["*"]}}));
    app.stop().await;
}

#[tokio::test]
async fn records_write_routes_answer_a_repeated_key_once() {
    let app = TestApp::start().await;
    let c = Client::of(&app);
    let admin = app.admin_token();
    let api = |function: &str, body: Value| Call::records(&admin, function, body);
    c.twice(&api(
        "declareClass",
        json!({"clazz": "Book", "sync": true, "pk": ["p1"], "collections": [],
               "indexes": [{"name": "code", "type": "uniq"}]}),
    ))
    .await;
    let token = c.twice(&api("issueOrgToken", json!({"org": "o1"}))).await["result"]["token"]
        .as_str()
        .expect("token")
        .to_owned();
    let book = c
        .twice(&api(
            "insertDoc",
            json!({"org": "o1", "data": {"clazz": "Book", "p1": "b1", "code": "X"}}),
        ))
        .await["result"]
        .clone();
    let updated = c
        .twice(&api(
            "updateDoc",
            json!({"org": "o1", "v": book["v"], "data": {"clazz": "Book", "p1": "b1", "code": "Y"}}),
        ))
        .await["result"]
        .clone();
    assert!(updated["v"].as_i64() > book["v"].as_i64(), "{updated}");
    c.twice(&api(
        "operation",
        json!({"org": "o1", "writes": [
            {"op": "insert", "data": {"clazz": "Book", "p1": "b2"}},
            {"op": "insert", "data": {"clazz": "Book", "p1": "b3"}}]}),
    ))
    .await;
    c.twice(&api(
        "deleteDoc",
        json!({"org": "o1", "cl": "Book", "pk": book["pk"]}),
    ))
    .await;
    let hdr = c
        .twice(&api("insertHdr", json!({"data": {"etat": "ouvert"}})))
        .await["result"]
        .clone();
    c.twice(&api(
        "updateHdr",
        json!({"data": {"etat": "ferme"}, "v": hdr["v"]}),
    ))
    .await;
    let org = c
        .twice(&api(
            "insertOrg",
            json!({"data": {"org": "o1", "statut": "actif"}}),
        ))
        .await["result"]
        .clone();
    c.twice(&api(
        "updateOrg",
        json!({"data": {"org": "o1", "statut": "clos"}, "v": org["v"]}),
    ))
    .await;
    c.twice(&api(
        "setFTP",
        json!({"org": "o1", "path": "a/b.pdf", "dp": 1}),
    ))
    .await;
    c.twice(&api("purgeFTP", json!({"org": "o1", "path": "a/b.pdf"})))
        .await;
    c.twice(&api(
        "setTask",
        json!({"org": "o1", "data": {"process": "P", "pk": ["t1"], "startTime": "20300101000000000"}}),
    ))
    .await;
    // An org's own token goes the same way.
    let mine = |function: &str, body: Value| Call::records(&token, function, body);
    c.twice(&mine(
        "insertDoc",
        json!({"data": {"clazz": "Book", "p1": "own"}}),
    ))
    .await;
    // The calls made of several commands keep their one answer under the key too.
    let imported = c
        .twice(&api(
            "importOrg",
            json!({"org": "o2", "docs": [{"clazz": "Book", "p1": "i1", "code": "Z"},
                                         {"clazz": "Book", "p1": "i2"}]}),
        ))
        .await;
    assert_eq!(imported["result"]["imported"], 2, "{imported}");
    // An audit dump's rows (exportOrg with clear), treated on the way in.
    let from_dump = c
        .twice(&api(
            "importOrg",
            json!({"org": "o3", "treat": true, "rows": [
                {"org": "o2", "pk": "as dumped", "v": 1, "data": {"clazz": "Book", "p1": "r1"}}]}),
        ))
        .await;
    assert_eq!(from_dump["result"]["imported"], 1, "{from_dump}");
    let purged = |n: u64| json!({"result": {"purged": n}});
    let dlv = c
        .twice(&api(
            "purgeDlvDocs",
            json!({"org": "o2", "cl": "Book", "ix": "code", "comp": "=", "val": "Z"}),
        ))
        .await;
    assert_eq!(dlv, purged(1));
    let all = c
        .twice(&api("purgeAllDocs", json!({"org": "o2", "cl": "Book"})))
        .await;
    assert_eq!(all, purged(1));
    c.twice(&api(
        "setFTP",
        json!({"org": "o1", "path": "c/d.pdf", "dp": 1}),
    ))
    .await;
    let ftp = c.twice(&api("purgeAllFTP", json!({"dp": 5}))).await;
    assert_eq!(ftp, purged(1));
    let zombies = c
        .twice(&api("purgeOrgs", json!({"z": 9_000_000_000_000_000_i64})))
        .await;
    assert_eq!(zombies, purged(1), "the zombie of the deleted book");
    let org = c.twice(&api("purgeOrg", json!({"org": "o1"}))).await;
    assert!(
        org["result"]["purged"].as_u64() > Some(1),
        "o1's documents: {org}"
    );
    // Nothing sealed with an old key: nothing appended, the answer kept all the same.
    let rotated = c.twice_appending(&api("rotateKey", json!({})), false).await;
    assert_eq!(rotated, json!({"result": {"resealed": 0}}));
    app.stop().await;
}

/// A call of several commands repeated while the first still runs waits for it and answers
/// what it answered (not a second, empty, run).
#[tokio::test]
async fn a_concurrent_repeat_of_a_records_call_gets_the_first_answer() {
    let app = TestApp::start().await;
    let c = Client::of(&app);
    let admin = app.admin_token();
    let api = |function: &str, body: Value| Call::records(&admin, function, body);
    let docs: Vec<Value> = (0..120)
        .map(|i| json!({"clazz": "Item", "p1": format!("i{i}")}))
        .collect();
    c.send(
        &api(
            "declareClass",
            json!({"clazz": "Item", "sync": true, "pk": ["p1"], "collections": [], "indexes": []}),
        ),
        None,
    )
    .await;
    let (status, body) = c
        .send(&api("importOrg", json!({"org": "o1", "docs": docs})), None)
        .await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let purge = api("purgeAllDocs", json!({"org": "o1", "cl": "Item"}));
    let key = uuid::Uuid::new_v4().to_string();
    let (first, second) = tokio::join!(c.send(&purge, Some(&key)), c.send(&purge, Some(&key)));
    assert_eq!(first, second, "both answered alike");
    let answer: Value = serde_json::from_slice(&first.1).expect("json");
    assert_eq!(answer, json!({"result": {"purged": 120}}));
    app.stop().await;
}

/// Keys are scoped by context, not by caller: the reply stored under a key names the caller it
/// was for, so another caller reusing the key, even with the very same request, is refused
/// (422) rather than handed someone else's answer or silently not served.
#[tokio::test]
async fn records_refuses_a_key_another_caller_already_used() {
    let app = TestApp::start().await;
    let c = Client::of(&app);
    let admin = app.admin_token();
    let api = |function: &str, body: Value| Call::records(&admin, function, body);
    let mut tokens = Vec::new();
    for org in ["o1", "o2"] {
        let (status, body) = c
            .send(&api("issueOrgToken", json!({"org": org})), None)
            .await;
        assert_eq!(status, 200);
        let body: Value = serde_json::from_slice(&body).expect("json");
        tokens.push(body["result"]["token"].as_str().expect("token").to_owned());
    }
    let same = json!({"data": {"clazz": "Item", "p1": "i1"}});
    c.send(
        &api(
            "declareClass",
            json!({"clazz": "Item", "sync": true, "pk": ["p1"], "collections": [], "indexes": []}),
        ),
        None,
    )
    .await;
    for (function, body) in [
        ("insertDoc", same.clone()),
        ("setFTP", json!({"path": "x.pdf", "dp": 1})),
        (
            "setTask",
            json!({"data": {"process": "P", "pk": ["k"], "startTime": "20300101000000000"}}),
        ),
    ] {
        let key = uuid::Uuid::new_v4().to_string();
        let call = |token: &str| Call::records(token, function, body.clone());
        let (first, _) = c.send(&call(&tokens[0]), Some(&key)).await;
        assert_eq!(first, 200, "{function}");
        let head = c.head().await;
        let (status, answer) = c.send(&call(&tokens[1]), Some(&key)).await;
        assert_eq!(
            status,
            422,
            "{function}: {}",
            String::from_utf8_lossy(&answer)
        );
        assert_eq!(c.head().await, head, "{function}: nothing appended");
        let (again, _) = c.send(&call(&tokens[1]), None).await;
        assert_eq!(
            again, 200,
            "{function}: o2's own request, without the key, is served"
        );
    }
    app.stop().await;
}

/// The headers that carry a write's input are part of what a key is bound to: the same key,
/// body and path with another `Slug` (the property's name) is another request, a 422.
#[tokio::test]
async fn a_key_reused_with_another_slug_is_422() {
    let keys = r#"{"ann-key": {"user_id": 10}}"#;
    let app = TestApp::builder()
        .data_file("resources-keys.json", keys)
        .start()
        .await;
    let c = Client::of(&app);
    let create = |slug: &str| {
        Call::raw(
            reqwest::Method::POST,
            "/resources/@api/deki/pages/1/properties",
            "same value",
            "text/plain",
        )
        .bearer("ann-key")
        .header("slug", slug)
    };
    let key = uuid::Uuid::new_v4().to_string();
    let (status, body) = c.send(&create("one"), Some(&key)).await;
    assert!(status < 300, "{status} {}", String::from_utf8_lossy(&body));
    let head = c.head().await;
    let (status, body) = c.send(&create("two"), Some(&key)).await;
    assert_eq!(status, 422, "{}", String::from_utf8_lossy(&body));
    assert_eq!(c.head().await, head, "nothing appended");
    let (again, _) = c.send(&create("one"), Some(&key)).await;
    assert!(again < 300, "the true repeat is still answered");
    app.stop().await;
}

#[tokio::test]
async fn resources_write_routes_answer_a_repeated_key_once() {
    let keys = r#"{"ann-key": {"user_id": 10}}"#;
    let app = TestApp::builder()
        .data_file("resources-keys.json", keys)
        .start()
        .await;
    let c = Client::of(&app);
    let admin = app.admin_token();
    let deki = |method: reqwest::Method, path: &str, body: &str| {
        Call::raw(
            method,
            &format!("/resources/@api/deki{path}"),
            body,
            "text/plain",
        )
        .bearer("ann-key")
    };
    use reqwest::Method as M;
    let file = c.twice(&deki(M::PUT, "/pages/1/files/a.txt", "one")).await;
    let id = file["@id"].as_str().expect("file id").to_owned();
    c.twice(&deki(M::PUT, "/pages/1/files/a.txt", "two")).await;
    c.twice(&deki(M::PUT, &format!("/files/{id}"), "two by id"))
        .await;
    c.twice(&deki(
        M::PUT,
        &format!("/files/{id}/description"),
        "about a",
    ))
    .await;
    c.twice(&deki(M::DELETE, &format!("/files/{id}/description"), ""))
        .await;
    c.twice(
        &deki(
            M::POST,
            &format!("/files/{id}/revisions?hide=true&revisionids=1"),
            "",
        )
        .bearer(&admin),
    )
    .await;
    c.twice(&deki(
        M::POST,
        &format!("/files/{id}/move?to=2&name=b.txt"),
        "",
    ))
    .await;
    c.twice(&deki(M::PUT, "/pages/3/files/c.txt", "three"))
        .await;
    c.twice(&deki(M::DELETE, "/pages/3/files/c.txt", "")).await;
    c.twice(&deki(M::DELETE, &format!("/files/{id}"), "")).await;
    c.twice(&deki(M::POST, &format!("/archive/files/restore/{id}"), "").bearer(&admin))
        .await;
    let gone = c
        .twice(&deki(M::PUT, "/pages/4/files/gone.txt", "bye"))
        .await["@id"]
        .as_str()
        .expect("file id")
        .to_owned();
    c.twice(&deki(M::DELETE, &format!("/files/{gone}"), ""))
        .await;
    c.twice(&deki(M::DELETE, &format!("/archive/files/{gone}"), "").bearer(&admin))
        .await;
    for parent in ["/pages/1", &format!("/files/{id}"), "/users/10", "/site"] {
        let who = if parent == "/site" {
            admin.as_str()
        } else {
            "ann-key"
        };
        let p = |method: reqwest::Method, tail: &str, body: &str| {
            deki(method, &format!("{parent}/properties{tail}"), body).bearer(who)
        };
        c.twice(&p(M::POST, "", "created").header("slug", "made"))
            .await;
        c.twice(&p(M::PUT, "/k", "v")).await;
        c.twice(&p(M::DELETE, "/k", "")).await;
        let batch = json!({"property": [{"@name": "b", "contents": {"@type": "text/plain", "#text": "x"}}]});
        c.twice(&Call {
            content_type: "application/json",
            ..p(M::PUT, "", &batch.to_string())
        })
        .await;
    }
    app.stop().await;
}

#[tokio::test]
async fn a_repeated_key_answers_the_position_of_the_first_write() {
    let app = TestApp::start().await;
    let http = reqwest::Client::new();
    let create = || {
        http.post(app.url("/atlas/sections"))
            .bearer_auth(app.admin_token())
            .header("idempotency-key", "k-position")
            .json(&json!({"title": "once"}))
    };
    let position_of = |answer: &reqwest::Response| {
        answer
            .headers()
            .get("palimpsest-position")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<i64>().ok())
    };
    let first = create().send().await.expect("first");
    assert_eq!(first.status(), 201);
    let written = position_of(&first).expect("the first answer names its position");
    // Something else is written in between: the repeat must name the first write's position,
    // not the head's.
    workload::post_as_admin(&app, "/atlas/sections", json!({"title": "other"})).await;
    let repeat = create().send().await.expect("repeat");
    assert_eq!(repeat.status(), 201);
    assert_eq!(
        position_of(&repeat),
        Some(written),
        "a client whose first answer was lost learns where its write is from the repeat"
    );
    app.stop().await;
}
