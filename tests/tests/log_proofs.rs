//! The log's signed Merkle tree checked by a verifier that is not the server's code:
//! `tests/verify_log.py`, written from RFC 9162's text with Python's hashlib and an Ed25519
//! library, against a live server holding events of all five contexts (a few thousand,
//! one of them recorded at a whole millisecond). It checks the head's signature, every leaf
//! recomputed from `/v1/events`, an inclusion proof of every position in several trees, the
//! consistency proofs between them, and every batch signature. The heads also arrive on NATS.

use futures::StreamExt;
use palimpsest_e2e::workload::{
    append_until_a_whole_millisecond, json_body, write, write_through_every_context,
};
use palimpsest_events::tree_head::{LogKey, SignedTreeHead};
use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::AppendRequest;
use palimpsest_log::tree::maker::head_subject;
use palimpsest_testkit::{NatsServer, TestApp};
use serde_json::Value;
use std::time::{Duration, Instant};

/// The latest signed head, once it covers `size` events.
async fn head_covering(app: &TestApp, size: i64) -> SignedTreeHead {
    let started = Instant::now();
    loop {
        let answer = reqwest::get(app.url("/v1/log/head")).await.expect("head");
        if answer.status().is_success() {
            let head: SignedTreeHead = answer.json().await.expect("head json");
            if head.head.tree_size as i64 >= size {
                return head;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no head covers {size} events"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Appends `count` events to one stream in one append (bulk, so the log holds thousands).
async fn append_many(app: &TestApp, n: usize, count: usize) {
    let stream = StreamName::new("test", "bulk", n.to_string()).expect("stream");
    let events = (0..count)
        .map(|i| NewEvent::new("Counted", 1, serde_json::json!({ "i": i, "s": "a\u{1}é" })))
        .collect();
    let request = AppendRequest::new().stream(stream, ExpectedVersion::Any, events);
    app.state.store.append(request).await.expect("append");
}

/// Runs `tests/verify_log.py` against the app (the server keeps serving meanwhile); gives its
/// JSON summary.
async fn verify_with_python(app: &TestApp, sizes: &[u64]) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/verify_log.py");
    let sizes: Vec<String> = sizes.iter().map(u64::to_string).collect();
    let output = tokio::process::Command::new("python3")
        .arg(script)
        .args(["--url", &app.url("")])
        .args(["--token", &app.admin_token()])
        .args(["--sizes", &sizes.join(",")])
        .output()
        .await
        .expect("python3 runs");
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "verify_log.py: {said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(said.trim()).unwrap_or_else(|e| panic!("summary {said}: {e}"))
}

#[tokio::test]
async fn an_independent_verifier_checks_every_proof_of_a_live_log() {
    let nats = NatsServer::start().await;
    let app = TestApp::start_with_nats(&nats.url()).await;
    let key: LogKey = reqwest::get(app.url("/v1/log/key"))
        .await
        .expect("key")
        .json()
        .await
        .expect("key json");
    let client = async_nats::connect(nats.url()).await.expect("nats");
    let mut heads = client
        .subscribe(head_subject(key.log_id))
        .await
        .expect("subscribe");

    write_through_every_context(&app).await;
    let early = app.state.store.head_position().await.expect("head") as u64;
    let appends = append_until_a_whole_millisecond(&app).await;
    for n in 0..4 {
        let doc = json_body(serde_json::json!({"n": n, "text": "ünï"}));
        let path = format!("/docs/db/more{n}");
        write(
            &app,
            reqwest::Method::PUT,
            &path,
            doc,
            Some(&app.admin_token()),
        )
        .await;
        append_many(&app, n, 600).await;
    }
    let size = app.state.store.head_position().await.expect("head");
    let head = head_covering(&app, size).await;
    assert!(head.verify(&key.verifying_key().expect("a valid key")));
    println!("{size} events, a whole millisecond after {appends} appends");

    let checked = Instant::now();
    let summary = verify_with_python(&app, &[1, early, early + 1, size as u64 / 2]).await;
    println!("verify_log.py: {summary} in {:?}", checked.elapsed());
    assert_eq!(summary["ok"], true, "{summary}");
    assert!(summary["events"].as_u64() >= Some(2400), "{summary}");
    assert!(summary["recorded_at_000"].as_u64() >= Some(1), "{summary}");
    assert!(
        summary["inclusion_proofs"].as_u64() >= Some(2400),
        "{summary}"
    );
    assert!(summary["batches"].as_u64() >= Some(1), "{summary}");
    assert_eq!(summary["legacy_positions"], 0, "{summary}");

    let published = tokio::time::timeout(Duration::from_secs(10), heads.next())
        .await
        .expect("a head on NATS")
        .expect("subscription open");
    let on_nats: SignedTreeHead = serde_json::from_slice(&published.payload).expect("head");
    assert!(on_nats.verify(&key.verifying_key().expect("key")));
    assert_eq!(on_nats.head.log_id, key.log_id);
    app.stop().await;
}

#[tokio::test]
async fn proofs_refuse_what_the_tree_does_not_hold() {
    let app = TestApp::start().await;
    write_through_every_context(&app).await;
    let size = app.state.store.head_position().await.expect("head");
    head_covering(&app, size).await;
    for (path, needle) in [
        (
            format!("/v1/log/proof/inclusion?position=1&tree_size={}", size + 1),
            "leaves",
        ),
        (
            "/v1/log/proof/inclusion?position=0&tree_size=1".to_string(),
            "position",
        ),
        ("/v1/log/proof/consistency?from=3&to=2".to_string(), "from"),
        (
            "/v1/log/proof/inclusion?position=1&tree_size=1&x=1".to_string(),
            "x",
        ),
        ("/v1/log/batches?from=0&to=1".to_string(), "from"),
    ] {
        let answer = reqwest::get(app.url(&path)).await.expect("get");
        assert_eq!(answer.status(), 400, "{path}");
        let body: Value = answer.json().await.expect("json error");
        assert!(body.to_string().contains(needle), "{path}: {body}");
    }
    app.stop().await;
}
