//! Projectors fed by JetStream (`--source nats`): the app serves HTTP and runs the relay (no
//! projector), its read models live in a database of their own, and a real `palimpsest
//! project` process, given `PALIMPSEST_PROJECTOR_SOURCE=nats` and
//! `PALIMPSEST_READ_DATABASE_URLS=all=URL` (the environment forms of the flags), keeps every
//! read model from the relay's stream; a second such process waits and takes over when the
//! first is killed (the time it took is printed, and recorded in
//! docs/performance/projectors.md). Each test has its own nats-server and databases.

use palimpsest::config::ALL_READ_MODELS;
use palimpsest_e2e::chaos::checks::{dump, projections, replay_equals_live};
use palimpsest_e2e::chaos::processes::{Env, Proc};
use palimpsest_e2e::postgres::connect;
use palimpsest_e2e::workload::{
    post_as_admin, read, write_and_read_back_in_every_context, write_through_every_context,
};
use palimpsest_log::relay::STREAM_NAME;
use palimpsest_projections::NatsFeed;
use palimpsest_testkit::{NatsServer, TestApp, free_port};
use std::time::{Duration, Instant};
use tokio_postgres::Client;

/// The longest any wait here lasts before the test fails: generous, never a timing assertion.
const PATIENCE: Duration = Duration::from_secs(60);

/// The app (HTTP and relay, read models apart, no projector) and its NATS server.
async fn app_and_nats() -> (TestApp, NatsServer) {
    let nats = NatsServer::start().await;
    let app = TestApp::builder()
        .nats(&nats.url())
        .read_models_apart()
        .without_projectors()
        .start()
        .await;
    (app, nats)
}

/// A `palimpsest project` process on `app`'s log and read database, fed by the stream on
/// `nats_url`.
async fn nats_fed_project(app: &TestApp, nats_url: &str) -> Proc {
    let read_url = app.read_database_url().expect("read database");
    let env = Env {
        database_url: app.database_url(),
        nats_url: nats_url.to_owned(),
        replicas: 1,
        data_dir: app.data_dir(),
        extra: vec![
            ("PALIMPSEST_PROJECTOR_SOURCE".into(), "nats".into()),
            (
                "PALIMPSEST_READ_DATABASE_URLS".into(),
                format!("{ALL_READ_MODELS}={read_url}"),
            ),
        ],
    };
    Proc::start("project", free_port(), &env).await
}

/// Every read model's checkpoint in `reads`.
async fn checkpoints(reads: &Client) -> Vec<(String, i64)> {
    let mut all = Vec::new();
    for name in projections(reads).await {
        let row = reads
            .query_one(
                &format!("SELECT position FROM {name}.projection_checkpoint"),
                &[],
            )
            .await
            .expect("checkpoint");
        all.push((name, row.get(0)));
    }
    all
}

