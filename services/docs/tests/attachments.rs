//! Large attachments through HTTP: above the inline size their bytes stream into the attachment
//! folder (never in an event), are stored once however many documents share them, and stream
//! back with CouchDB's headers.

mod common;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use common::Docs;
use md5::{Digest, Md5};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// `size` bytes that differ from one `seed` to another and do not repeat in short periods.
fn bytes(size: usize, seed: u64) -> Vec<u8> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..size)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u8
        })
        .collect()
}

/// CouchDB's digest of `data`: `md5-` and the base64 of its MD5.
fn couch_md5(data: &[u8]) -> String {
    format!("md5-{}", STANDARD.encode(Md5::digest(data)))
}

/// The files of the attachment folder (without the temporary folder).
fn stored_files(folder: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(prefixes) = std::fs::read_dir(folder) else {
        return out;
    };
    for prefix in prefixes.flatten() {
        if prefix.file_name() == ".tmp" {
            continue;
        }
        for file in std::fs::read_dir(prefix.path())
            .expect("prefix folder")
            .flatten()
        {
            out.push(file.path());
        }
    }
    out.sort();
    out
}

async fn get_bytes(
    docs: &Docs,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let mut request = reqwest::Client::new().get(docs.url(path));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.bytes().await.expect("body").to_vec();
    (status, headers, body)
}

async fn put_bytes(docs: &Docs, path: &str, data: Vec<u8>) -> (u16, Value) {
    let response = reqwest::Client::new()
        .put(docs.url(path))
        .header("content-type", "application/octet-stream")
        .body(data)
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    (status, response.json().await.expect("json"))
}

#[tokio::test]
async fn a_large_standalone_upload_streams_to_the_folder_and_back_with_couchdbs_headers() {
    let docs = Docs::start().await;
    docs.as_admin("PUT", "/db", None).await;
    let data = bytes(5 * 1024 * 1024, 1);
    let (status, created) = put_bytes(&docs, "/db/a/big.bin", data.clone()).await;
    assert_eq!(status, 201, "{created}");
    let (_, doc) = docs.call("GET", "/db/a", None).await;
    assert_eq!(
        doc["_attachments"]["big.bin"],
        json!({"content_type": "application/octet-stream", "digest": couch_md5(&data),
               "length": data.len(), "revpos": 1, "stub": true})
    );
    let (status, headers, body) = get_bytes(&docs, "/db/a/big.bin", &[]).await;
    assert_eq!(status, 200);
    assert!(body == data, "the bytes come back");
    let etag = format!("\"{}\"", STANDARD.encode(Md5::digest(&data)));
    assert_eq!(headers["etag"], etag.as_str());
    assert_eq!(headers["content-length"], data.len().to_string().as_str());
    assert_eq!(headers["content-type"], "application/octet-stream");
    let (status, headers, part) =
        get_bytes(&docs, "/db/a/big.bin", &[("range", "bytes=1000-1999")]).await;
    assert_eq!(status, 206);
    assert!(part == data[1000..2000], "the range's bytes");
    assert_eq!(
        headers["content-range"],
        format!("bytes 1000-1999/{}", data.len()).as_str()
    );
    let (status, _, _) = get_bytes(&docs, "/db/a/big.bin", &[("if-none-match", &etag)]).await;
    assert_eq!(status, 304);
    let rows = docs
        .rows("SELECT length, data IS NULL AS no_data, location FROM docs.attachments")
        .await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        rows[0]["no_data"], true,
        "the bytes are not in the read model"
    );
    let folder = docs.app.data_dir().join("docs-attachments");
    let location = rows[0]["location"].as_str().expect("location");
    let file = std::fs::read(folder.join(location)).expect("stored file");
    assert!(file == data, "the file holds the bytes");
    let events = docs.app.state.store.read_all(0, 1000).await.expect("log");
    let largest = events
        .iter()
        .map(|e| e.payload.to_string().len())
        .max()
        .unwrap_or(0);
    assert!(largest < 100_000, "no event carries the bytes: {largest}");
    docs.stop().await;
}

#[tokio::test]
async fn large_inline_attachments_in_bulk_docs_go_to_the_folder_and_equal_bytes_are_stored_once() {
    let docs = Docs::start().await;
    docs.as_admin("PUT", "/db", None).await;
    let shared = bytes(5 * 1024 * 1024, 2);
    let other = bytes(5 * 1024 * 1024 + 1, 3);
    let (status, _) = put_bytes(&docs, "/db/a/first.bin", shared.clone()).await;
    assert_eq!(status, 201);
    let batch = json!({"docs": [
        {"_id": "b", "_attachments": {"same.bin": {"content_type": "application/x-test", "data": STANDARD.encode(&shared)}}},
        {"_id": "c", "_attachments": {"other.bin": {"content_type": "application/x-test", "data": STANDARD.encode(&other)}}},
    ]});
    let (status, answer) = docs.call("POST", "/db/_bulk_docs", Some(batch)).await;
    assert_eq!(status, 201, "{answer}");
    assert_eq!(answer[0]["ok"], true, "{answer}");
    assert_eq!(answer[1]["ok"], true, "{answer}");
    let (_, b) = docs.call("GET", "/db/b", None).await;
    assert_eq!(b["_attachments"]["same.bin"]["digest"], couch_md5(&shared));
    assert_eq!(b["_attachments"]["same.bin"]["length"], shared.len());
    let (status, _, body) = get_bytes(&docs, "/db/b/same.bin", &[]).await;
    assert!(status == 200 && body == shared, "shared bytes come back");
    let (_, c) = docs.call("GET", "/db/c?attachments=true", None).await;
    let inline = c["_attachments"]["other.bin"]["data"]
        .as_str()
        .expect("inline data");
    assert!(
        STANDARD.decode(inline).expect("base64") == other,
        "attachments=true reads the file"
    );
    let rows = docs
        .rows("SELECT key, md5 FROM docs.attachments ORDER BY key")
        .await;
    assert_eq!(rows.len(), 2, "two contents, three attachments: {rows:?}");
    let folder = docs.app.data_dir().join("docs-attachments");
    assert_eq!(stored_files(&folder).len(), 2, "each content once on disk");
    let temps = std::fs::read_dir(folder.join(".tmp"))
        .map(|entries| entries.count())
        .unwrap_or(0);
    assert_eq!(temps, 0, "no temporary file is left");
    docs.stop().await;
}

#[tokio::test]
async fn a_broken_inline_attachment_is_refused_in_its_place() {
    let docs = Docs::start().await;
    docs.as_admin("PUT", "/db", None).await;
    let batch = json!({"docs": [
        {"_id": "bad", "_attachments": {"x": {"data": "not base64!"}}},
        {"_id": "good", "n": 1},
    ]});
    let (status, answer) = docs.call("POST", "/db/_bulk_docs", Some(batch)).await;
    assert_eq!(status, 201, "{answer}");
    assert_eq!(answer[0]["error"], "bad_request", "{answer}");
    assert_eq!(answer[1]["ok"], true, "{answer}");
    docs.stop().await;
}
