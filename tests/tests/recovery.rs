//! How fast the pipeline recovers (issue 8, defects 8 and 9), measured and bounded: writes (an
//! append and its read model) work again soon after Postgres accepts connections after an
//! immediate stop, and the relay publishes again soon after a new JetStream stream leader.

use palimpsest::config::Settings;
use palimpsest::contexts;
use palimpsest::processes::{self, Roles};
use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::relay::{self, RelayConfig, STREAM_NAME};
use palimpsest_log::{AppendRequest, EventStore};
use palimpsest_testkit::{NatsCluster, PgCluster};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn writes_and_projectors_recover_soon_after_postgres_accepts_connections_again() {
    let mut pg = PgCluster::start().await;
    let settings = Settings::for_database(
        pg.url("palimpsest"),
        std::env::temp_dir().join(format!("palimpsest-app-{}", uuid::Uuid::new_v4())),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let running = processes::start(
        &settings,
        contexts::all(),
        Roles {
            http: Some(listener),
            api: true,
            relay: false,
            project: true,
            tree: true,
        },
    )
    .await
    .expect("start");
    let url = format!(
        "http://{}/atlas/sections",
        running.addr.expect("http address")
    );
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client");
    let admin = std::env::var("PALIMPSEST_ADMIN_TOKEN")
        .ok()
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| {
            std::fs::read_to_string(settings.data_dir.join("admin-token"))
                .expect("the admin token the server generated")
        })
        .trim()
        .to_owned();
    let write = async |title: &str| {
        http.post(&url)
            .bearer_auth(&admin)
            .json(&json!({ "title": title }))
            .send()
            .await
            .map(|r| r.status().as_u16())
    };
    assert_eq!(write("before").await.expect("post"), 201);

    let mut figures = Vec::new();
    for round in 0..3 {
        pg.stop_immediate();
        // Writes fail while it is down (and the projectors keep trying).
        assert_ne!(write("while down").await.ok(), Some(201));
        tokio::time::sleep(Duration::from_millis(500)).await;
        pg.restart().await;
        let back = Instant::now();
        // The first write acknowledged after Postgres is back: appended and applied by the
        // atlas projector (read your writes).
        loop {
            if write(&format!("after {round}")).await.ok() == Some(201) {
                break;
            }
            assert!(
                back.elapsed() < Duration::from_secs(10),
                "writes never recovered"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        figures.push(back.elapsed());
    }
    println!("write recovery after Postgres restarts: {figures:?}");
    running.stop().await;
    if let Err(e) = std::fs::remove_dir_all(&settings.data_dir) {
        eprintln!("remove {}: {e}", settings.data_dir.display());
    }
    for recovered in figures {
        assert!(
            recovered < Duration::from_millis(1500),
            "a write took {recovered:?} after Postgres accepted connections"
        );
    }
}

async fn stream_state(urls: &str) -> Option<(u64, Option<String>)> {
    let client = async_nats::ConnectOptions::new()
        .connection_timeout(Duration::from_millis(500))
        .request_timeout(Some(Duration::from_millis(500)))
        .connect(relay::server_list(urls))
        .await
        .ok()?;
    let js = async_nats::jetstream::new(client);
    let mut stream = js.get_stream(STREAM_NAME).await.ok()?;
    let info = stream.info().await.ok()?;
    Some((
        info.state.last_sequence,
        info.cluster.as_ref().and_then(|c| c.leader.clone()),
    ))
}

#[tokio::test]
async fn the_relay_publishes_again_soon_after_a_new_stream_leader() {
    let mut cluster = NatsCluster::start(3).await;
    let db = palimpsest_testkit::TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    let stop = CancellationToken::new();
    let mut config = RelayConfig::new(cluster.urls());
    config.replicas = 3;
    let relay_task = tokio::spawn(relay::run(store.clone(), config, stop.clone()));
    // A steady trickle of appends: one every 20 ms.
    let appender = {
        let store = store.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let stream = StreamName::new("test", "trickle", "t").expect("stream");
            while !stop.is_cancelled() {
                let request = AppendRequest::new().stream(
                    stream.clone(),
                    ExpectedVersion::Any,
                    vec![NewEvent::new("Ticked", 1, json!({}))],
                );
                if let Err(e) = store.append(request).await {
                    panic!("append: {e}");
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let old_leader = loop {
        if let Some((seq, Some(leader))) = stream_state(&cluster.urls()).await
            && seq > 20
        {
            break leader;
        }
        assert!(Instant::now() < deadline, "the relay never published");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let victim = cluster.index_of(&old_leader).expect("leader node");
    let killed = Instant::now();
    cluster.stop(victim);
    let survivors = cluster.running_urls();
    // When a survivor leads the stream, and the sequence it reports then.
    let (elected, seq_at_election) = loop {
        if let Some((seq, Some(leader))) = stream_state(&survivors).await
            && leader != old_leader
        {
            break (Instant::now(), seq);
        }
        assert!(killed.elapsed() < Duration::from_secs(60), "no new leader");
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    let published = loop {
        if let Some((seq, _)) = stream_state(&survivors).await
            && seq > seq_at_election
        {
            break Instant::now();
        }
        assert!(
            elected.elapsed() < Duration::from_secs(30),
            "the relay did not publish again"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    let election = elected - killed;
    let recovery = published - elected;
    println!(
        "leader killed → new leader {election:?}; new leader → relay publishing again {recovery:?}"
    );
    stop.cancel();
    appender.await.expect("appender");
    relay_task.await.expect("relay");
    db.drop().await;
    assert!(
        recovery < Duration::from_secs(2),
        "the relay took {recovery:?} after the new leader"
    );
}