/// Waits until every read model in `reads` stands at `head`.
async fn caught_up(reads: &Client, head: i64) {
    let started = Instant::now();
    loop {
        let at = checkpoints(reads).await;
        if !at.is_empty() && at.iter().all(|(_, position)| *position == head) {
            return;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "read models never reached {head}: {at:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The JetStream stream of the relay.
async fn stream(nats: &NatsServer) -> async_nats::jetstream::stream::Stream {
    let client = async_nats::connect(nats.url()).await.expect("nats");
    async_nats::jetstream::new(client)
        .get_stream(STREAM_NAME)
        .await
        .expect("the relay's stream")
}

/// A counter of the `/metrics` of the process on `port`, for `projection`.
async fn counter(port: u16, metric: &str, projection: &str) -> f64 {
    let text = reqwest::get(format!("http://127.0.0.1:{port}/metrics"))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics text");
    let prefix = format!("{metric}{{projection=\"{projection}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map_or(0.0, |value| value.trim().parse().expect("a number"))
}

#[tokio::test]
async fn a_nats_fed_projector_builds_every_read_model_equal_to_a_log_fed_rebuild() {
    let (app, nats) = app_and_nats().await;
    let mut project = nats_fed_project(&app, &nats.url()).await;
    write_through_every_context(&app).await;
    let head = app.state.store.head_position().await.expect("head");
    let read_url = app.read_database_url().expect("read database");
    let reads = connect(&read_url).await;
    caught_up(&reads, head).await;

    let names = projections(&reads).await;
    assert_eq!(names.len(), 6, "every read model: {names:?}");
    for name in &names {
        acknowledged(&nats, name, head).await;
    }
    // The projector stops first: the read models stay as JetStream built them.
    project.stop().await;
    let settings = app.tool_settings();
    for name in &names {
        // The rebuild reads the log: the NATS-fed read model must equal it.
        replay_equals_live(&settings, &reads, name).await;
    }
    app.stop().await;
}

/// Waits until read model `name`'s durable consumer has every message up to `head`
/// acknowledged (the acks follow each commit).
async fn acknowledged(nats: &NatsServer, name: &str, head: i64) {
    let stream = stream(nats).await;
    let started = Instant::now();
    loop {
        let consumer = stream
            .consumer_info(NatsFeed::consumer_name(name))
            .await
            .unwrap_or_else(|e| panic!("{name} has a durable consumer: {e}"));
        if consumer.ack_floor.stream_sequence as i64 == head {
            return;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "{name}: acknowledged up to {}, not {head}",
            consumer.ack_floor.stream_sequence
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn writes_read_their_own_writes_over_http_with_a_nats_fed_project_process() {
    let (app, nats) = app_and_nats().await;
    let mut project = nats_fed_project(&app, &nats.url()).await;
    // The app runs no projector: every read back below was projected from JetStream by the
    // other process, and the write waited for it through the read database's notifications.
    write_and_read_back_in_every_context(&app).await;
    project.stop().await;
    app.stop().await;
}

#[tokio::test]
async fn redelivered_positions_at_or_below_the_checkpoint_are_ignored() {
    let (app, nats) = app_and_nats().await;
    let mut project = nats_fed_project(&app, &nats.url()).await;
    write_through_every_context(&app).await;
    let head = app.state.store.head_position().await.expect("head");
    let reads = connect(&app.read_database_url().expect("read database")).await;
    caught_up(&reads, head).await;
    let before = dump(&reads, "stream_heads").await;
    project.kill();

    // The consumer delivers every message again, from the first: what a consumer reset (or
    // acks lost with a crash) does.
    let stream = stream(&nats).await;
    let name = NatsFeed::consumer_name("stream_heads");
    let config = stream
        .consumer_info(&name)
        .await
        .expect("the consumer")
        .config
        .clone();
    stream.delete_consumer(&name).await.expect("delete");
    stream
        .create_consumer(async_nats::jetstream::consumer::pull::Config {
            durable_name: Some(name.clone()),
            filter_subject: config.filter_subject,
            deliver_policy: async_nats::jetstream::consumer::DeliverPolicy::All,
            ack_policy: async_nats::jetstream::consumer::AckPolicy::Explicit,
            ..Default::default()
        })
        .await
        .expect("a consumer from the first message");

    project.restart().await;
    let started = Instant::now();
    loop {
        let ignored = counter(
            project.port,
            "palimpsest_projection_redelivered_total",
            "stream_heads",
        )
        .await;
        if ignored as i64 >= head {
            break;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "{ignored} of {head} redelivered messages ignored"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    acknowledged(&nats, "stream_heads", head).await;
    assert_eq!(
        dump(&reads, "stream_heads").await,
        before,
        "nothing applied twice"
    );
    let at: i64 = reads
        .query_one(
            "SELECT position FROM stream_heads.projection_checkpoint",
            &[],
        )
        .await
        .expect("checkpoint")
        .get(0);
    assert_eq!(at, head, "the checkpoint did not move");

    // It goes on with new events afterwards.
    let admin = app.admin_token();
    let created = post_as_admin(
        &app,
        "/atlas/sections",
        serde_json::json!({"title": "after the redelivery"}),
    )
    .await;
    let id = created["id"].as_str().expect("section id");
    let got = read(&app, &format!("/atlas/sections/{id}"), Some(&admin)).await;
    assert_eq!(got["title"], "after the redelivery", "read back: {got}");
    project.stop().await;
    app.stop().await;
}

#[tokio::test]
async fn a_stream_of_another_log_stops_the_projector_loudly() {
    let nats = NatsServer::start().await;
    // Another log publishes into the stream.
    let other = TestApp::builder().nats(&nats.url()).start().await;
    write_through_every_context(&other).await;
    let other_head = other.state.store.head_position().await.expect("head");
    let started = Instant::now();
    while stream(&nats)
        .await
        .info()
        .await
        .expect("info")
        .state
        .last_sequence
        < other_head as u64
    {
        assert!(started.elapsed() < PATIENCE, "the relay never published");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // This log's projector is pointed at that stream.
    let app = TestApp::builder()
        .read_models_apart()
        .without_projectors()
        .start()
        .await;
    let mut project = nats_fed_project(&app, &nats.url()).await;
    let readyz = format!("http://127.0.0.1:{}/readyz", project.port);
    let started = Instant::now();
    let stalled = loop {
        let answer = reqwest::get(&readyz).await.expect("readyz");
        let status = answer.status();
        let body: serde_json::Value = answer.json().await.expect("json");
        let stalled = body["stalled_projections"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if status == reqwest::StatusCode::SERVICE_UNAVAILABLE && stalled.len() == 6 {
            break stalled;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "readiness never named every read model stopped: {status} {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let other_log = other.state.store.log_id().to_string();
    for stall in &stalled {
        assert_eq!(
            stall["position"], 1,
            "stopped on the first message: {stall}"
        );
        let error = stall["error"].as_str().unwrap_or_default();
        assert!(
            error.contains(&other_log),
            "the stall names the other log: {stall}"
        );
    }
    let reads = connect(&app.read_database_url().expect("read database")).await;
    for (name, position) in checkpoints(&reads).await {
        assert_eq!(position, 0, "{name} applied nothing of another log");
    }
    project.stop().await;
    app.stop().await;
    other.stop().await;
}

#[tokio::test]
async fn a_waiting_process_takes_over_the_feeds_of_a_killed_one() {
    let (app, nats) = app_and_nats().await;
    let mut first = nats_fed_project(&app, &nats.url()).await;
    write_and_read_back_in_every_context(&app).await;
    // A second process offers to follow the same read models: the first holds every feed lock,
    // so it waits.
    let mut second = nats_fed_project(&app, &nats.url()).await;
    let reads = connect(&app.read_database_url().expect("read database")).await;
    first.kill();
    let killed = Instant::now();
    let admin = app.admin_token();
    let created = post_as_admin(
        &app,
        "/atlas/sections",
        serde_json::json!({"title": "after the kill"}),
    )
    .await;
    let head = app.state.store.head_position().await.expect("head");
    caught_up(&reads, head).await;
    let took = killed.elapsed();
    eprintln!(
        "takeover: every read model at the head {} ms after kill -9 of the process following them",
        took.as_millis()
    );
    let id = created["id"].as_str().expect("section id");
    let got = read(&app, &format!("/atlas/sections/{id}"), Some(&admin)).await;
    assert_eq!(got["title"], "after the kill", "read back: {got}");
    second.stop().await;
    app.stop().await;
}
