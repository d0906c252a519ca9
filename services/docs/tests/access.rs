//! Who may do what in the docs context (docs/authorization/docs-access.md): databases are the
//! administrator's, sessions end at logout and at a password change, design documents are the
//! administrator's, failed logins are throttled, password hashes are sealed in the log, every
//! event names its actor, and credentials are refused before a body is read.

mod common;

use common::Docs;
use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::AppendRequest;
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A database made through the admin API with users `ann` (channel `a`) and `bob` (channel
/// `b`), guest disabled.
async fn with_users(docs: &Docs) {
    assert_eq!(docs.admin("PUT", "/_admin/db", "{}").await.0, 201);
    for (name, channel) in [("ann", "a"), ("bob", "b")] {
        let body = json!({"password": format!("{name}-pw"), "admin_channels": [channel]});
        let path = format!("/_admin/db/_user/{name}");
        assert_eq!(docs.admin("PUT", &path, &body.to_string()).await.0, 200);
    }
}

async fn request(
    docs: &Docs,
    method: &str,
    path: &str,
    auth: Option<(&str, &str)>,
    cookie: Option<&str>,
) -> (u16, Value, reqwest::header::HeaderMap) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut builder = reqwest::Client::new().request(method, docs.url(path));
    if let Some((name, password)) = auth {
        builder = builder.basic_auth(name, Some(password));
    }
    if let Some(cookie) = cookie {
        builder = builder.header("cookie", cookie);
    }
    let response = builder.send().await.expect("request");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
        headers,
    )
}

