//! `palimpsest tail --since T1 --until T2` reads the JetStream stream from T1: it skips what
//! was recorded before T1, prints what was recorded between, and stops (without error) at the
//! first event recorded after T2. `--from POSITION` starts at a position, `--durable NAME`
//! resumes after the last event printed by an earlier run, `--context`/`--category`/`--type`
//! filter, and every `jsonl` line is an event envelope.

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
        since: Some(since),
        until: Some(until),
        format: Format::Jsonl,
        ..Default::default()
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

/// The settings of a tail reading `app`'s NATS.
fn tail_settings(app: &TestApp, nats: &NatsServer) -> Settings {
    Settings {
        nats_url: nats.url(),
        ..Settings::for_database(app.database_url(), app.data_dir())
    }
}

/// Runs tail with `options` (which must end by themselves: `count`) and parses every line.
async fn tail_jsonl(settings: &Settings, options: &TailOptions) -> Vec<RecordedEvent> {
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), run(settings, options, &mut out))
        .await
        .expect("tail stops after --count")
        .expect("tail succeeds");
    String::from_utf8(out)
        .expect("utf-8")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// Every event of `app`'s log.
async fn log(app: &TestApp) -> Vec<RecordedEvent> {
    app.state.store.read_all(0, 10_000).await.expect("log")
}

fn positions(events: &[RecordedEvent]) -> Vec<i64> {
    events.iter().map(|e| e.position).collect()
}

use palimpsest_events::RecordedEvent;

#[tokio::test]
async fn tail_from_a_position_through_a_durable_and_with_filters() {
    let nats = NatsServer::start().await;
    let app = TestApp::start_with_nats(&nats.url()).await;
    for name in ["from-a", "from-b", "from-c"] {
        create_database(&app, name).await;
    }
    let settings = tail_settings(&app, &nats);
    let all = log(&app).await;
    let b = all
        .iter()
        .find(|e| e.payload.to_string().contains("from-b"))
        .expect("from-b's event")
        .position;

    // From a position: that event first, then the rest, in order.
    let from = tail_jsonl(
        &settings,
        &TailOptions {
            from: Some(b as u64),
            count: Some((all.len() as i64 - b + 1) as u64),
            format: Format::Jsonl,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(positions(&from), (b..=all.len() as i64).collect::<Vec<_>>());

    // Filters: only the docs databases' creations.
    let created: Vec<_> = all
        .iter()
        .filter(|e| {
            e.stream.context == "docs"
                && e.stream.category == "database"
                && e.event_type == "DatabaseCreated"
        })
        .cloned()
        .collect();
    assert_eq!(created.len(), 3, "one creation per database");
    let filtered = tail_jsonl(
        &settings,
        &TailOptions {
            from: Some(1),
            context: Some("docs".into()),
            category: Some("database".into()),
            event_types: vec!["DatabaseCreated".into()],
            count: Some(3),
            format: Format::Jsonl,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(positions(&filtered), positions(&created));

    // A durable: the first run prints the first two events and stops; the second resumes at
    // the third, and after more writes a third run goes on from where the second stopped.
    let durable = |count: u64| TailOptions {
        durable: Some("tail-test".into()),
        from: Some(1),
        count: Some(count),
        format: Format::Jsonl,
        ..Default::default()
    };
    let first = tail_jsonl(&settings, &durable(2)).await;
    assert_eq!(positions(&first), [1, 2]);
    let second = tail_jsonl(&settings, &durable(all.len() as u64 - 2)).await;
    assert_eq!(
        positions(&second),
        (3..=all.len() as i64).collect::<Vec<_>>()
    );
    create_database(&app, "from-d").await;
    let more = log(&app).await;
    let third = tail_jsonl(&settings, &durable((more.len() - all.len()) as u64)).await;
    assert_eq!(
        positions(&third),
        (all.len() as i64 + 1..=more.len() as i64).collect::<Vec<_>>()
    );
    assert!(
        third
            .iter()
            .any(|e| e.payload.to_string().contains("from-d"))
    );
    app.stop().await;
}
