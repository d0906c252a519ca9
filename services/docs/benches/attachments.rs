//! `cargo bench -p palimpsest-docs --bench attachments`: a 200 MB attachment up and down through
//! the real app, and how much the process grows doing it.
//!
//! 1. The floor, measured in this run on this machine: the same bytes written to a file and
//!    read back with their MD5 computed (what any upload and download must at least do).
//! 2. The real app in this process (every context and projector, a fresh database): a
//!    standalone `PUT /docs/{db}/{doc}/{att}` streamed from a generator (never whole in the
//!    client either), then `GET` streamed back with the MD5 checked against the generator's
//!    and against the digest the document shows (`md5-`, as CouchDB).
//! 3. The process's peak resident memory during 2., over its resident memory before it (the
//!    peak is reset first through `/proc/self/clear_refs`), against the 50 MB target.
//!
//! 4. A `_changes?include_docs=true` answer of about 180 MB (documents of 16 kB copied straight
//!    into the read model of a database, as the docs bench seeds its `_changes`), read through
//!    HTTP by a client that counts it without keeping it, and the process's peak resident
//!    memory during the read over its resident memory before, against the 64 MiB
//!    target (the answer is streamed: it is never whole in memory).
//!
//! `BENCH_ATTACHMENT_MB` sets the attachment's size in MiB (default 200; 0 skips 1-3),
//! `BENCH_CHANGES_MB` the `_changes` answer's in MB (default 180; 0 skips 4). MB/s are 10^6
//! bytes per second.

use base64::Engine;
use bytes::Bytes;
use md5::{Digest, Md5};
use palimpsest_testkit::TestApp;
use std::io::{Read, Write};
use std::time::Instant;

/// The bound on the process's growth for a 200 MB attachment.
const TARGET_GROWTH_MB: f64 = 50.0;

/// Bytes per generated chunk.
const CHUNK: usize = 64 * 1024;

/// The bound on the process's growth for a 180 MB `_changes` answer, in MiB.
const TARGET_CHANGES_GROWTH_MIB: f64 = 64.0;

/// The text of each document of the `_changes` phase, in bytes.
const CHANGES_DOC_TEXT: usize = 16_000;

fn size_mb() -> usize {
    env_number("BENCH_ATTACHMENT_MB", 200)
}

