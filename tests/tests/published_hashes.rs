//! An event's hash recomputed from what is published, as an outside verifier would: from the
//! JSON of `/v1/events` and `/v1/streams/…` alone and from the relay's NATS messages alone, for
//! events appended by real routes of every context and for an event whose `recorded_at` ends in
//! `000` µs (the form that once lost its trailing zeros). `events/README.md`, "The bytes an
//! event's hash covers", is the contract checked here; `tests/verify_published_hashes.py`
//! checks it again with nothing but Python's standard library.

use palimpsest_e2e::workload::{
    append_until_a_whole_millisecond, form, json_body, write, write_through_every_context,
};
use palimpsest_events::canonical;
use palimpsest_log::relay::STREAM_NAME;
use palimpsest_testkit::{NatsServer, TestApp};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Every event of the log as `/v1/events` publishes it, page after page.
async fn published_by_v1_events(app: &TestApp) -> Vec<Value> {
    let mut events = Vec::new();
    let mut after = 0;
    loop {
        let page: Value = reqwest::Client::new()
            .get(app.url(&format!("/v1/events?after={after}&limit=1000")))
            .bearer_auth(app.admin_token())
            .send()
            .await
            .expect("get")
            .json()
            .await
            .expect("json");
        let batch = page["events"].as_array().expect("events").clone();
        if batch.is_empty() {
            return events;
        }
        after = page["next_after"].as_i64().expect("next_after");
        events.extend(batch);
    }
}

/// Every event of one stream as `/v1/streams/{path}` publishes it, page after page.
async fn published_by_v1_streams(app: &TestApp, path: &str) -> Vec<Value> {
    let mut events = Vec::new();
    let mut after = 0;
    loop {
        let page: Value = reqwest::Client::new()
            .get(app.url(&format!("/v1/streams/{path}?after={after}&limit=1000")))
            .bearer_auth(app.admin_token())
            .send()
            .await
            .expect("get")
            .json()
            .await
            .expect("json");
        let batch = page["events"].as_array().expect("events").clone();
        if batch.is_empty() {
            return events;
        }
        after = page["next_after"].as_i64().expect("next_after");
        events.extend(batch);
    }
}

/// Every event of the JetStream stream once the relay has published up to `head`, each the
/// message's payload parsed as it arrived.
async fn published_on_nats(nats_url: &str, head: i64) -> Vec<Value> {
    let js = async_nats::jetstream::new(async_nats::connect(nats_url).await.expect("nats"));
    let started = Instant::now();
    let stream = loop {
        if let Ok(mut s) = js.get_stream(STREAM_NAME).await
            && s.info().await.map(|i| i.state.last_sequence as i64).ok() >= Some(head)
        {
            break s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "relay did not reach {head}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut events = Vec::new();
    for sequence in 1..=head as u64 {
        let message = stream.get_raw_message(sequence).await.expect("message");
        events.push(serde_json::from_slice(&message.payload).expect("event json"));
    }
    events
}

/// The hash of a published event from its JSON alone: every field but `position`, `prev_hash`
/// and `hash` in canonical (RFC 8785) form, after the 32 bytes of `prev_hash` (zeros when null).
fn hash_from_json(event: &Value) -> String {
    let mut fields = event.as_object().expect("an event object").clone();
    for derived in ["position", "prev_hash", "hash"] {
        fields.remove(derived);
    }
    let prev: Option<[u8; 32]> = event["prev_hash"].as_str().map(|h| {
        hex::decode(h)
            .expect("prev_hash hex")
            .try_into()
            .expect("32 bytes")
    });
    let content = canonical::to_canonical_string(&Value::Object(fields));
    hex::encode(canonical::chain_hash(prev.as_ref(), &content))
}

/// Checks every event of `events` (from `source`): its hash recomputed from its JSON, its
/// `prev_hash` the hash before it in its stream, its `recorded_at` with six digits. Gives the
/// number of events whose `recorded_at` ends in `000` µs.
fn check_published(source: &str, events: &[Value]) -> usize {
    let mut last_of_stream: HashMap<String, String> = HashMap::new();
    let mut whole_milliseconds = 0;
    for event in events {
        let at = event["recorded_at"].as_str().expect("recorded_at");
        assert!(
            at.len() == 27 && at.as_bytes()[19] == b'.' && at.ends_with('Z'),
            "{source}: recorded_at {at} is not written with six digits in UTC"
        );
        if at.ends_with("000Z") {
            whole_milliseconds += 1;
        }
        assert_eq!(
            hash_from_json(event),
            event["hash"].as_str().expect("hash"),
            "{source}: the hash of {event} recomputed from its JSON"
        );
        let stream = event["stream"].to_string();
        assert_eq!(
            event["prev_hash"].as_str(),
            last_of_stream.get(&stream).map(String::as_str),
            "{source}: prev_hash of {event}"
        );
        let hash = event["hash"].as_str().expect("hash").to_owned();
        last_of_stream.insert(stream, hash);
    }
    whole_milliseconds
}

/// Runs `tests/verify_published_hashes.py` on `events` if python3 is here; says so if not.
fn check_with_python(source: &str, events: &[Value]) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/verify_published_hashes.py");
    let child = std::process::Command::new("python3")
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => {
            println!("{source}: python3 not run ({e}): the independent check is skipped");
            return;
        }
    };
    let input = serde_json::to_vec(events).expect("json");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), &input).expect("write");
    let output = child.wait_with_output().expect("python3 ran");
    let said = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{source}: python3 verifier: {said}"
    );
    assert!(
        said.contains(&format!("{} events verified", events.len())),
        "{source}: {said}"
    );
}

