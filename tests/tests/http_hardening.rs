//! Hostile HTTP against the real app (issue 8, defects 5, 6 and 7): NULs in ids and query
//! parameters, slow and oversized requests, methods the APIs do not take, bodies that are not
//! JSON, and error answers that must be JSON.

use palimpsest::config::LimitSettings;
use palimpsest_testkit::TestApp;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Limits short enough for a test to watch them act.
fn short_limits() -> LimitSettings {
    LimitSettings {
        http_body_limit: 64 * 1024,
        http_header_timeout: Duration::from_millis(500),
        http_body_timeout: Duration::from_millis(700),
        http_request_timeout: Duration::from_secs(3),
        ..LimitSettings::default()
    }
}

fn apikey(app: &TestApp) -> String {
    std::fs::read_to_string(app.data_dir().join("APIKEY.txt"))
        .expect("APIKEY.txt")
        .trim()
        .to_owned()
}

async fn answer(res: reqwest::Response) -> (StatusCode, Option<String>, Value) {
    let status = res.status();
    let content_type = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = res.text().await.expect("body");
    let json = serde_json::from_str(&text).unwrap_or_else(|_| json!({ "not json": text }));
    (status, content_type, json)
}

/// Sends `head` (and nothing after it) on a raw connection; what the server answers, and how
/// long it took to answer or close.
async fn raw(app: &TestApp, head: &str, wait: Duration) -> (String, Duration) {
    let started = Instant::now();
    let mut stream = TcpStream::connect(app.addr).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut got = Vec::new();
    let read = tokio::time::timeout(wait, stream.read_to_end(&mut got)).await;
    let text = String::from_utf8_lossy(&got).into_owned();
    match read {
        Ok(_) => (text, started.elapsed()),
        Err(_) => (
            format!("STILL OPEN after {wait:?}: {text}"),
            started.elapsed(),
        ),
    }
}

#[tokio::test]
async fn half_sent_headers_are_dropped_after_the_header_timeout() {
    let app = TestApp::start_with_limits(short_limits()).await;
    let (text, took) = raw(
        &app,
        "GET /healthz HTTP/1.1\r\nHost: x\r\n",
        Duration::from_secs(5),
    )
    .await;
    assert!(!text.starts_with("STILL OPEN"), "{text}");
    assert!(took < Duration::from_secs(3), "closed after {took:?}");
    app.stop().await;
}

