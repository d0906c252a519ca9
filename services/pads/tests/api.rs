//! Etherpad's HTTP API through the pads router, against a real database and projector, in the
//! order Etherpad's own API tests drive it.

mod support;

use serde_json::{Value, json};
use support::Server;

#[tokio::test]
async fn version_listing_key_check_and_unknown_functions() {
    let s = Server::start().await;
    let body: Value = s
        .http
        .get(format!("{}/api", s.base))
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(body, json!({"currentVersion": "1.3.0"}));

    let res = s
        .http
        .get(format!("{}/api/1.3.0/createGroup", s.base))
        .send()
        .await
        .expect("get");
    assert_eq!(res.status().as_u16(), 401);
    let body: Value = res.json().await.expect("json");
    assert_eq!(
        body,
        json!({"code": 4, "message": "no or wrong API Key", "data": null})
    );

    let (status, body) = s.get("noSuchFunction", &[]).await;
    assert_eq!((status, body["code"].clone()), (404, json!(3)));
    let (status, body) = s.get_version("9.9", "getText", &[]).await;
    assert_eq!(
        (status, body["message"].clone()),
        (404, json!("no such api version"))
    );
    // appendText does not exist before 1.2.13.
    let (status, _) = s.get_version("1.2.12", "appendText", &[]).await;
    assert_eq!(status, 404);
    assert_eq!(s.event_count().await, 0, "refused calls append nothing");
    s.stop().await;
}