#[tokio::test]
async fn every_hash_is_recomputed_from_what_v1_events_and_nats_publish() {
    let nats = NatsServer::start().await;
    let app = TestApp::start_with_nats(&nats.url()).await;
    write_through_every_context(&app).await;
    let appends = append_until_a_whole_millisecond(&app).await;
    println!("a recorded_at at a whole millisecond after {appends} appends");
    write_through_every_context_again(&app).await;
    let head = app.state.store.head_position().await.expect("head");

    let from_http = published_by_v1_events(&app).await;
    assert_eq!(from_http.len() as i64, head, "/v1/events gives every event");
    let contexts: std::collections::BTreeSet<&str> = from_http
        .iter()
        .filter_map(|e| e["stream"]["context"].as_str())
        .collect();
    assert_eq!(
        contexts.into_iter().collect::<Vec<_>>(),
        ["atlas", "docs", "pads", "records", "resources", "test"]
    );
    assert!(check_published("/v1/events", &from_http) >= 1, "a 000 case");
    check_with_python("/v1/events", &from_http);

    let clock = published_by_v1_streams(&app, "test/clock/ms").await;
    assert_eq!(clock.len(), appends, "the clock stream, whole");
    assert!(check_published("/v1/streams", &clock) >= 1, "a 000 case");
    let clock_in_log: Vec<&Value> = from_http
        .iter()
        .filter(|e| e["stream"]["category"] == "clock")
        .collect();
    assert_eq!(clock.iter().collect::<Vec<_>>(), clock_in_log);

    let from_nats = published_on_nats(&nats.url(), head).await;
    assert_eq!(
        from_nats, from_http,
        "NATS and /v1/events publish the same JSON"
    );
    assert!(check_published("NATS", &from_nats) >= 1, "a 000 case");
    check_with_python("NATS", &from_nats);
    app.stop().await;
}

/// A second round of writes after the clock stream, so events of real routes also chain from
/// earlier ones (`prev_hash` set) at versions above 1.
async fn write_through_every_context_again(app: &TestApp) {
    use reqwest::Method as M;
    let admin = app.admin_token();
    let key = std::fs::read_to_string(app.data_dir().join("APIKEY.txt")).expect("APIKEY.txt");
    let set = form(&[("apikey", key.trim()), ("padID", "p1"), ("text", "again ☃")]);
    write(app, M::POST, "/pads/api/1.3.0/setText", set, None).await;
    let doc: Value = reqwest::Client::new()
        .get(app.url("/docs/db/d1"))
        .bearer_auth(&admin)
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    let rev = doc["_rev"].as_str().expect("_rev");
    let changed = json_body(json!({"_rev": rev, "float": 2.5e-300, "big": 1.7976931348623157e308}));
    write(app, M::PUT, "/docs/db/d1", changed, Some(&admin)).await;
    let file = "/resources/@api/deki/pages/1/files/a.txt";
    write(
        app,
        M::PUT,
        file,
        ("text/plain", "two".into()),
        Some(&admin),
    )
    .await;
}