fn changes_mb() -> usize {
    env_number("BENCH_CHANGES_MB", 180)
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Chunk `index` of the generated content: different everywhere, cheap to make.
fn chunk(index: usize) -> Bytes {
    let mut state = (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut out = Vec::with_capacity(CHUNK);
    while out.len() < CHUNK {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.extend_from_slice(&state.to_le_bytes());
    }
    Bytes::from(out)
}

/// A field of `/proc/self/status` in kB (`VmRSS`, `VmHWM`).
fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Resets the peak resident size to the current one (Linux: `5` to `clear_refs`).
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn mb_per_s(bytes: usize, seconds: f64) -> f64 {
    bytes as f64 / 1e6 / seconds
}

/// The floor: the content written to a file and read back with its MD5.
fn floor(chunks: usize) -> (f64, f64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("floor.bin");
    let total = chunks * CHUNK;
    let started = Instant::now();
    let mut file = std::fs::File::create(&path).expect("floor file");
    for index in 0..chunks {
        file.write_all(&chunk(index)).expect("write");
    }
    file.sync_all().expect("sync");
    drop(file);
    let write = mb_per_s(total, started.elapsed().as_secs_f64());
    let started = Instant::now();
    let mut file = std::fs::File::open(&path).expect("floor file");
    let mut md5 = Md5::new();
    let mut buffer = vec![0u8; CHUNK];
    loop {
        let read = file.read(&mut buffer).expect("read");
        if read == 0 {
            break;
        }
        md5.update(&buffer[..read]);
    }
    let read = mb_per_s(total, started.elapsed().as_secs_f64());
    std::hint::black_box(md5.finalize());
    (write, read)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(run());
}

async fn run() {
    let app = TestApp::start().await;
    let client = reqwest::Client::new();
    if size_mb() > 0 {
        attachment(&app, &client).await;
    }
    if changes_mb() > 0 {
        changes(&app, &client).await;
    }
    app.stop().await;
}

/// Phases 1-3: the attachment up and down.
async fn attachment(app: &TestApp, client: &reqwest::Client) {
    let chunks = size_mb() * 1024 * 1024 / CHUNK;
    let total = chunks * CHUNK;
    let mut expected = Md5::new();
    for index in 0..chunks {
        expected.update(chunk(index));
    }
    let expected = expected.finalize();
    let (floor_write, floor_read) = floor(chunks);

    let url = |path: &str| app.url(&format!("/docs{path}"));
    let created = client
        .put(url("/bench"))
        .bearer_auth(app.admin_token())
        .send()
        .await
        .expect("create db");
    assert!(created.status().is_success(), "database: {created:?}");
    // Warm up the paths (connections, the first command, the first read) before measuring.
    let small = client
        .put(url("/bench/warm/x.bin"))
        .body(vec![1u8; 100_000])
        .send()
        .await
        .expect("warm up");
    assert!(small.status().is_success(), "warm up: {small:?}");
    let warm = client
        .get(url("/bench/warm/x.bin"))
        .send()
        .await
        .expect("warm get");
    std::hint::black_box(warm.bytes().await.expect("warm body"));

    let peak_reset = reset_peak();
    let rss_before = status_kb("VmRSS");

    let started = Instant::now();
    let body =
        futures::stream::iter((0..chunks).map(|index| Ok::<_, std::io::Error>(chunk(index))));
    let put = client
        .put(url("/bench/big/content.bin"))
        .header("content-type", "application/octet-stream")
        .body(reqwest::Body::wrap_stream(body))
        .send()
        .await
        .expect("upload");
    let up_seconds = started.elapsed().as_secs_f64();
    assert_eq!(put.status().as_u16(), 201, "upload: {:?}", put.text().await);

    let started = Instant::now();
    let response = client
        .get(url("/bench/big/content.bin"))
        .send()
        .await
        .expect("download");
    assert_eq!(response.status().as_u16(), 200);
    let mut md5 = Md5::new();
    let mut received = 0usize;
    let mut stream = response.bytes_stream();
    while let Some(piece) = futures::StreamExt::next(&mut stream).await {
        let piece = piece.expect("download chunk");
        received += piece.len();
        md5.update(&piece);
    }
    let down_seconds = started.elapsed().as_secs_f64();
    let got = md5.finalize();
    assert_eq!(received, total, "every byte comes back");
    assert_eq!(
        got, expected,
        "the MD5 of what came back is the generator's"
    );

    let peak = status_kb("VmHWM");
    let growth_mb = peak.saturating_sub(rss_before) as f64 / 1024.0;

    let doc: serde_json::Value = client
        .get(url("/bench/big"))
        .send()
        .await
        .expect("doc")
        .json()
        .await
        .expect("doc json");
    let digest = format!(
        "md5-{}",
        base64::engine::general_purpose::STANDARD.encode(expected)
    );
    assert_eq!(
        doc["_attachments"]["content.bin"]["digest"],
        digest.as_str()
    );

    let up = mb_per_s(total, up_seconds);
    let down = mb_per_s(total, down_seconds);
    println!(
        "attachment of {} MiB ({total} bytes), md5 {digest} checked",
        total / (1024 * 1024)
    );
    println!(
        "up   (PUT, streamed):   {up:8.1} MB/s   floor (file write + fsync): {floor_write:8.1} MB/s   ratio {:.2}",
        up / floor_write
    );
    println!(
        "down (GET, streamed):   {down:8.1} MB/s   floor (file read + md5):    {floor_read:8.1} MB/s   ratio {:.2}",
        down / floor_read
    );
    println!(
        "process peak RSS growth: {growth_mb:.1} MB (RSS before {:.1} MB, peak {:.1} MB; peak reset: {peak_reset}); target < {TARGET_GROWTH_MB} MB: {}",
        rss_before as f64 / 1024.0,
        peak as f64 / 1024.0,
        if growth_mb < TARGET_GROWTH_MB {
            "met"
        } else {
            "MISSED"
        }
    );
}

/// Phase 4: a `_changes?include_docs=true` answer of `changes_mb()` MB through HTTP.
async fn changes(app: &TestApp, client: &reqwest::Client) {
    let docs = seed_changes(app, client).await;
    let url = app.url("/docs/feed/_changes?include_docs=true");
    // Warm up the path (its statement, the connection) on a few rows first.
    let warm = client
        .get(format!("{url}&limit=10"))
        .bearer_auth(app.admin_token())
        .send()
        .await
        .expect("warm _changes");
    std::hint::black_box(warm.bytes().await.expect("warm body"));

    let peak_reset = reset_peak();
    let rss_before = status_kb("VmRSS");
    let started = Instant::now();
    let response = client
        .get(&url)
        .bearer_auth(app.admin_token())
        .send()
        .await
        .expect("_changes");
    assert_eq!(response.status().as_u16(), 200);
    let mut tally = Tally::default();
    let mut stream = response.bytes_stream();
    while let Some(piece) = futures::StreamExt::next(&mut stream).await {
        tally.add(&piece.expect("_changes piece"));
    }
    let seconds = started.elapsed().as_secs_f64();
    let peak = status_kb("VmHWM");
    let growth_mib = peak.saturating_sub(rss_before) as f64 / 1024.0;
    assert_eq!(tally.rows, docs, "every document is a row");
    assert!(
        tally.tail.ends_with(b",\"pending\":0}"),
        "the answer ends as a normal feed ends"
    );
    println!(
        "_changes?include_docs=true of {docs} documents: {:.1} MB in {seconds:.1} s ({:.1} MB/s), read through HTTP as it came",
        tally.bytes as f64 / 1e6,
        mb_per_s(tally.bytes, seconds)
    );
    println!(
        "process peak RSS growth during the _changes read: {growth_mib:.1} MiB (RSS before {:.1} MiB, peak {:.1} MiB; peak reset: {peak_reset}); target < {TARGET_CHANGES_GROWTH_MIB} MiB: {}",
        rss_before as f64 / 1024.0,
        peak as f64 / 1024.0,
        if growth_mib < TARGET_CHANGES_GROWTH_MIB {
            "met"
        } else {
            "MISSED"
        }
    );
}

/// What a client counts of a `_changes` answer without keeping it: its bytes, its rows (each
/// `{"seq":`, found across the pieces' edges) and its last bytes.
#[derive(Default)]
struct Tally {
    bytes: usize,
    rows: usize,
    tail: Vec<u8>,
}

impl Tally {
    const ROW: &'static [u8] = b"{\"seq\":";

    fn add(&mut self, piece: &[u8]) {
        self.bytes += piece.len();
        let keep = self.tail.len().min(Self::ROW.len() - 1);
        let mut window = self.tail[self.tail.len() - keep..].to_vec();
        window.extend_from_slice(piece);
        self.rows += window
            .windows(Self::ROW.len())
            .filter(|w| *w == Self::ROW)
            .count();
        let from = window.len().saturating_sub(64);
        self.tail = window[from..].to_vec();
    }
}

/// Database `feed` holding enough documents of `CHANGES_DOC_TEXT` bytes for a `_changes`
/// answer of `changes_mb()` MB: one written through the API, the others copies of it straight
/// in the read model, each with its own id and sequence (`_changes` reads only the read
/// model). Returns how many documents it holds.
async fn seed_changes(app: &TestApp, client: &reqwest::Client) -> usize {
    let db_url = app.url("/docs/feed");
    let created = client
        .put(&db_url)
        .bearer_auth(app.admin_token())
        .send()
        .await
        .expect("create feed");
    assert!(created.status().is_success(), "database: {created:?}");
    let text: String = (0..CHANGES_DOC_TEXT)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let written = client
        .put(format!("{db_url}/template"))
        .bearer_auth(app.admin_token())
        .json(&serde_json::json!({ "text": text, "kind": "bench" }))
        .send()
        .await
        .expect("template");
    assert_eq!(written.status().as_u16(), 201);
    // A row is the document and about 100 bytes around it.
    let docs = (changes_mb() * 1_000_000).div_ceil(CHANGES_DOC_TEXT + 140);
    let read = app.state.read.get().await.expect("read model");
    let row = read
        .query_one(
            "SELECT value, seq FROM docs.kv WHERE db = 'feed' AND key = 'template'",
            &[],
        )
        .await
        .expect("template row");
    let (value, seq): (String, i64) = (row.get(0), row.get(1));
    let marker = format!("\"sequence\":{seq}");
    assert!(
        value.contains(&marker),
        "the stored form names its sequence"
    );
    read.execute(
        "INSERT INTO docs.kv (db, key, value, seq, rev, deleted) \
         SELECT db, 'c' || lpad(n::text, 7, '0'), replace($1, $2, '\"sequence\":' || ($3 + n)), \
                $3 + n, rev, deleted \
         FROM generate_series(1, $4::bigint) AS n, docs.kv WHERE db = 'feed' AND key = 'template'",
        &[&value, &marker, &seq, &(docs as i64 - 1)],
    )
    .await
    .expect("seed");
    read.execute("ANALYZE docs.kv", &[]).await.expect("analyze");
    docs
}
