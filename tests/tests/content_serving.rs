//! Content kept outside the log is checked on the way out too: a read that serves a stored
//! file (docs' attachment, resources' content) hashes it against the digest its event recorded
//! before sending anything, and a file with one byte changed answers 500 naming it, never its
//! bytes, counted in `palimpsest_content_digest_mismatches_total{context}`.

use palimpsest_testkit::TestApp;
use reqwest::{Client, StatusCode};
use serde_json::Value;
use std::path::{Path, PathBuf};

const METRIC: &str = "palimpsest_content_digest_mismatches_total";

/// The mismatches counted for `context` so far (0 before the first).
async fn mismatches(app: &TestApp, context: &str) -> u64 {
    let text = Client::new()
        .get(app.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    let series = format!("{METRIC}{{context=\"{context}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&series))
        .map(|n| n.trim().parse().expect("a count"))
        .unwrap_or(0)
}

/// Every file below `dir`, two levels deep (`<key[0..2]>/<key>`), in path order.
fn stored_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for prefix in std::fs::read_dir(dir).expect("content folder") {
        let prefix = prefix.expect("entry").path();
        if prefix.file_name().is_some_and(|n| n == ".tmp") {
            continue;
        }
        for file in std::fs::read_dir(prefix).expect("prefix folder") {
            files.push(file.expect("entry").path());
        }
    }
    files.sort();
    files
}

/// The file of `files` whose bytes are `bytes`.
fn file_holding(files: &[PathBuf], bytes: &[u8]) -> PathBuf {
    files
        .iter()
        .find(|f| std::fs::read(f).expect("read") == bytes)
        .cloned()
        .unwrap_or_else(|| panic!("no stored file holds {bytes:?}: {files:?}"))
}

/// Flips one bit of the file's first byte.
fn flip_a_byte(file: &Path) {
    let mut bytes = std::fs::read(file).expect("read");
    bytes[0] ^= 1;
    std::fs::write(file, bytes).expect("tamper");
}

/// The file's name: its digest, which the refusal names.
fn name_of(file: &Path) -> String {
    file.file_name()
        .and_then(|n| n.to_str())
        .expect("name")
        .to_owned()
}

/// Asserts a 500 JSON answer whose `field` names the file, and that the bytes are not in it.
async fn assert_refused(res: reqwest::Response, field: &str, file: &Path, bytes: &[u8]) {
    assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let text = res.text().await.expect("body");
    let body: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let message = body[field].as_str().unwrap_or_else(|| panic!("{body}"));
    assert!(message.contains(&name_of(file)), "{message}");
    let sent = String::from_utf8_lossy(bytes);
    assert!(
        !text.contains(sent.as_ref()),
        "no stored bytes in the answer"
    );
}

#[tokio::test]
async fn a_docs_attachment_file_with_a_byte_changed_is_refused_and_counted() {
    let app = TestApp::builder()
        .docs(palimpsest_docs::Settings {
            inline_max: 0,
            ..Default::default()
        })
        .start()
        .await;
    let http = Client::new();
    let admin = app.admin_token();
    let put = |path: &str| http.put(app.url(path)).bearer_auth(&admin);
    assert!(
        put("/docs/db")
            .send()
            .await
            .expect("db")
            .status()
            .is_success()
    );
    for (doc, bytes) in [("d1", "to be altered"), ("d2", "left as it is")] {
        let created: Value = put(&format!("/docs/db/{doc}"))
            .json(&serde_json::json!({}))
            .send()
            .await
            .expect("doc")
            .json()
            .await
            .expect("json");
        let rev = created["rev"].as_str().expect("rev");
        let res = put(&format!("/docs/db/{doc}/a.txt?rev={rev}"))
            .header("content-type", "text/plain")
            .body(bytes)
            .send()
            .await
            .expect("attachment");
        assert!(res.status().is_success(), "{}", res.status());
    }
    let get = |path: &str| http.get(app.url(path)).bearer_auth(&admin).send();
    let served = get("/docs/db/d1/a.txt").await.expect("get");
    assert_eq!(served.status(), StatusCode::OK);
    assert_eq!(served.text().await.expect("bytes"), "to be altered");

    let files = stored_files(&app.data_dir().join("docs-attachments"));
    assert_eq!(files.len(), 2, "{files:?}");
    let altered = file_holding(&files, b"to be altered");
    let before = mismatches(&app, "docs").await;
    flip_a_byte(&altered);

    let res = get("/docs/db/d1/a.txt").await.expect("get");
    assert_refused(res, "reason", &altered, b"uo be altered").await;
    let res = get("/docs/db/d1?attachments=true").await.expect("get");
    assert_refused(res, "reason", &altered, b"uo be altered").await;
    assert_eq!(mismatches(&app, "docs").await, before + 2);

    let intact = get("/docs/db/d2/a.txt").await.expect("get");
    assert_eq!(intact.status(), StatusCode::OK);
    assert_eq!(intact.text().await.expect("bytes"), "left as it is");
    let inline: Value = get("/docs/db/d2?attachments=true")
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(
        inline["_attachments"]["a.txt"]["data"], "bGVmdCBhcyBpdCBpcw==",
        "{inline}"
    );
    assert_eq!(mismatches(&app, "docs").await, before + 2);
    app.stop().await;
}

#[tokio::test]
async fn a_resources_content_file_with_a_byte_changed_is_refused_and_counted() {
    let app = TestApp::builder()
        .data_file("resources-keys.json", r#"{"ann-key": {"user_id": 10}}"#)
        .resources_inline_max(0)
        .start()
        .await;
    let http = Client::new();
    let file = |name: &str| app.url(&format!("/resources/@api/deki/pages/1/files/{name}"));
    for (name, bytes) in [("a.txt", "to be altered"), ("b.txt", "left as it is")] {
        let res = http
            .put(file(name))
            .bearer_auth("ann-key")
            .header("content-type", "text/plain")
            .body(bytes)
            .send()
            .await
            .expect("upload");
        assert!(res.status().is_success(), "{}", res.status());
    }
    let get = |name: &str| http.get(file(name)).bearer_auth("ann-key").send();
    let served = get("a.txt").await.expect("get");
    assert_eq!(served.status(), StatusCode::OK);
    assert_eq!(served.text().await.expect("bytes"), "to be altered");

    let files = stored_files(&app.resources_content_dir());
    assert_eq!(files.len(), 2, "{files:?}");
    let altered = file_holding(&files, b"to be altered");
    let before = mismatches(&app, "resources").await;
    flip_a_byte(&altered);

    let res = get("a.txt").await.expect("get");
    assert_refused(res, "error", &altered, b"uo be altered").await;
    assert_eq!(mismatches(&app, "resources").await, before + 1);

    let intact = get("b.txt").await.expect("get");
    assert_eq!(intact.status(), StatusCode::OK);
    assert_eq!(intact.text().await.expect("bytes"), "left as it is");
    assert_eq!(mismatches(&app, "resources").await, before + 1);
    app.stop().await;
}