#[tokio::test]
async fn groups_authors_and_sessions_as_etherpads_tests_drive_them() {
    let s = Server::start().await;
    let group = s.ok("createGroup", &[]).await["groupID"]
        .as_str()
        .expect("id")
        .to_owned();
    assert!(group.starts_with("g.") && group.len() == 18);
    assert_eq!(
        s.ok("listSessionsOfGroup", &[("groupID", &group)]).await,
        Value::Null
    );
    s.ok("deleteGroup", &[("groupID", &group)]).await;
    assert_eq!(
        s.refused("deleteGroup", &[("groupID", &group)]).await,
        "groupID does not exist"
    );

    // createGroupIfNotExistsFor maps, returns the same group again, and deleting cleans up.
    let mapped = s
        .ok("createGroupIfNotExistsFor", &[("groupMapper", "m1")])
        .await["groupID"]
        .clone();
    assert_eq!(
        s.ok("createGroupIfNotExistsFor", &[("groupMapper", "m1")])
            .await["groupID"],
        mapped
    );
    let mapped = mapped.as_str().expect("id").to_owned();
    assert_eq!(
        s.raw("mapper2group:m1").await,
        Some(format!("\"{mapped}\""))
    );
    assert_eq!(
        s.raw(&format!("group:{mapped}")).await.as_deref(),
        Some(r#"{"pads":{},"mappings":{"m1":1}}"#)
    );
    s.ok("deleteGroup", &[("groupID", &mapped)]).await;
    assert_eq!(s.raw("mapper2group:m1").await, None);

    // Issue 4227: a group with two sessions and two pads is deleted with all of them.
    let group = s.ok("createGroup", &[]).await["groupID"]
        .as_str()
        .expect("id")
        .to_owned();
    let author = s.ok("createAuthor", &[]).await["authorID"]
        .as_str()
        .expect("id")
        .to_owned();
    let until = "999999999999";
    let s1 = s
        .ok(
            "createSession",
            &[
                ("authorID", &author),
                ("groupID", &group),
                ("validUntil", until),
            ],
        )
        .await;
    let s2 = s
        .ok(
            "createSession",
            &[
                ("authorID", &author),
                ("groupID", &group),
                ("validUntil", until),
            ],
        )
        .await;
    let (s1, s2) = (
        s1["sessionID"].as_str().expect("id"),
        s2["sessionID"].as_str().expect("id"),
    );
    s.ok(
        "createGroupPad",
        &[("groupID", &group), ("padName", "x1234567")],
    )
    .await;
    s.ok(
        "createGroupPad",
        &[("groupID", &group), ("padName", "x12345678")],
    )
    .await;
    assert_eq!(
        s.raw(&format!("group2sessions:{group}")).await,
        Some(format!(r#"{{"sessionIDs":{{"{s1}":1,"{s2}":1}}}}"#))
    );
    s.ok("deleteGroup", &[("groupID", &group)]).await;
    for key in [
        format!("group:{group}"),
        format!("group2sessions:{group}"),
        format!("session:{s1}"),
        format!("pad:{group}$x1234567"),
        format!("pad:{group}$x1234567:revs:0"),
    ] {
        assert_eq!(s.raw(&key).await, None, "{key} should be gone");
    }
    assert_eq!(
        s.raw(&format!("author2sessions:{author}")).await.as_deref(),
        Some(r#"{"sessionIDs":{}}"#)
    );
    assert!(
        !s.ok("listAllGroups", &[]).await["groupIDs"]
            .as_array()
            .expect("ids")
            .contains(&json!(group))
    );

    // Authors.
    let group = s.ok("createGroup", &[]).await["groupID"]
        .as_str()
        .expect("id")
        .to_owned();
    let john = s.ok("createAuthor", &[("name", "john")]).await["authorID"]
        .as_str()
        .expect("id")
        .to_owned();
    let chris = s
        .ok("createAuthorIfNotExistsFor", &[("authorMapper", "chris")])
        .await["authorID"]
        .clone();
    assert_eq!(
        s.ok("createAuthorIfNotExistsFor", &[("authorMapper", "chris")])
            .await["authorID"],
        chris
    );
    assert_eq!(
        s.ok("getAuthorName", &[("authorID", &john)]).await,
        json!("john")
    );

    // Sessions.
    let session = s
        .ok(
            "createSession",
            &[
                ("authorID", &john),
                ("groupID", &group),
                ("validUntil", until),
            ],
        )
        .await;
    let session = session["sessionID"].as_str().expect("id").to_owned();
    let info = s.ok("getSessionInfo", &[("sessionID", &session)]).await;
    assert_eq!(
        info,
        json!({"groupID": group, "authorID": john, "validUntil": 999999999999_i64})
    );
    let listed = s.ok("listSessionsOfGroup", &[("groupID", &group)]).await;
    assert_eq!(listed[&session], info);
    assert_eq!(
        s.ok("listSessionsOfAuthor", &[("authorID", &john)]).await[&session],
        info
    );
    s.ok("deleteSession", &[("sessionID", &session)]).await;
    assert_eq!(
        s.refused("getSessionInfo", &[("sessionID", &session)])
            .await,
        "sessionID does not exist"
    );
    assert_eq!(
        s.raw(&format!("group2sessions:{group}")).await.as_deref(),
        Some(r#"{"sessionIDs":{}}"#)
    );
    assert_eq!(
        s.refused(
            "createSession",
            &[
                ("authorID", &john),
                ("groupID", &group),
                ("validUntil", "1")
            ]
        )
        .await,
        "validUntil is in the past"
    );
    assert_eq!(
        s.refused(
            "createSession",
            &[
                ("authorID", "a.nobody"),
                ("groupID", &group),
                ("validUntil", until)
            ]
        )
        .await,
        "authorID does not exist"
    );

    // Group pads and public status.
    assert_eq!(
        s.ok("listPads", &[("groupID", &group)]).await["padIDs"],
        json!([])
    );
    let pad = s
        .ok(
            "createGroupPad",
            &[("groupID", &group), ("padName", "mypad")],
        )
        .await["padID"]
        .clone();
    let pad = pad.as_str().expect("id").to_owned();
    assert_eq!(pad, format!("{group}$mypad"));
    assert_eq!(
        s.refused(
            "createGroupPad",
            &[("groupID", &group), ("padName", "mypad")]
        )
        .await,
        "padName does already exist"
    );
    assert_eq!(
        s.ok("listPads", &[("groupID", &group)]).await["padIDs"],
        json!([pad])
    );
    assert_eq!(
        s.ok("getPublicStatus", &[("padID", &pad)]).await["publicStatus"],
        json!(false)
    );
    s.ok(
        "setPublicStatus",
        &[("padID", &pad), ("publicStatus", "true")],
    )
    .await;
    assert_eq!(
        s.ok("getPublicStatus", &[("padID", &pad)]).await["publicStatus"],
        json!(true)
    );
    assert_eq!(
        s.refused("getPublicStatus", &[("padID", "notagrouppad")])
            .await,
        "You can only get/set the publicStatus of pads that belong to a group"
    );
    assert_eq!(
        s.ok("listPadsOfAuthor", &[("authorID", &john)]).await["padIDs"],
        json!([])
    );
    s.stop().await;
}

/// A long random-ish text, as Etherpad's tests use (80,000 characters).
fn long_text() -> String {
    let chars: Vec<char> = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        .chars()
        .collect();
    (0..80_000)
        .map(|i| chars[(i * 7919 + 13) % chars.len()])
        .collect()
}

#[tokio::test]
async fn pads_as_etherpads_pad_tests_drive_them() {
    let s = Server::start().await;
    let (pad, moved, copied, other) = ("testpad", "newpad", "copiedpad", "anotherpad");
    // Deleting a missing pad is refused (code 1, status 200).
    assert_eq!(
        s.refused("deletePad", &[("padID", pad)]).await,
        "padID does not exist"
    );
    s.ok("createPad", &[("padID", pad)]).await;
    assert_eq!(
        s.ok("getRevisionsCount", &[("padID", pad)]).await["revisions"],
        json!(0)
    );
    assert_eq!(
        s.ok("getSavedRevisionsCount", &[("padID", pad)]).await["savedRevisions"],
        json!(0)
    );
    assert_eq!(
        s.ok("listSavedRevisions", &[("padID", pad)]).await["savedRevisions"],
        json!([])
    );
    let text = s.ok("getText", &[("padID", pad)]).await["text"]
        .as_str()
        .expect("text")
        .to_owned();
    assert!(text.starts_with("Welcome to Etherpad!\n\n"));
    assert!(
        s.ok("getHTML", &[("padID", pad)]).await["html"]
            .as_str()
            .expect("html")
            .len()
            > 1
    );
    assert!(
        s.ok("listAllPads", &[]).await["padIDs"]
            .as_array()
            .expect("ids")
            .contains(&json!(pad))
    );
    s.ok("deletePad", &[("padID", pad)]).await;
    assert!(
        !s.ok("listAllPads", &[]).await["padIDs"]
            .as_array()
            .expect("ids")
            .contains(&json!(pad))
    );
    assert_eq!(
        s.refused("getHTML", &[("padID", pad)]).await,
        "padID does not exist"
    );

    s.ok("createPad", &[("padID", pad), ("text", "testText")])
        .await;
    assert_eq!(
        s.ok("getText", &[("padID", pad)]).await["text"],
        json!("testText\n")
    );
    let (_, body) = s
        .post_json("setText", json!({"padID": pad, "text": "testTextTwo"}))
        .await;
    assert_eq!(body["code"], 0, "{body}");
    assert_eq!(
        s.ok("getText", &[("padID", pad)]).await["text"],
        json!("testTextTwo\n")
    );
    assert_eq!(
        s.ok("getRevisionsCount", &[("padID", pad)]).await["revisions"],
        json!(1)
    );
    s.ok("saveRevision", &[("padID", pad)]).await;
    assert_eq!(
        s.ok("getSavedRevisionsCount", &[("padID", pad)]).await["savedRevisions"],
        json!(1)
    );
    assert_eq!(
        s.ok("listSavedRevisions", &[("padID", pad)]).await["savedRevisions"],
        json!([1])
    );
    let ro = s.ok("getReadOnlyID", &[("padID", pad)]).await["readOnlyID"]
        .as_str()
        .expect("ro")
        .to_owned();
    assert!(
        ro.starts_with("r.") && ro.len() == 34,
        "Etherpad's r. + 32 hex: {ro}"
    );
    assert_eq!(
        s.ok("getReadOnlyID", &[("padID", pad)]).await["readOnlyID"],
        json!(ro),
        "stable"
    );
    assert_eq!(
        s.ok("getPadID", &[("roID", &ro)]).await["padID"],
        json!(pad)
    );
    assert_eq!(
        s.ok("listAuthorsOfPad", &[("padID", pad)]).await["authorIDs"],
        json!([])
    );
    let last = s.ok("getLastEdited", &[("padID", pad)]).await["lastEdited"]
        .as_i64()
        .expect("ts");
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    s.post_form("setText", &[("padID", pad), ("text", "testTextThree")])
        .await;
    assert!(
        s.ok("getLastEdited", &[("padID", pad)]).await["lastEdited"]
            .as_i64()
            .expect("ts")
            > last
    );
    s.ok("deletePad", &[("padID", pad)]).await;
    assert_eq!(
        s.refused("getPadID", &[("roID", &ro)]).await,
        "padID does not exist"
    );
    assert_eq!(s.raw(&format!("readonly2pad:{ro}")).await, None);
    assert_eq!(s.raw(&format!("pad2readonly:{pad}")).await, None);

    s.ok("createPad", &[("padID", pad)]).await;
    let long = long_text();
    let (_, body) = s
        .post_form("setText", &[("padID", pad), ("text", &long)])
        .await;
    assert_eq!(body["code"], 0);
    assert_eq!(
        s.ok("getText", &[("padID", pad)]).await["text"],
        json!(format!("{long}\n"))
    );
    s.post_form("setText", &[("padID", pad), ("text", &format!("{long}\n"))])
        .await;
    assert_eq!(
        s.ok("getText", &[("padID", pad)]).await["text"],
        json!(format!("{long}\n")),
        "no excess newline"
    );
    assert_ne!(
        s.ok("getLastEdited", &[("padID", pad)]).await["lastEdited"],
        json!(0)
    );

    s.ok(
        "movePad",
        &[
            ("sourceID", pad),
            ("destinationID", moved),
            ("force", "true"),
        ],
    )
    .await;
    assert_eq!(
        s.ok("getText", &[("padID", moved)]).await["text"],
        json!(format!("{long}\n"))
    );
    assert_eq!(
        s.refused("getText", &[("padID", pad)]).await,
        "padID does not exist"
    );
    s.ok(
        "movePad",
        &[
            ("sourceID", moved),
            ("destinationID", pad),
            ("force", "false"),
        ],
    )
    .await;
    assert_eq!(
        s.ok("getText", &[("padID", pad)]).await["text"],
        json!(format!("{long}\n"))
    );

    s.ok_version("1.2.13", "appendText", &[("padID", pad), ("text", "hello")])
        .await;
    assert_eq!(
        s.ok("getText", &[("padID", pad)]).await["text"],
        json!(format!("{long}hello\n"))
    );
    let rev = s.ok("getRevisionsCount", &[("padID", pad)]).await["revisions"]
        .as_i64()
        .expect("rev");
    let old = s
        .ok(
            "getText",
            &[("padID", pad), ("rev", &(rev - 1).to_string())],
        )
        .await;
    assert_eq!(old["text"], json!(format!("{long}\n")));
    assert_eq!(
        s.refused(
            "getText",
            &[("padID", pad), ("rev", &(rev + 1).to_string())]
        )
        .await,
        "rev is higher than the head revision of the pad"
    );
    assert_eq!(
        s.refused("getText", &[("padID", pad), ("rev", "abc")])
            .await,
        "rev is not a number"
    );

    for bad in ["/", "#", "?", "&"] {
        assert_eq!(
            s.get("createPad", &[("padID", bad)]).await.1["code"],
            json!(1)
        );
    }

    s.ok(
        "copyPad",
        &[
            ("sourceID", pad),
            ("destinationID", copied),
            ("force", "true"),
        ],
    )
    .await;
    assert_eq!(
        s.ok("getText", &[("padID", copied)]).await["text"],
        json!(format!("{long}hello\n"))
    );
    assert_eq!(
        s.refused(
            "copyPad",
            &[
                ("sourceID", pad),
                ("destinationID", copied),
                ("force", "false")
            ]
        )
        .await,
        "destinationID already exists"
    );

    // An identical setText adds no revision.
    s.post_form("setText", &[("padID", pad), ("text", "identical text\n")])
        .await;
    assert_eq!(
        s.ok("getText", &[("padID", pad)]).await["text"],
        json!("identical text\n")
    );
    let count = s.ok("getRevisionsCount", &[("padID", pad)]).await["revisions"].clone();
    let before = s.event_count().await;
    s.post_form("setText", &[("padID", pad), ("text", "identical text\n")])
        .await;
    assert_eq!(
        s.ok("getRevisionsCount", &[("padID", pad)]).await["revisions"],
        count
    );
    assert_eq!(s.event_count().await, before, "nothing appended");

    s.ok("createPad", &[("padID", other), ("text", "")]).await;
    assert_eq!(
        s.ok("getText", &[("padID", other)]).await["text"],
        json!("\n")
    );
    s.ok("deletePad", &[("padID", other)]).await;
    s.stop().await;
}

#[tokio::test]
async fn chat_as_etherpads_chat_tests_drive_it() {
    let s = Server::start().await;
    s.ok("createPad", &[("padID", "chatpad")]).await;
    let author = s.ok("createAuthor", &[("name", "ann")]).await["authorID"]
        .as_str()
        .expect("id")
        .to_owned();
    assert_eq!(
        s.ok("getChatHead", &[("padID", "chatpad")]).await["chatHead"],
        json!(-1)
    );
    let time = "1359199533759";
    s.ok(
        "appendChatMessage",
        &[
            ("padID", "chatpad"),
            ("text", "blalblalbha"),
            ("authorID", &author),
            ("time", time),
        ],
    )
    .await;
    assert_eq!(
        s.ok("getChatHead", &[("padID", "chatpad")]).await["chatHead"],
        json!(0)
    );
    let messages = s.ok("getChatHistory", &[("padID", "chatpad")]).await["messages"].clone();
    assert_eq!(
        messages,
        json!([{"text": "blalblalbha", "time": time, "userId": author, "userName": "ann"}])
    );
    // Etherpad keeps a time given as text as that text.
    assert_eq!(
        s.raw("pad:chatpad:chat:0").await,
        Some(format!(
            r#"{{"text":"blalblalbha","authorId":"{author}","time":"{time}"}}"#
        ))
    );
    assert_eq!(
        s.refused(
            "getChatHistory",
            &[("padID", "chatpad"), ("start", "2"), ("end", "5")]
        )
        .await,
        "start is higher than the current chatHead"
    );
    assert_eq!(
        s.refused("appendChatMessage", &[("padID", "chatpad")])
            .await,
        "text is not a string"
    );
    // A chat message to a missing pad creates it, as in Etherpad.
    s.ok("appendChatMessage", &[("padID", "newchat"), ("text", "hi")])
        .await;
    assert_eq!(
        s.ok("getChatHead", &[("padID", "newchat")]).await["chatHead"],
        json!(0)
    );
    assert!(
        s.ok("getText", &[("padID", "newchat")]).await["text"]
            .as_str()
            .expect("t")
            .starts_with("Welcome")
    );
    s.stop().await;
}

#[tokio::test]
async fn copies_without_history_and_restores_revisions() {
    let s = Server::start().await;
    let author = s.ok("createAuthor", &[]).await["authorID"]
        .as_str()
        .expect("id")
        .to_owned();
    s.ok(
        "createPad",
        &[
            ("padID", "src"),
            ("text", "one\ntwo"),
            ("authorId", &author),
        ],
    )
    .await;
    s.ok(
        "appendText",
        &[("padID", "src"), ("text", "\nthree"), ("authorId", &author)],
    )
    .await;
    assert_eq!(
        s.ok("getText", &[("padID", "src")]).await["text"],
        json!("one\ntwo\nthree\n")
    );
    assert_eq!(
        s.ok("listAuthorsOfPad", &[("padID", "src")]).await["authorIDs"],
        json!([author])
    );
    assert_eq!(
        s.ok("listPadsOfAuthor", &[("authorID", &author)]).await["padIDs"],
        json!(["src"])
    );

    s.ok(
        "copyPadWithoutHistory",
        &[
            ("sourceID", "src"),
            ("destinationID", "dst"),
            ("force", "false"),
        ],
    )
    .await;
    // As in Etherpad, the copy ends with one more newline than its source.
    assert_eq!(
        s.ok("getText", &[("padID", "dst")]).await["text"],
        json!("one\ntwo\nthree\n\n")
    );
    assert_eq!(
        s.ok("getRevisionsCount", &[("padID", "dst")]).await["revisions"],
        json!(1)
    );
    assert_eq!(
        s.ok("listPadsOfAuthor", &[("authorID", &author)]).await["padIDs"],
        json!(["src", "dst"])
    );
    assert_eq!(
        s.refused(
            "copyPadWithoutHistory",
            &[
                ("sourceID", "src"),
                ("destinationID", "dst"),
                ("force", "false")
            ]
        )
        .await,
        "destinationID already exists"
    );
    s.ok(
        "copyPadWithoutHistory",
        &[
            ("sourceID", "src"),
            ("destinationID", "dst"),
            ("force", "true"),
        ],
    )
    .await;
    assert_eq!(
        s.refused(
            "copyPadWithoutHistory",
            &[
                ("sourceID", "src"),
                ("destinationID", "g.aaaaaaaaaaaaaaaa$x"),
                ("force", "true")
            ]
        )
        .await,
        "groupID does not exist for destinationID"
    );

    // restoreRevision brings back revision 0's text (plus Etherpad's extra newline), by the
    // given author in 1.3.0 and by nobody in 1.2.11.
    s.ok(
        "restoreRevision",
        &[("padID", "src"), ("rev", "0"), ("authorId", &author)],
    )
    .await;
    assert_eq!(
        s.ok("getText", &[("padID", "src")]).await["text"],
        json!("one\ntwo\n\n")
    );
    let rev: Value =
        serde_json::from_str(&s.raw("pad:src:revs:2").await.expect("rev 2")).expect("json");
    assert_eq!(rev["meta"]["author"], json!(author));
    s.ok_version(
        "1.2.11",
        "restoreRevision",
        &[("padID", "src"), ("rev", "1"), ("authorId", &author)],
    )
    .await;
    let rev: Value =
        serde_json::from_str(&s.raw("pad:src:revs:3").await.expect("rev 3")).expect("json");
    assert_eq!(rev["meta"]["author"], json!(""));
    assert_eq!(
        s.refused("restoreRevision", &[("padID", "src")]).await,
        "rev is not defined"
    );
    s.stop().await;
}

#[tokio::test]
async fn store_records_have_etherpads_exact_bytes() {
    let s = Server::start().await;
    let author = s.ok("createAuthor", &[("name", "ann")]).await["authorID"]
        .as_str()
        .expect("id")
        .to_owned();
    s.ok(
        "createPad",
        &[("padID", "bytes"), ("text", "hi"), ("authorId", &author)],
    )
    .await;
    let rev0 = s.raw("pad:bytes:revs:0").await.expect("rev 0");
    let ts = serde_json::from_str::<Value>(&rev0).expect("json")["meta"]["timestamp"]
        .as_i64()
        .expect("ts");
    assert_eq!(
        s.raw("pad:bytes").await.expect("pad"),
        format!(
            r#"{{"atext":{{"text":"hi\n","attribs":"|1+3"}},"pool":{{"numToAttrib":{{"0":["author","{author}"]}},"nextNum":1}},"head":0,"chatHead":-1,"publicStatus":false,"savedRevisions":[]}}"#
        )
    );
    assert_eq!(
        rev0,
        format!(
            r#"{{"changeset":"Z:1>2+2$hi","meta":{{"author":"{author}","timestamp":{ts},"pool":{{"numToAttrib":{{"0":["author","{author}"]}},"attribToNum":{{"author,{author}":0}},"nextNum":1}},"atext":{{"text":"hi\n","attribs":"|1+3"}}}}}}"#
        )
    );
    let record: Value = serde_json::from_str(
        &s.raw(&format!("globalAuthor:{author}"))
            .await
            .expect("author"),
    )
    .expect("json");
    let raw_author = s
        .raw(&format!("globalAuthor:{author}"))
        .await
        .expect("author");
    assert_eq!(
        raw_author,
        format!(
            r#"{{"colorId":{},"name":"ann","timestamp":{},"padIDs":{{"bytes":1}}}}"#,
            record["colorId"], record["timestamp"]
        )
    );
    s.ok("appendText", &[("padID", "bytes"), ("text", "!")])
        .await;
    let rev1: Value =
        serde_json::from_str(&s.raw("pad:bytes:revs:1").await.expect("rev 1")).expect("json");
    assert_eq!(rev1["changeset"], json!("Z:3>1=2+1$!"));
    assert!(
        rev1["meta"].get("atext").is_none(),
        "only key revisions carry the text"
    );
    assert_eq!(s.raw("groups").await, None, "no group yet");
    let g = s.ok("createGroup", &[]).await["groupID"]
        .as_str()
        .expect("id")
        .to_owned();
    assert_eq!(s.raw("groups").await, Some(format!(r#"{{"{g}":1}}"#)));
    s.stop().await;
}

#[tokio::test]
async fn key_revisions_every_100_make_any_revision_readable() {
    let s = Server::start().await;
    s.ok("createPad", &[("padID", "long"), ("text", "")]).await;
    let mut expected = vec!["\n".to_owned()];
    for i in 1..=230 {
        let current = expected.last().expect("text").clone();
        if i % 37 == 0 {
            let replaced = format!("reset {i}\nline two\n");
            s.post_form("setText", &[("padID", "long"), ("text", &replaced)])
                .await;
            expected.push(replaced);
        } else {
            s.ok(
                "appendText",
                &[("padID", "long"), ("text", &format!("{i},"))],
            )
            .await;
            let body = current.strip_suffix('\n').expect("newline");
            expected.push(format!("{body}{i},\n"));
        }
    }
    for key_rev in [0, 100, 200] {
        let rev: Value = serde_json::from_str(
            &s.raw(&format!("pad:long:revs:{key_rev}"))
                .await
                .expect("rev"),
        )
        .expect("json");
        assert!(
            rev["meta"]["atext"].is_object(),
            "revision {key_rev} is a key revision"
        );
        assert_eq!(rev["meta"]["atext"]["text"], json!(expected[key_rev]));
        assert!(rev["meta"]["pool"]["attribToNum"].is_object());
    }
    let rev: Value =
        serde_json::from_str(&s.raw("pad:long:revs:150").await.expect("rev")).expect("json");
    assert!(rev["meta"].get("atext").is_none());
    for r in (0..=230).filter(|r| r % 7 == 0 || (98..=102).contains(r) || (198..=202).contains(r)) {
        assert_eq!(
            s.ok("getText", &[("padID", "long"), ("rev", &r.to_string())])
                .await["text"],
            json!(expected[r]),
            "revision {r}"
        );
    }
    assert_eq!(
        s.ok("getText", &[("padID", "long")]).await["text"],
        json!(expected[230])
    );
    s.stop().await;
}

#[tokio::test]
async fn every_event_names_the_api_key_holder_and_the_author_stays_in_the_payload() {
    let s = Server::start().await;
    s.ok("createPad", &[("padID", "signed"), ("text", "hi")])
        .await;
    let author = s.ok("createAuthor", &[("name", "Ann")]).await["authorID"]
        .as_str()
        .expect("id")
        .to_owned();
    let pool = json!({"numToAttrib": {"0": ["author", author]}, "nextNum": 1});
    let (status, body) = s
        .submit(json!({"padID": "signed", "baseRev": 0, "changeset": "Z:3>1*0+1$A", "apool": pool, "authorId": author}))
        .await;
    assert_eq!(status, 200, "{body}");
    let events = s.state.store.read_all(0, 1000).await.expect("log");
    assert!(!events.is_empty());
    let unnamed: Vec<_> = events
        .iter()
        .filter(|e| e.metadata.actor.as_deref() != Some(palimpsest_pads::command::API_KEY_HOLDER))
        .map(|e| (e.event_type.clone(), e.metadata.actor.clone()))
        .collect();
    assert!(
        unnamed.is_empty(),
        "events not naming the key's holder: {unnamed:?}"
    );
    assert_eq!(palimpsest_pads::command::API_KEY_HOLDER, "apikey");
    let submitted = events
        .iter()
        .rev()
        .find(|e| e.stream.category == "pad" && e.stream.key == "signed")
        .expect("the submitted revision");
    assert!(
        submitted.payload.to_string().contains(&author),
        "the author stays in the payload: {}",
        submitted.payload
    );
    s.stop().await;
}

#[tokio::test]
async fn concurrent_writers_both_land_and_converge() {
    let s = Server::start().await;
    s.ok("createPad", &[("padID", "shared"), ("text", "hello")])
        .await;
    let a = s.ok("createAuthor", &[]).await["authorID"]
        .as_str()
        .expect("id")
        .to_owned();
    let b = s.ok("createAuthor", &[]).await["authorID"]
        .as_str()
        .expect("id")
        .to_owned();
    let pool = |author: &str| json!({"numToAttrib": {"0": ["author", author]}, "nextNum": 1});
    // Both against revision 0: A inserts at the start, B before the final newline.
    let first = s.submit(json!({"padID": "shared", "baseRev": 0, "changeset": "Z:6>1*0+1$A", "apool": pool(&a), "authorId": a}));
    let second = s.submit(json!({"padID": "shared", "baseRev": 0, "changeset": "Z:6>1=5*0+1$B", "apool": pool(&b), "authorId": b}));
    let ((sa, ba), (sb, bb)) = tokio::join!(first, second);
    assert_eq!((sa, sb), (200, 200), "{ba} {bb}");
    let mut revs = vec![
        ba["data"]["newRev"].as_i64().expect("rev"),
        bb["data"]["newRev"].as_i64().expect("rev"),
    ];
    revs.sort_unstable();
    assert_eq!(revs, vec![1, 2]);
    assert_eq!(
        s.ok("getText", &[("padID", "shared")]).await["text"],
        json!("AhelloB\n")
    );
    let mut authors: Vec<Value> =
        s.ok("listAuthorsOfPad", &[("padID", "shared")]).await["authorIDs"]
            .as_array()
            .expect("ids")
            .clone();
    authors.sort_by_key(|v| v.to_string());
    let mut want = vec![json!(a), json!(b)];
    want.sort_by_key(|v| v.to_string());
    assert_eq!(authors, want);

    // A stale submission (base 0 again) is transformed over both revisions.
    let (status, body) = s
        .submit(json!({"padID": "shared", "baseRev": 0, "changeset": "Z:6>1=2+1$-", "apool": {"numToAttrib": {}, "nextNum": 0}, "authorId": ""}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        s.ok("getText", &[("padID", "shared")]).await["text"],
        json!("Ahe-lloB\n")
    );

    // Ten concurrent appendText calls all land.
    let calls: Vec<_> = (0..10)
        .map(|i| {
            let s = &s;
            async move {
                s.ok(
                    "appendText",
                    &[("padID", "shared"), ("text", &format!("<{i}>"))],
                )
                .await
            }
        })
        .collect();
    futures::future::join_all(calls).await;
    let text = s.ok("getText", &[("padID", "shared")]).await["text"]
        .as_str()
        .expect("t")
        .to_owned();
    for i in 0..10 {
        assert!(text.contains(&format!("<{i}>")), "{text}");
    }
    assert_eq!(
        s.ok("getRevisionsCount", &[("padID", "shared")]).await["revisions"],
        json!(13)
    );
    s.stop().await;
}

#[tokio::test]
async fn bad_input_is_refused_and_appends_nothing() {
    let s = Server::start().await;
    s.ok("createPad", &[("padID", "p"), ("text", "abc")]).await;
    let before = s.event_count().await;
    let cases = [
        json!({"padID": "p", "baseRev": 0, "changeset": "not a changeset"}),
        json!({"padID": "p", "baseRev": 0, "changeset": "Z:9>1+1$x"}),
        json!({"padID": "p", "baseRev": 7, "changeset": "Z:4>1+1$x"}),
        json!({"padID": "p", "baseRev": 0, "changeset": "Z:4>1*0+1$x", "apool": {"numToAttrib": {"0": ["author", "a.someoneelse"]}, "nextNum": 1}, "authorId": "a.me"}),
        json!({"padID": "p", "baseRev": 0, "changeset": "Z:4>1*5+1$x"}),
        json!({"padID": "p", "baseRev": "x", "changeset": "Z:4>1+1$x"}),
    ];
    for case in cases {
        let (status, body) = s.submit(case.clone()).await;
        assert_eq!(status, 400, "{case}: {body}");
        assert_eq!(body["code"], 1);
        assert!(!body["message"].as_str().expect("message").is_empty());
    }
    let (status, _) = s
        .submit(json!({"padID": "missing", "baseRev": 0, "changeset": "Z:1>1+1$x"}))
        .await;
    assert_eq!(status, 404);
    let res = s
        .http
        .post(format!("{}/api/1.3.0/setText", s.base))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("post");
    assert_eq!(res.status().as_u16(), 400);
    assert_eq!(
        s.refused("setText", &[("padID", "p")]).await,
        "text is not a string"
    );
    assert_eq!(
        s.refused("getText", &[("padID", "a$b")]).await,
        "padID did not match requirements"
    );
    assert_eq!(
        s.refused("createPad", &[("padID", "p")]).await,
        "padID does already exist"
    );
    assert_eq!(
        s.refused("createPad", &[("padID", "g.x$y")]).await,
        "createPad can't create group pads"
    );
    assert_eq!(
        s.refused(
            "copyPad",
            &[("sourceID", "p"), ("destinationID", "p"), ("force", "true")]
        )
        .await,
        "sourceID and destinationID are the same pad"
    );
    assert_eq!(
        s.event_count().await,
        before,
        "refused input appends nothing"
    );
    s.stop().await;
}

#[tokio::test]
async fn the_store_equals_its_replay_rebuild() {
    let s = Server::start().await;
    let group = s.ok("createGroup", &[]).await["groupID"]
        .as_str()
        .expect("id")
        .to_owned();
    let author = s
        .ok(
            "createAuthorIfNotExistsFor",
            &[("authorMapper", "app-1"), ("name", "zed")],
        )
        .await["authorID"]
        .as_str()
        .expect("id")
        .to_owned();
    let pad = s
        .ok(
            "createGroupPad",
            &[
                ("groupID", &group),
                ("padName", "doc"),
                ("text", "x"),
                ("authorId", &author),
            ],
        )
        .await["padID"]
        .as_str()
        .expect("id")
        .to_owned();
    for i in 0..120 {
        s.ok(
            "appendText",
            &[
                ("padID", &pad),
                ("text", &i.to_string()),
                ("authorId", &author),
            ],
        )
        .await;
    }
    s.ok(
        "appendChatMessage",
        &[("padID", &pad), ("text", "hey"), ("authorID", &author)],
    )
    .await;
    s.ok("saveRevision", &[("padID", &pad), ("rev", "3")]).await;
    s.ok("getReadOnlyID", &[("padID", &pad)]).await;
    s.ok(
        "setPublicStatus",
        &[("padID", &pad), ("publicStatus", "true")],
    )
    .await;
    s.ok(
        "createSession",
        &[
            ("groupID", &group),
            ("authorID", &author),
            ("validUntil", "999999999999"),
        ],
    )
    .await;
    s.ok(
        "copyPad",
        &[
            ("sourceID", &pad),
            ("destinationID", "copy1"),
            ("force", "false"),
        ],
    )
    .await;
    s.ok(
        "movePad",
        &[
            ("sourceID", "copy1"),
            ("destinationID", "copy2"),
            ("force", "false"),
        ],
    )
    .await;
    s.ok(
        "copyPadWithoutHistory",
        &[
            ("sourceID", &pad),
            ("destinationID", "copy3"),
            ("force", "false"),
            ("authorId", &author),
        ],
    )
    .await;
    s.ok("deletePad", &[("padID", "copy3")]).await;

    let live = s.dump("pads").await;
    assert!(live.len() > 250, "{} rows", live.len());
    let report = palimpsest_projections::rebuild(
        &s.state.store,
        palimpsest_pads::projection().as_ref(),
        |_, _| {},
    )
    .await
    .expect("rebuild");
    assert!(report.events > 0);
    let rebuilt = s.dump("pads").await;
    assert_eq!(live, rebuilt);
    let versions = |rows: Vec<tokio_postgres::Row>| -> Vec<(String, i64)> {
        rows.iter().map(|r| (r.get(0), r.get(1))).collect()
    };
    let client = s.state.read.get().await.expect("client");
    let after = versions(
        client
            .query(
                "SELECT pad_id, version FROM pads.pad_stream_versions ORDER BY pad_id",
                &[],
            )
            .await
            .expect("q"),
    );
    assert!(
        after.iter().any(|(p, v)| p == &pad && *v > 120),
        "{after:?}"
    );
    s.stop().await;
}

#[tokio::test]
async fn tokens_map_to_authors_and_submitted_attributes_reach_the_html() {
    let s = Server::start().await;
    let token_author = |token: &'static str| {
        let s = &s;
        async move {
            let body: Value = s
                .http
                .post(format!("{}/ext/authorForToken", s.base))
                .json(&json!({"apikey": s.key, "token": token}))
                .send()
                .await
                .expect("post")
                .json()
                .await
                .expect("json");
            body["data"]["authorID"].as_str().expect("id").to_owned()
        }
    };
    let author = token_author("t.browser").await;
    assert_eq!(token_author("t.browser").await, author);
    assert_eq!(
        s.raw("token2author:t.browser").await,
        Some(format!("\"{author}\""))
    );
    let record: Value = serde_json::from_str(
        &s.raw(&format!("globalAuthor:{author}"))
            .await
            .expect("author"),
    )
    .expect("json");
    assert_eq!(record["name"], Value::Null);

    s.ok("createPad", &[("padID", "styled"), ("text", "plain")])
        .await;
    // The client's pool numbers bold as 0 and its author as 1; the pad's pool differs.
    let pool =
        json!({"numToAttrib": {"0": ["bold", "true"], "1": ["author", author]}, "nextNum": 2});
    let (status, body) = s
        .submit(json!({"padID": "styled", "baseRev": 0, "changeset": "Z:6>5*0*1+5$bold ", "apool": pool, "authorId": author}))
        .await;
    assert_eq!(status, 200, "{body}");
    let html = s.ok("getHTML", &[("padID", "styled")]).await["html"]
        .as_str()
        .expect("html")
        .to_owned();
    assert_eq!(
        html,
        "<!DOCTYPE HTML><html><body><strong>bold </strong>plain<br></body></html>"
    );
    let pad_pool = s.ok("getAttributePool", &[("padID", "styled")]).await["pool"].clone();
    assert_eq!(
        pad_pool["numToAttrib"],
        json!({"0": ["bold", "true"], "1": ["author", author]})
    );
    assert_eq!(pad_pool["nextNum"], json!(2));
    assert_eq!(
        s.ok("getText", &[("padID", "styled")]).await["text"],
        json!("bold plain\n")
    );
    s.stop().await;
}
