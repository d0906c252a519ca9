//! Answers and stored records compared with what real Etherpad 2.5.3 answered and stored for
//! the same calls (`tests/fixtures/etherpad/`, made as its README says).

mod support;

use serde_json::{Value, json};
use support::Server;

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/etherpad/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The JSON type of each field of a record (what a reader of the store relies on).
fn shape(record: &Value) -> Value {
    match record {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let kind = match v {
                        Value::Null => "null",
                        Value::String(_) => "string",
                        Value::Number(_) => "number",
                        _ => "other",
                    };
                    (k.clone(), json!(kind))
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

#[tokio::test]
async fn chat_records_are_stored_as_etherpad_stores_them() {
    let s = Server::start().await;
    let store = fixture("misc_store.json");
    s.ok("createPad", &[("padID", "chat")]).await;
    let author = s.ok("createAuthor", &[("name", "x")]).await["authorID"]
        .as_str()
        .expect("author")
        .to_owned();
    // The calls misc.json records, in its order.
    let calls: [&[(&str, &str)]; 6] = [
        &[("text", "hi"), ("authorID", "")],
        &[
            ("text", "t"),
            ("authorID", &author),
            ("time", "1700000000000"),
        ],
        &[("text", "t2"), ("authorID", &author), ("time", "soon")],
        &[("text", "t3"), ("authorID", &author)],
        &[("text", "anon")],
        &[("text", "f"), ("authorID", "a.x"), ("time", "1.5")],
    ];
    for (n, params) in calls.iter().enumerate() {
        let mut params = params.to_vec();
        params.push(("padID", "chat"));
        s.ok("appendChatMessage", &params).await;
        let ours: Value =
            serde_json::from_str(&s.raw(&format!("pad:chat:chat:{n}")).await.expect("stored"))
                .expect("json");
        let theirs = &store[format!("pad:fx_misc:chat:{n}")];
        assert_eq!(shape(&ours), shape(theirs), "chat {n}: {ours} vs {theirs}");
        assert_eq!(ours["text"], theirs["text"]);
        let same_author = theirs["authorId"] == json!("a.dWrkaIWbWd4PvMXC");
        if !same_author {
            assert_eq!(ours["authorId"], theirs["authorId"], "chat {n}");
        }
    }
    // an integer-looking time is kept as the text the caller sent, as Etherpad keeps it
    let kept: Value =
        serde_json::from_str(&s.raw("pad:chat:chat:1").await.expect("stored")).expect("json");
    assert_eq!(kept["time"], json!("1700000000000"));
    s.stop().await;
}

#[tokio::test]
async fn an_empty_mapper_gets_an_id_as_in_etherpad() {
    let s = Server::start().await;
    let misc = fixture("misc.json");
    assert_eq!(misc["groupMapper_empty"]["code"], 0);
    let group = s
        .ok("createGroupIfNotExistsFor", &[("groupMapper", "")])
        .await;
    assert!(
        group["groupID"]
            .as_str()
            .is_some_and(|g| g.starts_with("g.")),
        "{group}"
    );
    assert_eq!(
        s.ok("createGroupIfNotExistsFor", &[("groupMapper", "")])
            .await,
        group,
        "the empty mapper maps to one group"
    );
    assert_eq!(
        s.raw("mapper2group:")
            .await
            .map(|v| json!(serde_json::from_str::<Value>(&v).ok())),
        Some(json!(group["groupID"])),
        "stored under Etherpad's key"
    );
    assert_eq!(misc["authorMapper_empty"]["code"], 0);
    let author = s
        .ok("createAuthorIfNotExistsFor", &[("authorMapper", "")])
        .await;
    assert!(
        author["authorID"]
            .as_str()
            .is_some_and(|a| a.starts_with("a.")),
        "{author}"
    );
    s.stop().await;
}

/// Palimpsest has no editor connection (clients submit changesets over HTTP), so nobody is ever
/// connected to a pad: these answers are what Etherpad answers for a pad nobody has open, which
/// is what the fixture's Etherpad (with no browser connected) answered.
#[tokio::test]
async fn connected_editor_functions_answer_as_for_a_pad_nobody_has_open() {
    let s = Server::start().await;
    let misc = fixture("misc.json");
    s.ok("createPad", &[("padID", "open")]).await;
    assert_eq!(
        s.ok("padUsers", &[("padID", "open")]).await,
        misc["padUsers"]["data"]
    );
    assert_eq!(
        s.ok("padUsersCount", &[("padID", "open")]).await,
        misc["padUsersCount"]["data"]
    );
    let stats = s.ok("getStats", &[]).await;
    assert_eq!(stats["totalPads"], 1, "pads are counted");
    assert_eq!(
        (&stats["totalSessions"], &stats["totalActivePads"]),
        (
            &misc["getStats"]["data"]["totalSessions"],
            &misc["getStats"]["data"]["totalActivePads"]
        ),
        "editor sessions and active pads: none without an editor connection"
    );
    s.stop().await;
}

#[tokio::test]
async fn new_session_and_read_only_ids_take_etherpads_form() {
    let s = Server::start().await;
    let misc = fixture("misc.json");
    let hex32 = |id: &str, prefix: &str| {
        id.strip_prefix(prefix).is_some_and(|h| {
            h.len() == 32
                && h.bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        })
    };
    assert!(hex32(
        misc["getReadOnlyID"]["data"]["readOnlyID"]
            .as_str()
            .expect("ro"),
        "r."
    ));
    assert!(hex32(
        misc["createSession"]["data"]["sessionID"]
            .as_str()
            .expect("s"),
        "s."
    ));
    s.ok("createPad", &[("padID", "ids")]).await;
    let ro = s.ok("getReadOnlyID", &[("padID", "ids")]).await;
    assert!(hex32(ro["readOnlyID"].as_str().expect("ro"), "r."), "{ro}");
    let group = s.ok("createGroup", &[]).await["groupID"]
        .as_str()
        .expect("g")
        .to_owned();
    let author = s.ok("createAuthor", &[]).await["authorID"]
        .as_str()
        .expect("a")
        .to_owned();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let until = (now + 3600).to_string();
    let session = s
        .ok(
            "createSession",
            &[
                ("groupID", &group),
                ("authorID", &author),
                ("validUntil", &until),
            ],
        )
        .await;
    let id = session["sessionID"].as_str().expect("session");
    assert!(hex32(id, "s."), "{session}");
    assert_eq!(
        s.ok("getSessionInfo", &[("sessionID", id)]).await["authorID"],
        json!(author)
    );
    s.stop().await;
}

#[tokio::test]
async fn get_html_escapes_as_etherpad_does() {
    let s = Server::start().await;
    let misc = fixture("misc.json");
    for (create, html) in [("createPad_url", "getHTML_url")] {
        let text = misc[create]["params"]["text"].as_str().expect("text");
        s.post_form("createPad", &[("padID", "esc"), ("text", text)])
            .await;
        assert_eq!(
            s.ok("getHTML", &[("padID", "esc")]).await,
            misc[html]["data"]
        );
    }
    s.ok("deletePad", &[("padID", "esc")]).await;
    s.post_form(
        "createPad",
        &[("padID", "esc"), ("text", "a:b/c?d=e&f<g>\"h'i é\n")],
    )
    .await;
    assert_eq!(
        s.ok("getHTML", &[("padID", "esc")]).await,
        misc["getHTML_hex"]["data"]
    );
    s.stop().await;
}

#[tokio::test]
async fn set_html_answers_as_etherpad_through_the_api() {
    let s = Server::start().await;
    let cases = fixture("set_html.json");
    for (name, case) in cases.as_object().expect("cases") {
        let pad = format!("fx_{name}");
        s.post_form("createPad", &[("padID", &pad), ("text", "")])
            .await;
        let html = case["html_in"].as_str().expect("html");
        let (status, body) = s
            .post_form("setHTML", &[("padID", &pad), ("html", html)])
            .await;
        assert_eq!((status, &body), (200, &case["setHTML"]), "{name}");
        for function in [
            "getHTML",
            "getText",
            "getAttributePool",
            "getRevisionsCount",
        ] {
            let (_, ours) = s.get(function, &[("padID", &pad)]).await;
            assert_eq!(ours, case[function], "{name}: {function}");
        }
        for (rev, theirs) in case["revisions"]
            .as_array()
            .expect("revisions")
            .iter()
            .enumerate()
        {
            let rev = rev.to_string();
            let ours = s
                .ok("getRevisionChangeset", &[("padID", &pad), ("rev", &rev)])
                .await;
            assert_eq!(&ours, theirs, "{name}: revision {rev}");
        }
    }
    s.stop().await;
}

#[tokio::test]
async fn set_html_refuses_what_etherpad_refuses() {
    let s = Server::start().await;
    let errors = fixture("set_html_errors.json");
    for name in ["loose_li", "ace_line", "libreoffice_symbols"] {
        let case = &errors[name];
        let pad = format!("fx_err_{name}");
        s.post_form("createPad", &[("padID", &pad), ("text", "")])
            .await;
        let html = case["html_in"].as_str().expect("html");
        let (_, body) = s
            .post_form("setHTML", &[("padID", &pad), ("html", html)])
            .await;
        assert_eq!(body, case["setHTML"], "{name}");
        let (_, text) = s.get("getText", &[("padID", &pad)]).await;
        assert_eq!(text, case["getText"], "{name}");
    }
    s.post_form("createPad", &[("padID", "fx_err_nohtml"), ("text", "")])
        .await;
    let (_, body) = s.post_form("setHTML", &[("padID", "fx_err_nohtml")]).await;
    assert_eq!(body, errors["missing_html"]["setHTML"]);
    let (_, body) = s
        .post_form(
            "setHTML",
            &[("padID", "fx_err_nopad"), ("html", "<p>x</p>")],
        )
        .await;
    assert_eq!(body, errors["missing_pad"]["setHTML"]);
    s.stop().await;
}

#[tokio::test]
async fn the_openapi_document_covers_every_function_and_describes_its_answers() {
    let s = Server::start().await;
    let doc: Value = s
        .http
        .get(format!("{}/api/openapi.json", s.base))
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(doc["openapi"], "3.0.2");
    let theirs = fixture("openapi.json");
    let ours_paths: Vec<&String> = doc["paths"].as_object().expect("paths").keys().collect();
    let their_paths: Vec<&String> = theirs["paths"].as_object().expect("paths").keys().collect();
    let mut a = ours_paths.clone();
    let mut b = their_paths.clone();
    a.sort();
    b.sort();
    assert_eq!(a, b, "the same functions as Etherpad's document");

    s.ok("createPad", &[("padID", "doc"), ("text", "hello")])
        .await;
    let group = s.ok("createGroup", &[]).await["groupID"]
        .as_str()
        .expect("g")
        .to_owned();
    let author = s.ok("createAuthor", &[("name", "x")]).await["authorID"]
        .as_str()
        .expect("a")
        .to_owned();
    let until = "99999999999";
    let session = s
        .ok(
            "createSession",
            &[
                ("groupID", &group),
                ("authorID", &author),
                ("validUntil", until),
            ],
        )
        .await["sessionID"]
        .as_str()
        .expect("s")
        .to_owned();
    s.ok(
        "appendChatMessage",
        &[("padID", "doc"), ("text", "hi"), ("authorID", &author)],
    )
    .await;
    let calls: &[(&str, &[(&str, &str)])] = &[
        ("getText", &[("padID", "doc")]),
        ("getHTML", &[("padID", "doc")]),
        ("getAttributePool", &[("padID", "doc")]),
        ("getRevisionsCount", &[("padID", "doc")]),
        ("getSavedRevisionsCount", &[("padID", "doc")]),
        ("listSavedRevisions", &[("padID", "doc")]),
        ("getLastEdited", &[("padID", "doc")]),
        ("getReadOnlyID", &[("padID", "doc")]),
        ("listAuthorsOfPad", &[("padID", "doc")]),
        ("padUsersCount", &[("padID", "doc")]),
        ("padUsers", &[("padID", "doc")]),
        ("getChatHistory", &[("padID", "doc")]),
        ("getChatHead", &[("padID", "doc")]),
        ("listAllPads", &[]),
        ("listAllGroups", &[]),
        ("getStats", &[]),
        ("listPads", &[("groupID", &group)]),
        ("getSessionInfo", &[("sessionID", &session)]),
        ("listSessionsOfGroup", &[("groupID", &group)]),
        ("listSessionsOfAuthor", &[("authorID", &author)]),
        ("listPadsOfAuthor", &[("authorID", &author)]),
        ("copyPad", &[("sourceID", "doc"), ("destinationID", "doc2")]),
    ];
    for (function, params) in calls {
        let data = s.ok(function, params).await;
        let schema = &doc["paths"][format!("/{function}")]["get"]["responses"]["200"]["content"]["application/json"]
            ["schema"]["properties"]["data"];
        if let Some(props) = schema["properties"].as_object() {
            let keys: Vec<&String> = data
                .as_object()
                .unwrap_or_else(|| panic!("{function}: {data}"))
                .keys()
                .collect();
            let documented: Vec<&String> = props.keys().collect();
            assert_eq!(keys, documented, "{function}: {data}");
        } else if let Some(each) = schema["additionalProperties"]["properties"].as_object() {
            for (_, value) in data.as_object().expect("object") {
                let keys: Vec<&String> = value.as_object().expect("object").keys().collect();
                assert_eq!(keys, each.keys().collect::<Vec<_>>(), "{function}: {data}");
            }
        }
    }
    s.stop().await;
}
