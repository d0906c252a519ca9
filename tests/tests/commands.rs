//! The one command path, end to end through the real app: every write route of every context
//! sent twice with the same `Idempotency-Key` answers the same status and body and appends once;
//! the key reused with another body is a 422; a connection killed after the append and retried
//! with its key appends nothing more; concurrent writers on one stream get a success or a 409,
//! never a 5xx; a write right after a create does not depend on a projector.

use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// One write request: method, path, body and its media type.
#[derive(Clone, Debug)]
struct Call {
    method: reqwest::Method,
    path: String,
    body: String,
    content_type: &'static str,
}

impl Call {
    fn json(path: &str, body: Value) -> Call {
        Call {
            method: reqwest::Method::POST,
            path: path.to_owned(),
            body: body.to_string(),
            content_type: "application/json",
        }
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
        }
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
        } else if self.content_type == "application/json" {
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

impl Client<'_> {
    async fn send(&self, call: &Call, key: Option<&str>) -> (u16, Vec<u8>) {
        let mut req = self
            .http
            .request(call.method.clone(), self.app.url(&call.path))
            .header("content-type", call.content_type)
            .body(call.body.clone());
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
        assert!(after_first > before, "{}: nothing appended", call.path);
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
        serde_json::from_slice(&first.1).expect("json answer")
    }
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
    let c = Client {
        app: &app,
        http: reqwest::Client::new(),
    };
    let k = pads_key(&app);
    let pad = |f: &str, p: &[(&str, &str)]| Call::pads(&k, f, p);

    // pads: every function that writes.
    let group = c.twice(&pad("createGroup", &[])).await["data"]["groupID"].clone();
    let group = group.as_str().expect("groupID").to_owned();
    c.twice(&pad("createGroupIfNotExistsFor", &[("groupMapper", "m1")]))
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

    // atlas: every route that writes.
    let section = c
        .twice(&Call::json(
            "/atlas/sections",
            json!({"title": "Rome", "created_by": "u1"}),
        ))
        .await["id"]
        .as_str()
        .expect("section id")
        .to_owned();
    let s = |tail: &str| format!("/atlas/sections/{section}/{tail}");
    c.twice(&Call::json(&s("lock"), json!({"user_id": "u1"})))
        .await;
    c.twice(&Call::json(&s("unlock"), json!({"user_id": "u1"})))
        .await;
    let snapshot = json!({
        "schema_version": 1,
        "entities": [{"operation": "create", "id": "rome", "name": "Rome", "slug": "rome", "type_id": "city"}],
        "geometries": [{"operation": "create", "id": "g-rome", "type": "city", "draw_geometry": {"type": "Point", "coordinates": [12.5, 41.9]}}],
        "link_scopes": [{"geometry_id": "g-rome", "entity_ids": ["rome"]}]
    });
    let commit = c
        .twice(&Call::json(
            &s("commits"),
            json!({"snapshot": snapshot, "created_by": "u1"}),
        ))
        .await["commit"]["id"]
        .as_str()
        .expect("commit id")
        .to_owned();
    c.twice(&Call::json(
        &s("restore"),
        json!({"commit_id": commit, "created_by": "u1"}),
    ))
    .await;
    let submission = c
        .twice(&Call::json(&s("submit"), json!({"submitted_by": "u1"})))
        .await["submission"]["id"]
        .as_str()
        .expect("submission id")
        .to_owned();
    c.twice(&Call::json(
        &format!("/atlas/submissions/{submission}/approve"),
        json!({"reviewed_by": "r1"}),
    ))
    .await;
    let other = c
        .twice(&Call::json("/atlas/sections", json!({"title": "Carthage"})))
        .await["id"]
        .as_str()
        .expect("section id")
        .to_owned();
    let o = |tail: &str| format!("/atlas/sections/{other}/{tail}");
    c.twice(&Call::json(
        &o("commits"),
        json!({"snapshot": snapshot, "created_by": "u2"}),
    ))
    .await;
    let second = c
        .twice(&Call::json(&o("submit"), json!({"submitted_by": "u2"})))
        .await["submission"]["id"]
        .as_str()
        .expect("submission id")
        .to_owned();
    c.twice(&Call::json(
        &format!("/atlas/submissions/{second}/reject"),
        json!({"reviewed_by": "r1"}),
    ))
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
    let c = Client {
        app: &app,
        http: reqwest::Client::new(),
    };
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
            &Call::json("/atlas/sections", json!({"title": "hot"})),
            None,
        )
        .await
        .1,
    )
    .expect("section");
    let section = section["id"].as_str().expect("id").to_owned();

    let mut writers = Vec::new();
    for i in 0..24 {
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
            let res = http
                .post(format!("{app_url}{path}"))
                .header("content-type", ctype)
                .body(body)
                .send()
                .await
                .expect("request");
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
    let c = Client {
        app: &app,
        http: reqwest::Client::new(),
    };
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
    let section: Value = serde_json::from_slice(
        &c.send(&Call::json("/atlas/sections", json!({"title": "t"})), None)
            .await
            .1,
    )
    .expect("section");
    let id = section["id"].as_str().expect("id");
    let (status, _) = c
        .send(
            &Call::json(
                &format!("/atlas/sections/{id}/lock"),
                json!({"user_id": "u"}),
            ),
            None,
        )
        .await;
    assert_eq!(status, 200);
    app.stop().await;
}

#[tokio::test]
async fn docs_write_routes_answer_a_repeated_key_once() {
    let app = TestApp::start().await;
    let c = Client {
        app: &app,
        http: reqwest::Client::new(),
    };
    let with = |method: reqwest::Method, path: &str, body: Value| Call {
        method,
        ..Call::json(path, body)
    };
    let bodiless = |method: reqwest::Method, path: &str| Call {
        body: String::new(),
        ..with(method, path, json!({}))
    };
    c.twice(&bodiless(reqwest::Method::PUT, "/docs/keyed"))
        .await;
    let created = c
        .twice(&with(
            reqwest::Method::PUT,
            "/docs/keyed/d1",
            json!({"a": 1}),
        ))
        .await;
    let rev = created["rev"].as_str().expect("rev").to_owned();
    c.twice(&Call::json(
        "/docs/keyed/_bulk_docs",
        json!({"docs": [{"_id": "d2", "b": 2}, {"_id": "d3", "c": 3}]}),
    ))
    .await;
    c.twice(&Call::json(
        "/docs/keyed",
        json!({"_id": "d4", "posted": true}),
    ))
    .await;
    c.twice(&with(
        reqwest::Method::PUT,
        "/docs/keyed/_local/checkpoint",
        json!({"seq": 1}),
    ))
    .await;
    c.twice(&bodiless(
        reqwest::Method::DELETE,
        &format!("/docs/keyed/d1?rev={rev}"),
    ))
    .await;
    app.stop().await;
}
