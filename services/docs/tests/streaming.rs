//! Large answers are written as they are read (`_changes`, `_all_docs`, `_bulk_get`), not built
//! whole first: the status goes out before the last row is read, so a row that fails to read
//! cuts the transfer after the rows before it have arrived, where an answer built whole would
//! have been a plain 500. And a failure after the start is never a complete-looking 200.

mod common;

use common::Docs;
use futures::StreamExt;
use serde_json::json;

/// Documents copied from the template: with its 2 kB text, answers of about 1 MB (many
/// pieces of the stream).
const COPIES: i64 = 500;

/// A database `db` with `COPIES` copies of one document written through the API (ids
/// `c0001`…, each with its own sequence, straight in the read model), and `zz-broken` last (in
/// sequence and in id order): a stored document that cannot be read.
async fn seed(docs: &Docs) {
    let (status, _) = docs.admin("PUT", "/db", "").await;
    assert_eq!(status, 201);
    let body = json!({"text": "x".repeat(2_000)}).to_string();
    let (status, _) = docs.admin("PUT", "/db/template", &body).await;
    assert_eq!(status, 201);
    let client = docs.app.state.read.get().await.expect("client");
    client
        .execute(
            "INSERT INTO docs.kv (db, key, value, seq, rev, deleted) \
             SELECT db, 'c' || lpad(n::text, 4, '0'), value, seq + n, rev, deleted \
             FROM generate_series(1, $1::bigint) AS n, docs.kv WHERE db = 'db' AND key = 'template'",
            &[&COPIES],
        )
        .await
        .expect("copies");
    client
        .execute(
            "INSERT INTO docs.kv (db, key, value, seq, rev, deleted) \
             SELECT db, 'zz-broken', '{\"_sync\": ', seq + $1 + 1, rev, deleted \
             FROM docs.kv WHERE db = 'db' AND key = 'template'",
            &[&COPIES],
        )
        .await
        .expect("broken");
}

/// What a request got: its status, whether it said its length, the bytes that came, and
/// whether the transfer broke before its end.
struct Got {
    status: u16,
    length: Option<u64>,
    bytes: Vec<u8>,
    broken: bool,
}

async fn get(request: reqwest::RequestBuilder) -> Got {
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let length = response.content_length();
    let mut bytes = Vec::new();
    let mut body = response.bytes_stream();
    let mut broken = false;
    while let Some(piece) = body.next().await {
        match piece {
            Ok(piece) => bytes.extend_from_slice(&piece),
            Err(_) => {
                broken = true;
                break;
            }
        }
    }
    Got {
        status,
        length,
        bytes,
        broken,
    }
}

/// Checks that an answer was cut after its start: a 200 whose rows before the broken one
/// arrived (`starts` and at least 500 kB), then a broken transfer, not a whole JSON text.
fn assert_cut(got: &Got, starts: &str) {
    assert_eq!(
        got.status,
        200,
        "the status went out before the broken row was read: {}",
        String::from_utf8_lossy(&got.bytes[..got.bytes.len().min(300)])
    );
    assert_eq!(
        got.length, None,
        "a streamed answer does not say its length"
    );
    assert!(
        got.bytes.starts_with(starts.as_bytes()),
        "the answer starts as usual"
    );
    assert!(
        got.bytes.len() > 500_000,
        "the rows before the broken one arrived ({} bytes)",
        got.bytes.len()
    );
    assert!(got.broken, "the transfer is cut, not ended");
    assert!(
        serde_json::from_slice::<serde_json::Value>(&got.bytes).is_err(),
        "what came is not a complete answer"
    );
}

#[tokio::test]
async fn changes_with_docs_are_written_as_read_and_cut_when_a_row_fails() {
    let docs = Docs::start().await;
    seed(&docs).await;
    let http = reqwest::Client::new();
    let token = docs.app.admin_token();
    let got = get(http
        .get(docs.url("/db/_changes?include_docs=true"))
        .bearer_auth(&token))
    .await;
    assert_cut(&got, "{\"results\":[{\"seq\":");

    // Without the broken row, the same answer is whole: every row, then its end.
    let limit = COPIES + 1;
    let whole = get(http
        .get(docs.url(&format!("/db/_changes?include_docs=true&limit={limit}")))
        .bearer_auth(&token))
    .await;
    assert_eq!(whole.status, 200);
    assert!(!whole.broken);
    assert_eq!(whole.length, None, "streamed: no Content-Length");
    let answer: serde_json::Value = serde_json::from_slice(&whole.bytes).expect("json");
    let rows = answer["results"].as_array().expect("results");
    assert_eq!(rows.len() as i64, limit);
    assert_eq!(rows[1]["doc"]["_id"], "c0001");
    assert_eq!(answer["pending"], 1, "the broken row is still pending");
    docs.stop().await;
}

#[tokio::test]
async fn all_docs_are_written_as_read_and_cut_when_a_row_fails() {
    let docs = Docs::start().await;
    seed(&docs).await;
    let http = reqwest::Client::new();
    let token = docs.app.admin_token();
    let got = get(http
        .get(docs.url("/db/_all_docs?include_docs=true"))
        .bearer_auth(&token))
    .await;
    assert_cut(&got, "{\"total_rows\":");
    let whole = get(http
        .get(docs.url("/db/_all_docs?include_docs=true&endkey=\"template\""))
        .bearer_auth(&token))
    .await;
    assert_eq!(whole.status, 200);
    let answer: serde_json::Value = serde_json::from_slice(&whole.bytes).expect("json");
    assert_eq!(
        answer["rows"].as_array().map(Vec::len),
        Some(COPIES as usize + 1)
    );
    docs.stop().await;
}

#[tokio::test]
async fn bulk_get_is_written_as_read_and_cut_when_an_entry_fails() {
    let docs = Docs::start().await;
    seed(&docs).await;
    let http = reqwest::Client::new();
    let token = docs.app.admin_token();
    let mut wanted: Vec<_> = (1..=COPIES)
        .map(|n| json!({"id": format!("c{n:04}")}))
        .collect();
    wanted.push(json!({"id": "zz-broken"}));
    let got = get(http
        .post(docs.url("/db/_bulk_get"))
        .bearer_auth(&token)
        .json(&json!({ "docs": wanted })))
    .await;
    assert_cut(&got, "{\"results\":[{\"id\":\"c0001\"");
    wanted.pop();
    let whole = get(http
        .post(docs.url("/db/_bulk_get"))
        .bearer_auth(&token)
        .json(&json!({ "docs": wanted })))
    .await;
    assert_eq!(whole.status, 200);
    let answer: serde_json::Value = serde_json::from_slice(&whole.bytes).expect("json");
    assert_eq!(
        answer["results"].as_array().map(Vec::len),
        Some(COPIES as usize)
    );
    docs.stop().await;
}

#[tokio::test]
async fn a_bad_parameter_is_still_answered_before_the_stream() {
    let docs = Docs::start().await;
    seed(&docs).await;
    for path in [
        "/db/_changes?include_docs=maybe",
        "/db/_changes?feed=sideways",
        "/db/_changes?limit=-1",
        "/db/_all_docs?skip=x",
        "/db/_all_docs?keys=[1",
    ] {
        let (status, body) = docs.admin("GET", path, "").await;
        assert_eq!(status, 400, "{path}: {body}");
        let body: serde_json::Value = serde_json::from_str(&body).expect("json error");
        assert!(body["error"].is_string(), "{path}: {body}");
    }
    let (status, _) = docs.admin("POST", "/db/_bulk_get", "{\"docs\": 1}").await;
    assert_eq!(status, 400);
    docs.stop().await;
}
