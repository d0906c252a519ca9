//! Issue #25, the platform's limits against the real app: anonymous requests holding unfinished
//! bodies fill their own share of the request slots and no more (defect 8); a false credential
//! in the headers is refused before the body is read (pads, records); secret files are the
//! owner's only.

use palimpsest::config::LimitSettings;
use palimpsest_testkit::TestApp;
use reqwest::StatusCode;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Long body and request timeouts (a held body is held for the whole test), a small cap.
fn held_limits() -> LimitSettings {
    LimitSettings {
        http_body_timeout: Duration::from_secs(30),
        http_request_timeout: Duration::from_secs(60),
        http_max_concurrent: 12,
        http_max_anonymous: 4,
        ..LimitSettings::default()
    }
}

/// How long an answer that needs no slot held by others may take, at most (generous: the
/// machine is shared; a request stuck behind the held bodies would wait 30 s).
const PROMPT: Duration = Duration::from_secs(10);

fn apikey(app: &TestApp) -> String {
    std::fs::read_to_string(app.data_dir().join("APIKEY.txt"))
        .expect("APIKEY.txt")
        .trim()
        .to_owned()
}

/// A connection that sent `head` and the first byte of a 100-byte body, and nothing since.
async fn holding(app: &TestApp, head: &str) -> TcpStream {
    let mut stream = TcpStream::connect(app.addr).await.expect("connect");
    let request = format!("{head}Content-Length: 100\r\n\r\nt");
    stream.write_all(request.as_bytes()).await.expect("write");
    stream
}

/// What the server answers on `stream` within [`PROMPT`], or `STILL OPEN`.
async fn answer_on(mut stream: TcpStream) -> String {
    let mut got = vec![0u8; 4096];
    match tokio::time::timeout(PROMPT, stream.read(&mut got)).await {
        Ok(Ok(n)) => String::from_utf8_lossy(&got[..n]).into_owned(),
        Ok(Err(e)) => format!("READ FAILED: {e}"),
        Err(_) => "STILL OPEN".to_owned(),
    }
}

/// `GET` of `path` with the admin token, within [`PROMPT`].
async fn admin_get(app: &TestApp, path: &str) -> StatusCode {
    let res = tokio::time::timeout(
        PROMPT,
        reqwest::Client::new()
            .get(app.url(path))
            .bearer_auth(app.admin_token())
            .send(),
    )
    .await
    .unwrap_or_else(|_| panic!("{path} was not answered within {PROMPT:?}"))
    .expect("request");
    res.status()
}

#[tokio::test]
async fn requests_with_credentials_flow_while_anonymous_bodies_fill_their_share() {
    let app = TestApp::start_with_limits(held_limits()).await;
    let key = apikey(&app);
    // More anonymous requests than the whole cap, each reading a body that does not come
    // (pads reads the body of a call whose head has no key: the key may be in it).
    let mut held = Vec::new();
    for _ in 0..14 {
        held.push(
            holding(
                &app,
                "POST /pads/api/1.3.0/getText HTTP/1.1\r\nHost: x\r\n\
                 Content-Type: application/x-www-form-urlencoded\r\n",
            )
            .await,
        );
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(admin_get(&app, "/v1/head").await, StatusCode::OK);
    let pads = tokio::time::timeout(
        PROMPT,
        reqwest::get(app.url(&format!("/pads/api/1.3.0/listAllPads?apikey={key}"))),
    )
    .await
    .expect("a pads call with its key is answered")
    .expect("pads");
    assert_eq!(pads.status(), StatusCode::OK);
    let body: serde_json::Value = pads.json().await.expect("json");
    assert_eq!(body["code"], 0, "{body}");
    let health = tokio::time::timeout(PROMPT, reqwest::get(app.url("/healthz")))
        .await
        .expect("a probe takes a general slot")
        .expect("healthz");
    assert_eq!(health.status(), StatusCode::OK);
    drop(held);
    app.stop().await;
}

#[tokio::test]
async fn a_false_pads_key_in_the_head_is_refused_before_the_body() {
    let app = TestApp::start_with_limits(held_limits()).await;
    let before = app.state.store.head_position().await.expect("head");
    for head in [
        "POST /pads/api/1.3.0/setText HTTP/1.1\r\nHost: x\r\napikey: wrong\r\n\
         Content-Type: application/x-www-form-urlencoded\r\n",
        "POST /pads/api/1.3.0/setText?apikey=wrong HTTP/1.1\r\nHost: x\r\n\
         Content-Type: application/x-www-form-urlencoded\r\n",
        "POST /pads/ext/submitChangeset HTTP/1.1\r\nHost: x\r\nAuthorization: wrong\r\n\
         Content-Type: application/json\r\n",
    ] {
        let answer = answer_on(holding(&app, head).await).await;
        assert!(answer.starts_with("HTTP/1.1 401"), "{head}: {answer}");
    }
    assert_eq!(
        app.state.store.head_position().await.expect("head"),
        before,
        "nothing appended"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_false_records_token_is_refused_before_the_body() {
    let app = TestApp::start_with_limits(held_limits()).await;
    let before = app.state.store.head_position().await.expect("head");
    for head in [
        "POST /records/api/insertDoc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\n\
         Content-Type: application/json\r\n",
        "POST /records/api/getDoc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n",
    ] {
        let answer = answer_on(holding(&app, head).await).await;
        assert!(answer.starts_with("HTTP/1.1 401"), "{head}: {answer}");
    }
    assert_eq!(
        app.state.store.head_position().await.expect("head"),
        before,
        "nothing appended"
    );
    app.stop().await;
}

#[cfg(unix)]
#[tokio::test]
async fn every_generated_secret_file_is_the_owners_only() {
    use std::os::unix::fs::PermissionsExt;
    let app = TestApp::start().await;
    // Records makes its key on its first use.
    let res = reqwest::Client::new()
        .post(app.url("/records/api/listOrgs"))
        .bearer_auth(app.admin_token())
        .json(&serde_json::json!({}))
        .send()
        .await
        .expect("records");
    assert_eq!(res.status(), StatusCode::OK);
    for name in ["admin-token", "APIKEY.txt", "records-key"] {
        let path = app.data_dir().join(name);
        let mode = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{name}");
    }
    app.stop().await;
}