#[tokio::test]
async fn databases_are_created_listed_and_deleted_by_the_administrator_only() {
    let docs = Docs::start().await;
    with_users(&docs).await;
    let token = docs.app.admin_token();
    let head = docs.head().await;
    for (auth, expected) in [
        (None, 401),
        (Some(("admin", "wrong")), 401),
        (Some(("ann", "wrong")), 401),
        (Some(("ann", "ann-pw")), 403),
    ] {
        let (status, body, _) = request(&docs, "DELETE", "/db", auth, None).await;
        assert_eq!(status, expected, "DELETE /db as {auth:?}: {body}");
        let (status, body, _) = request(&docs, "PUT", "/db", auth, None).await;
        assert_eq!(status, expected, "PUT /db as {auth:?}: {body}");
    }
    for auth in [None, Some(("admin", "wrong")), Some(("ann", "ann-pw"))] {
        let (status, body, _) = request(&docs, "PUT", "/other", auth, None).await;
        assert_eq!(status, 401, "PUT /other as {auth:?}: {body}");
        let (status, body, _) = request(&docs, "GET", "/_all_dbs", auth, None).await;
        assert_eq!(status, 401, "GET /_all_dbs as {auth:?}: {body}");
    }
    let bearer = reqwest::Client::new()
        .get(docs.url("/_all_dbs"))
        .bearer_auth("not the token")
        .send()
        .await
        .expect("request");
    assert_eq!(bearer.status().as_u16(), 401);
    assert_eq!(docs.head().await, head, "a refused request appends nothing");
    assert_eq!(docs.rows("SELECT name FROM docs.databases").await.len(), 1);

    let (status, body, _) = request(&docs, "GET", "/_all_dbs", Some(("admin", &token)), None).await;
    assert_eq!((status, body), (200, json!(["db"])));
    let listed = reqwest::Client::new()
        .get(docs.url("/_all_dbs"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("request");
    assert_eq!(listed.status().as_u16(), 200);
    let admin = Some(("admin", token.as_str()));
    assert_eq!(request(&docs, "PUT", "/other", admin, None).await.0, 201);
    assert_eq!(request(&docs, "DELETE", "/other", admin, None).await.0, 200);
    assert_eq!(request(&docs, "DELETE", "/db", admin, None).await.0, 200);
    docs.stop().await;
}

#[tokio::test]
async fn the_administrators_basic_name_is_configurable() {
    let app = TestApp::builder()
        .docs(palimpsest_docs::Settings {
            admin_name: "root".into(),
            ..palimpsest_docs::Settings::default()
        })
        .start()
        .await;
    let docs = Docs::from_app(app);
    let token = docs.app.admin_token();
    let (status, _, _) = request(&docs, "PUT", "/db", Some(("admin", &token)), None).await;
    assert_eq!(
        status, 401,
        "the default name is not the administrator's any more"
    );
    let (status, _, _) = request(&docs, "PUT", "/db", Some(("root", &token)), None).await;
    assert_eq!(status, 201);
    let (status, _, _) = request(&docs, "PUT", "/_admin/db2", Some(("root", &token)), None).await;
    assert_eq!(status, 201, "the admin API takes the Basic credential too");
    docs.stop().await;
}

async fn login(docs: &Docs, name: &str, password: &str) -> String {
    let response = reqwest::Client::new()
        .post(docs.url("/db/_session"))
        .json(&json!({"name": name, "password": password}))
        .send()
        .await
        .expect("login");
    assert_eq!(response.status().as_u16(), 200);
    let set = response
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .expect("a session cookie");
    set.split(';').next().expect("cookie").to_owned()
}

#[tokio::test]
async fn a_session_ends_at_logout_and_at_a_password_change() {
    let docs = Docs::start().await;
    with_users(&docs).await;
    let first = login(&docs, "ann", "ann-pw").await;
    let second = login(&docs, "ann", "ann-pw").await;
    let (status, who, _) = request(&docs, "GET", "/db/_session", None, Some(&first)).await;
    assert_eq!(
        (status, who["userCtx"]["name"].clone()),
        (200, json!("ann"))
    );
    assert_eq!(
        request(&docs, "GET", "/db/_all_docs", None, Some(&first))
            .await
            .0,
        200
    );

    let (status, _, _) = request(&docs, "DELETE", "/db/_session", None, Some(&first)).await;
    assert_eq!(status, 200);
    let (status, body, _) = request(&docs, "GET", "/db/_all_docs", None, Some(&first)).await;
    assert_eq!(status, 401, "the logged-out cookie is refused: {body}");
    assert_eq!(
        request(&docs, "GET", "/db/_session", None, Some(&first))
            .await
            .0,
        401
    );
    let (status, _, _) = request(&docs, "GET", "/db/_all_docs", None, Some(&second)).await;
    assert_eq!(status, 200, "another session of the user stays");

    let body = json!({"admin_channels": ["a", "c"]}).to_string();
    assert_eq!(
        docs.admin("PUT", "/_admin/db/_user/ann", &body).await.0,
        200
    );
    let (status, _, _) = request(&docs, "GET", "/db/_all_docs", None, Some(&second)).await;
    assert_eq!(
        status, 200,
        "a change that keeps the password keeps the session"
    );

    let body = json!({"password": "new-pw", "admin_channels": ["a"]}).to_string();
    assert_eq!(
        docs.admin("PUT", "/_admin/db/_user/ann", &body).await.0,
        200
    );
    let (status, body, _) = request(&docs, "GET", "/db/_all_docs", None, Some(&second)).await;
    assert_eq!(
        status, 401,
        "a session from before the new password is refused: {body}"
    );
    let third = login(&docs, "ann", "new-pw").await;
    assert_eq!(
        request(&docs, "GET", "/db/_all_docs", None, Some(&third))
            .await
            .0,
        200
    );
    docs.stop().await;
}

#[tokio::test]
async fn design_documents_are_written_by_the_administrator_only() {
    let docs = Docs::start().await;
    with_users(&docs).await;
    let head = docs.head().await;
    let ann = Some(("ann", "ann-pw"));
    let design = json!({"views": {}, "channels": ["a"]});
    let (status, body) = docs
        .as_user(
            "ann",
            "ann-pw",
            "PUT",
            "/db/_design/app",
            Some(design.clone()),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    let bulk = json!({"docs": [{"_id": "_design/app", "channels": ["a"]}]});
    let (status, body) = docs
        .as_user("ann", "ann-pw", "POST", "/db/_bulk_docs", Some(bulk))
        .await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = docs
        .as_user(
            "ann",
            "ann-pw",
            "POST",
            "/db",
            Some(json!({"_id": "_design/x"})),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(docs.head().await, head, "nothing appended");
    let (status, body) = docs.as_admin("PUT", "/db/_design/app", Some(design)).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        request(&docs, "GET", "/db/_design/app", ann, None).await.0,
        200
    );
    docs.stop().await;
}

#[tokio::test]
async fn wrong_passwords_for_one_user_are_throttled_while_another_logs_in_promptly() {
    let docs = Docs::start().await;
    with_users(&docs).await;
    let mut statuses = Vec::new();
    for _ in 0..16 {
        let (status, _, headers) =
            request(&docs, "GET", "/db/_all_docs", Some(("ann", "guess")), None).await;
        if status == 429 {
            let wait: u64 = headers["retry-after"]
                .to_str()
                .expect("ascii")
                .parse()
                .expect("seconds");
            assert!((1..=60).contains(&wait), "Retry-After {wait}");
        }
        statuses.push(status);
    }
    assert_eq!(&statuses[..5], &[401; 5], "the first failures are answered");
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert!(
        refused >= 8,
        "later tries are refused while they must wait: {statuses:?}"
    );
    let started = Instant::now();
    let (status, _, _) =
        request(&docs, "GET", "/db/_all_docs", Some(("bob", "bob-pw")), None).await;
    assert_eq!(status, 200, "another user is not slowed");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let mut posted = Vec::new();
    for _ in 0..16 {
        let response = reqwest::Client::new()
            .post(docs.url("/db/_session"))
            .json(&json!({"name": "bob", "password": "guess"}))
            .send()
            .await
            .expect("login");
        posted.push(response.status().as_u16());
    }
    assert!(
        posted.iter().filter(|s| **s == 429).count() >= 8,
        "POST /_session is throttled too: {posted:?}"
    );
    docs.stop().await;
}

/// The `UserSaved` events of the log.
async fn user_events(docs: &Docs) -> Vec<palimpsest_events::RecordedEvent> {
    let events = docs.app.state.store.read_all(0, 1000).await.expect("log");
    events
        .into_iter()
        .filter(|e| e.event_type == "UserSaved")
        .collect()
}

#[tokio::test]
async fn password_hashes_are_sealed_in_the_log_and_old_clear_hashes_still_load() {
    let docs = Docs::start().await;
    with_users(&docs).await;
    for event in user_events(&docs).await {
        let payload = event.payload.to_string();
        assert!(event.payload.get("password_hash").is_none(), "{payload}");
        assert!(
            !payload.contains("$2"),
            "no bcrypt hash in the clear: {payload}"
        );
        assert!(event.payload["password_sealed"].is_string(), "{payload}");
    }
    let stored = docs
        .rows("SELECT value FROM docs.kv WHERE key = 'user:ann'")
        .await;
    assert!(
        !stored[0].to_string().contains("$2"),
        "nor in the read model"
    );
    let (status, _) = docs
        .as_user("ann", "ann-pw", "GET", "/db/_all_docs", None)
        .await;
    assert_eq!(status, 200);

    // An event written before sealing holds the hash in the clear: it still loads.
    let incarnation = docs.rows("SELECT incarnation FROM docs.databases").await[0]["incarnation"]
        .as_str()
        .expect("incarnation")
        .to_owned();
    let hash = bcrypt::hash("old-pw", 4).expect("hash");
    let stream = StreamName::new("docs", "user", format!("{incarnation}/cyd")).expect("stream");
    let old = NewEvent::new(
        "UserSaved",
        1,
        json!({"db": "db", "name": "cyd", "password_hash": hash, "admin_channels": ["a"],
               "admin_roles": [], "disabled": false}),
    );
    let appended = docs
        .app
        .state
        .store
        .append(AppendRequest::new().stream(stream, ExpectedVersion::NoStream, vec![old]))
        .await
        .expect("append");
    docs.app
        .state
        .wait_for("docs", appended.last_position)
        .await
        .expect("projected");
    let (status, _) = docs
        .as_user("cyd", "old-pw", "GET", "/db/_all_docs", None)
        .await;
    assert_eq!(status, 200, "a clear hash from an old event still logs in");
    let body = json!({"admin_channels": ["a", "b"]}).to_string();
    assert_eq!(
        docs.admin("PUT", "/_admin/db/_user/cyd", &body).await.0,
        200
    );
    let resaved = user_events(&docs).await.pop().expect("the new save");
    assert!(resaved.payload.get("password_hash").is_none());
    assert!(resaved.payload["password_sealed"].is_string(), "resealed");
    let (status, _) = docs
        .as_user("cyd", "old-pw", "GET", "/db/_all_docs", None)
        .await;
    assert_eq!(status, 200, "the resealed hash logs in");
    docs.stop().await;
}

#[tokio::test]
async fn every_event_a_route_appends_names_its_caller() {
    let docs = Docs::start().await;
    with_users(&docs).await;
    let token = docs.app.admin_token();
    let (status, _) = docs.as_admin("PUT", "/open", None).await;
    assert_eq!(status, 201);
    let head = docs.head().await;
    let (status, _) = docs
        .as_user(
            "ann",
            "ann-pw",
            "PUT",
            "/db/a1",
            Some(json!({"channels": ["a"]})),
        )
        .await;
    assert_eq!(status, 201);
    let cookie = login(&docs, "bob", "bob-pw").await;
    let (status, _, _) = request(&docs, "DELETE", "/db/_session", None, Some(&cookie)).await;
    assert_eq!(status, 200);
    assert_eq!(docs.call("PUT", "/open/g", Some(json!({}))).await.0, 201);
    let admin = reqwest::Client::new()
        .put(docs.url("/db/b1"))
        .bearer_auth(&token)
        .json(&json!({"channels": ["b"]}))
        .send()
        .await
        .expect("request");
    assert_eq!(admin.status().as_u16(), 201);
    let events = docs.app.state.store.read_all(0, 1000).await.expect("log");
    let actors: Vec<(String, Option<String>)> = events
        .iter()
        .filter(|e| e.position > head)
        .map(|e| (e.event_type.clone(), e.metadata.actor.clone()))
        .collect();
    let actor_of = |kind: &str, stream_key: &str| {
        events
            .iter()
            .filter(|e| e.position > head && e.event_type == kind)
            .find(|e| e.stream.key.contains(stream_key))
            .and_then(|e| e.metadata.actor.clone())
    };
    assert!(
        actors.iter().all(|(_, actor)| actor.is_some()),
        "{actors:?}"
    );
    assert_eq!(actor_of("SessionEnded", "bob").as_deref(), Some("user:bob"));
    let writers: Vec<Option<String>> = events
        .iter()
        .filter(|e| e.position > head && e.stream.category == "document")
        .map(|e| e.metadata.actor.clone())
        .collect();
    assert_eq!(
        writers,
        [
            Some("user:ann".into()),
            Some("guest".into()),
            Some("admin".into())
        ],
        "{actors:?}"
    );
    let created = events
        .iter()
        .find(|e| e.event_type == "DatabaseCreated" && e.payload["name"] == "open")
        .and_then(|e| e.metadata.actor.clone());
    assert_eq!(created.as_deref(), Some("admin"));
    docs.stop().await;
}

/// Sends headers announcing a body that never comes; the answer's status line, if one comes
/// within `wait`.
async fn answer_without_body(docs: &Docs, auth: &str, wait: Duration) -> Option<String> {
    let mut stream = tokio::net::TcpStream::connect(docs.app.addr)
        .await
        .expect("connect");
    let head = format!(
        "PUT /docs/db/doc HTTP/1.1\r\nHost: x\r\nAuthorization: {auth}\r\n\
         Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut buffer = vec![0u8; 256];
    match tokio::time::timeout(wait, stream.read(&mut buffer)).await {
        Ok(Ok(n)) if n > 0 => Some(String::from_utf8_lossy(&buffer[..n]).into_owned()),
        _ => None,
    }
}

#[tokio::test]
async fn a_wrong_credential_is_refused_before_the_body_is_read() {
    let docs = Docs::start().await;
    with_users(&docs).await;
    let wrong = format!(
        "Basic {}",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, "ann:wrong")
    );
    let answer = answer_without_body(&docs, &wrong, Duration::from_secs(5))
        .await
        .expect("an answer before the body");
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    let answer = answer_without_body(&docs, "Bearer nope", Duration::from_secs(5))
        .await
        .expect("an answer before the body");
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    docs.stop().await;
}