#[tokio::test]
async fn a_body_declared_over_the_limit_is_413_json_before_it_is_read() {
    let app = TestApp::start_with_limits(short_limits()).await;
    let auth = format!("Authorization: Bearer {}\r\n", app.admin_token());
    for path in ["/atlas/sections", "/pads/api/1.3.0/setText"] {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n\
             Content-Length: 1000000000\r\n\r\n{{"
        );
        let (text, took) = raw(&app, &head, Duration::from_secs(5)).await;
        assert!(text.starts_with("HTTP/1.1 413"), "{path}: {text}");
        assert!(text.contains("application/json"), "{path}: {text}");
        assert!(text.contains("\"error\""), "{path}: {text}");
        assert!(
            took < Duration::from_secs(2),
            "{path}: answered after {took:?}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn a_body_that_stops_arriving_is_408_json() {
    let app = TestApp::start_with_limits(short_limits()).await;
    // With a credential: the body is read only once it has been checked.
    let head = format!(
        "POST /atlas/sections HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"title\":",
        app.admin_token()
    );
    let (text, took) = raw(&app, &head, Duration::from_secs(5)).await;
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("\"error\""), "{text}");
    assert!(took < Duration::from_secs(3), "answered after {took:?}");
    app.stop().await;
}

#[tokio::test]
async fn a_chunked_body_over_the_limit_is_413_json() {
    let app = TestApp::start_with_limits(short_limits()).await;
    let chunk = "x".repeat(100 * 1024);
    let head = format!(
        "POST /atlas/sections HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{chunk}\r\n0\r\n\r\n",
        app.admin_token(),
        chunk.len()
    );
    let (text, _) = raw(&app, &head, Duration::from_secs(5)).await;
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("\"error\""), "{text}");
    app.stop().await;
}

#[tokio::test]
async fn head_runs_no_pads_write_and_answers_405() {
    let app = TestApp::start().await;
    let http = reqwest::Client::new();
    let key = apikey(&app);
    let call = |f: &str, extra: &str| app.url(&format!("/pads/api/1.3.0/{f}?apikey={key}{extra}"));
    let created = http
        .get(call("createPad", "&padID=headpad&text=before"))
        .send()
        .await
        .expect("createPad");
    assert_eq!(created.status(), StatusCode::OK);
    let head = http
        .head(call("setText", "&padID=headpad&text=after"))
        .send()
        .await
        .expect("head");
    assert_eq!(head.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(
        head.headers().get("allow").and_then(|v| v.to_str().ok()),
        Some("GET, POST")
    );
    let head = http
        .head(app.url(&format!("/pads/ext/authorForToken?apikey={key}&token=t.1")))
        .send()
        .await
        .expect("head");
    assert_eq!(head.status(), StatusCode::METHOD_NOT_ALLOWED);
    let (_, _, text) = answer(
        http.get(call("getText", "&padID=headpad"))
            .send()
            .await
            .expect("getText"),
    )
    .await;
    assert_eq!(text["data"]["text"], "before\n", "{text}");
    let head = http
        .head(app.url("/atlas/sections/none/editor?user_id=u"))
        .send()
        .await
        .expect("head");
    assert_eq!(head.status(), StatusCode::METHOD_NOT_ALLOWED);
    app.stop().await;
}

#[tokio::test]
async fn atlas_refuses_bodies_that_are_not_json_with_415() {
    let app = TestApp::start().await;
    let http = reqwest::Client::new();
    for content_type in ["text/plain", "application/x-www-form-urlencoded"] {
        let res = http
            .post(app.url("/atlas/sections"))
            .header("content-type", content_type)
            .body(r#"{"title":"parsed as JSON"}"#)
            .send()
            .await
            .expect("post");
        let (status, _, body) = answer(res).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
        assert!(body["error"].is_string(), "{body}");
    }
    let res = http
        .post(app.url("/atlas/sections"))
        .bearer_auth(app.admin_token())
        .json(&json!({"title": "json"}))
        .send()
        .await
        .expect("post");
    assert_eq!(res.status(), StatusCode::CREATED);
    app.stop().await;
}

#[tokio::test]
async fn framework_errors_are_json() {
    let app = TestApp::start().await;
    let http = reqwest::Client::new();
    let token = app.admin_token();
    let cases = [
        (http.get(app.url("/no/such/route")), StatusCode::NOT_FOUND),
        (
            http.delete(app.url("/atlas/sections")),
            StatusCode::METHOD_NOT_ALLOWED,
        ),
        (
            http.get(app.url("/v1/events?after=abc"))
                .bearer_auth(&token),
            StatusCode::BAD_REQUEST,
        ),
        (
            http.post(app.url("/atlas/sections/x/lock"))
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .body("{nope"),
            StatusCode::BAD_REQUEST,
        ),
    ];
    for (request, want) in cases {
        let (status, content_type, body) = answer(request.send().await.expect("send")).await;
        assert_eq!(status, want, "{body}");
        assert!(
            content_type.as_deref().is_some_and(|t| t.contains("json")),
            "{want}: {content_type:?} {body}"
        );
        assert!(body["error"].is_string(), "{want}: {body}");
    }
    app.stop().await;
}

#[tokio::test]
async fn a_nul_in_an_id_or_query_parameter_is_a_4xx() {
    let app = TestApp::start().await;
    let http = reqwest::Client::new();
    let key = apikey(&app);
    for function in [
        "getText?padID=a%00b",
        "createGroupIfNotExistsFor?groupMapper=a%00b",
        "createAuthorIfNotExistsFor?authorMapper=%00",
        "getAuthorName?authorID=a.%00",
        "listSessionsOfGroup?groupID=g.%00",
        "getSessionInfo?sessionID=s.%00",
        "getPadID?roID=r.%00",
    ] {
        let res = http
            .get(app.url(&format!("/pads/api/1.3.0/{function}&apikey={key}")))
            .send()
            .await
            .expect("call");
        let (status, _, body) = answer(res).await;
        assert!(status.is_client_error(), "{function}: {status} {body}");
        assert_eq!(body["code"], 1, "{function}: {body}");
    }
    for path in [
        "/atlas/entities/a%00b",
        "/atlas/sections/a%00b",
        "/atlas/entities?q=a%00b",
        "/atlas/geometries?minLng=0&minLat=0&maxLng=1&maxLat=1&entity_id=%00",
        "/atlas/sections?status=%00",
        "/atlas/entities/a%00b/history",
    ] {
        let (status, _, body) = answer(http.get(app.url(path)).send().await.expect("get")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        assert!(body["error"].is_string(), "{path}: {body}");
    }
    let res = http
        .get(app.url("/v1/streams/pads/pad/a%00b"))
        .bearer_auth(app.admin_token())
        .send()
        .await
        .expect("admin");
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    app.stop().await;
}

#[tokio::test]
async fn time_as_of_before_4713_bc_is_a_400() {
    let app = TestApp::start().await;
    let http = reqwest::Client::new();
    for path in [
        "/atlas/entities?time_as_of=-5000-01-01",
        "/atlas/entities/x?time_as_of=-4713-12-31",
    ] {
        let (status, _, body) = answer(http.get(app.url(path)).send().await.expect("get")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
    }
    let (status, _, body) = answer(
        http.get(app.url("/atlas/entities?time_as_of=-4712-01-01"))
            .send()
            .await
            .expect("get"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    app.stop().await;
}

#[tokio::test]
async fn requests_beyond_the_concurrency_cap_wait_for_a_slot() {
    let limits = LimitSettings {
        http_max_concurrent: 1,
        http_body_timeout: Duration::from_millis(800),
        ..short_limits()
    };
    let app = TestApp::start_with_limits(limits).await;
    // One request holds the only slot while its body does not arrive.
    let holder = tokio::spawn({
        let addr = app.addr;
        // With a credential, or the atlas would answer 401 without waiting for the body.
        let head = format!(
            "POST /atlas/sections HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{{",
            app.admin_token()
        );
        async move {
            let mut stream = TcpStream::connect(addr).await.expect("connect");
            stream.write_all(head.as_bytes()).await.expect("write");
            let mut got = Vec::new();
            let _ = stream.read_to_end(&mut got).await;
            String::from_utf8_lossy(&got).into_owned()
        }
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    let started = Instant::now();
    let res = reqwest::get(app.url("/healthz")).await.expect("healthz");
    assert_eq!(res.status(), StatusCode::OK);
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "healthz did not wait for the slot: {:?}",
        started.elapsed()
    );
    assert!(holder.await.expect("holder").starts_with("HTTP/1.1 408"));
    app.stop().await;
}

#[tokio::test]
async fn an_empty_mapper_maps_to_one_id_as_in_etherpad() {
    let app = TestApp::start().await;
    let http = reqwest::Client::new();
    let key = apikey(&app);
    for (function, mapper, field) in [
        ("createGroupIfNotExistsFor", "groupMapper", "groupID"),
        ("createAuthorIfNotExistsFor", "authorMapper", "authorID"),
    ] {
        let mut ids = Vec::new();
        for _ in 0..2 {
            let url = app.url(&format!(
                "/pads/api/1.3.0/{function}?apikey={key}&{mapper}="
            ));
            let (status, _, body) = answer(http.get(url).send().await.expect("call")).await;
            assert_eq!(status, StatusCode::OK, "{function}: {body}");
            assert_eq!(body["code"], 0, "{function}: {body}");
            ids.push(body["data"][field].as_str().expect("id").to_owned());
        }
        assert_eq!(
            ids[0], ids[1],
            "{function}: the same mapper maps to the same id"
        );
    }
    app.stop().await;
}
