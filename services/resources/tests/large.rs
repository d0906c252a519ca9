//! A 200 MB upload and download stream through the service with bounded memory: the body goes
//! to a temporary file while it is hashed, then into the content store; the download streams
//! from the file. The test process (client and server both) must stay far below the body's size.

mod common;

use common::{ANN, Deki, attr};
use futures::StreamExt;
use sha2::{Digest, Sha256};

const SIZE: usize = 200 * 1024 * 1024;
const CHUNK: usize = 256 * 1024;

/// A kilobyte-or-so of memory in kB from `/proc/self/status` (`VmRSS`, `VmHWM`).
fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn chunk(i: usize) -> bytes::Bytes {
    let mut data = vec![0u8; CHUNK];
    for (j, byte) in data.iter_mut().enumerate() {
        *byte = ((i * 31 + j * 7) % 251) as u8;
    }
    bytes::Bytes::from(data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_200_mb_file_streams_in_and_out_with_bounded_memory() {
    let deki = Deki::start().await;
    let baseline = status_kb("VmRSS:");
    let mut expected = Sha256::new();
    for i in 0..SIZE / CHUNK {
        expected.update(chunk(i));
    }
    let expected = hex::encode(expected.finalize());

    let body = futures::stream::iter((0..SIZE / CHUNK).map(|i| Ok::<_, std::io::Error>(chunk(i))));
    let started = std::time::Instant::now();
    let answer = deki
        .http
        .put(deki.url("/pages/1/files/big.bin"))
        .bearer_auth(ANN)
        .header("content-type", "application/octet-stream")
        .body(reqwest::Body::wrap_stream(body))
        .send()
        .await
        .expect("upload");
    assert_eq!(answer.status(), 200);
    let file: serde_json::Value = answer.json().await.expect("json");
    let upload_secs = started.elapsed().as_secs_f64();
    assert_eq!(file["contents"]["@size"], SIZE.to_string());
    let id = attr(&file, "id");

    let started = std::time::Instant::now();
    let response = deki
        .http
        .get(deki.url(&format!("/files/{id}")))
        .send()
        .await
        .expect("download");
    assert_eq!(response.status(), 200);
    let mut stream = response.bytes_stream();
    let (mut got, mut size) = (Sha256::new(), 0usize);
    while let Some(piece) = stream.next().await {
        let piece = piece.expect("chunk");
        size += piece.len();
        got.update(&piece);
    }
    let download_secs = started.elapsed().as_secs_f64();
    assert_eq!(size, SIZE);
    assert_eq!(hex::encode(got.finalize()), expected);

    let peak = status_kb("VmHWM:");
    let grown_mb = peak.saturating_sub(baseline) / 1024;
    eprintln!(
        "200 MB: upload {upload_secs:.1}s, download {download_secs:.1}s; RSS baseline {} MB, peak {} MB (+{grown_mb} MB)",
        baseline / 1024,
        peak / 1024
    );
    assert!(
        grown_mb < 64,
        "peak RSS grew by {grown_mb} MB for a 200 MB body"
    );
    assert_eq!(deki.stored_files(), 1);
    deki.stop().await;
}
