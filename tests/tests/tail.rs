//! `palimpsest tail --since T1 --until T2` reads the JetStream stream from T1: it skips what
//! was recorded before T1, prints what was recorded between, and stops (without error) at the
//! first event recorded after T2.

use palimpsest::cli::format::Format;
use palimpsest::cli::tail::{TailOptions, run};
use palimpsest::config::Settings;
use palimpsest_testkit::{NatsServer, TestApp};
use std::time::Duration;

/// Creates docs database `name` (its events are recorded when this returns).
async fn create_database(app: &TestApp, name: &str) {
    let res = reqwest::Client::new()
        .put(app.url(&format!("/docs/{name}")))
        .bearer_auth(app.admin_token())
        .send()
        .await
        .expect("create");
    assert!(res.status().is_success(), "{}", res.status());
}

/// The clock between two writes, well apart from both.
async fn a_moment_between() -> chrono::DateTime<chrono::Utc> {
    tokio::time::sleep(Duration::from_millis(200)).await;
    let now = chrono::Utc::now();
    tokio::time::sleep(Duration::from_millis(200)).await;
    now
}

#[tokio::test]
async fn tail_since_and_until_prints_the_events_between_and_stops_at_the_first_after() {
    let nats = NatsServer::start().await;
    let app = TestApp::start_with_nats(&nats.url()).await;
    create_database(&app, "tail-early").await;
    let since = a_moment_between().await;
    create_database(&app, "tail-inside").await;
    let until = a_moment_between().await;
    create_database(&app, "tail-after").await;
    create_database(&app, "tail-later").await;

    let settings = Settings {
        nats_url: nats.url(),
        ..Settings::for_database(app.database_url(), app.data_dir())
    };
    let options = TailOptions {
        subject: None,
        since: Some(since),
        until: Some(until),
        format: Format::Jsonl,
    };
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), run(&settings, &options, &mut out))
        .await
        .expect("tail stops at the first event after --until")
        .expect("tail succeeds");
    let printed = String::from_utf8(out).expect("utf-8");
    assert!(printed.contains("tail-inside"), "{printed}");
    for outside in ["tail-early", "tail-after", "tail-later"] {
        assert!(!printed.contains(outside), "{outside} printed: {printed}");
    }
    for line in printed.lines() {
        let event: palimpsest_events::RecordedEvent =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(
            since <= event.recorded_at && event.recorded_at <= until,
            "{line}"
        );
    }
    app.stop().await;
}
