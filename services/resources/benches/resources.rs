//! `cargo bench -p palimpsest-resources`: the cost of Deki revisions on the log.
//!
//! 1. The log's own 1-event append rate (one writer, one stream), measured in this run on this
//!    server: the floor a revision is compared with.
//! 2. Revisions per second through the real write path (the platform's command runner: load the
//!    name, resource and content streams, take ids from the process's leased block, decide, one
//!    append of 2-3 streams, wait for the read model), one writer updating one file; then
//!    through HTTP `PUT`.
//! 3. Reading revision 1 and revision 10,000 of a resource with 10,000 revisions over HTTP: both
//!    are one indexed row, so they cost the same (no replay of history on a read).
//!
//! `BENCH_SECONDS` sets each timed phase's length (default 3).

#[path = "../tests/common/mod.rs"]
mod common;

use bytes::Bytes;
use common::{ANN, Deki};
use palimpsest_events::resources::{ContentEvent, ContentRef, Parent, ResourceType, Stored};
use palimpsest_events::{DomainEvent, ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::AppendRequest;
use palimpsest_resources::content::{self, ContentConfig};
use palimpsest_resources::http::Resources;
use palimpsest_resources::http::auth::Caller;
use palimpsest_resources::operation::{Actor, Changeset, FileWrite};
use palimpsest_resources::resource::{
    self, Edit, Expect, NewResource, ResourceCommand, ResourceState, Stamp,
};
use palimpsest_resources::streams;
use palimpsest_web::command::{Command, CommandRequest, Reply};
use std::time::{Duration, Instant};

fn phase() -> Duration {
    let secs = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    Duration::from_secs_f64(secs)
}

async fn log_rate(deki: &Deki) -> f64 {
    let stream = StreamName::new("bench", "thing", "one").expect("stream");
    let (started, mut count, mut version) = (Instant::now(), 0u64, 0i64);
    while started.elapsed() < phase() {
        let expected = if version == 0 {
            ExpectedVersion::NoStream
        } else {
            ExpectedVersion::Exact(version)
        };
        let event = NewEvent::new("Happened", 1, serde_json::json!({"n": count}));
        deki.state
            .store
            .append(AppendRequest::new().stream(stream.clone(), expected, vec![event]))
            .await
            .expect("append");
        version += 1;
        count += 1;
    }
    count as f64 / started.elapsed().as_secs_f64()
}

async fn runner_rate(deki: &Deki, resources: &Resources) -> f64 {
    let caller = Caller {
        user_id: 10,
        admin: false,
        known: true,
    };
    let (started, mut count) = (Instant::now(), 0u64);
    while started.elapsed() < phase() {
        let upload =
            content::receive_bytes(&resources.content, Bytes::from(format!("revision {count}")))
                .await
                .expect("upload");
        let write = FileWrite {
            parent: Parent::Page(1),
            name: "bench.txt".into(),
            upload,
            mimetype: "text/plain".into(),
            description: None,
            expect: Expect::default(),
        };
        let write = &write;
        let answer = resources
            .execute(
                &CommandRequest::none(),
                caller,
                |mut changeset| async move {
                    changeset.put_file(write.clone(), None).await?;
                    Ok((
                        changeset,
                        Reply::new(reqwest::StatusCode::OK, "text/plain", "ok"),
                    ))
                },
            )
            .await
            .expect("revision");
        assert_eq!(answer.status(), 200);
        count += 1;
    }
    let _ = deki;
    count as f64 / started.elapsed().as_secs_f64()
}

/// The same revisions without waiting for the read model (to show what read-your-writes costs).
async fn runner_rate_no_wait(deki: &Deki, resources: &Resources) -> f64 {
    let actor = Actor {
        user_id: 10,
        admin: false,
        now: chrono::Utc::now(),
    };
    let request = CommandRequest::none();
    let (started, mut count) = (Instant::now(), 0u64);
    while started.elapsed() < phase() {
        let upload =
            content::receive_bytes(&resources.content, Bytes::from(format!("quick {count}")))
                .await
                .expect("upload");
        let write = FileWrite {
            parent: Parent::Page(3),
            name: "quick.txt".into(),
            upload,
            mimetype: "text/plain".into(),
            description: None,
            expect: Expect::default(),
        };
        let write = &write;
        let command = Command {
            request: &request,
            context: "resources",
            projections: &[],
            metadata: Default::default(),
        };
        deki.state
            .commands
            .run(command, |attempt| async move {
                let mut changeset = Changeset::new(attempt, actor, resources.ids.clone());
                changeset.put_file(write.clone(), None).await?;
                changeset.finish(Reply::new(reqwest::StatusCode::OK, "text/plain", "ok"))
            })
            .await
            .expect("revision");
        count += 1;
    }
    count as f64 / started.elapsed().as_secs_f64()
}

async fn http_rate(deki: &Deki) -> f64 {
    let (started, mut count) = (Instant::now(), 0u64);
    while started.elapsed() < phase() {
        let answer = deki
            .put(
                "/pages/2/files/http.txt",
                ANN,
                format!("revision {count}").as_bytes(),
            )
            .await;
        assert_eq!(answer.status, 200);
        count += 1;
    }
    count as f64 / started.elapsed().as_secs_f64()
}

/// A file with `revisions` revisions alternating between two contents, appended straight to
/// the log in large appends (the events the deciders would make), then projected.
async fn long_history(deki: &Deki, revisions: i64) -> i64 {
    let res_id = 1_000_000;
    let at = chrono::DateTime::from_timestamp(1_800_000_000, 0).expect("time");
    let contents: Vec<(ContentRef, NewEvent)> = (0..2)
        .map(|i| {
            let sha256 = format!("{:064x}", 900 + i);
            let event = ContentEvent::ContentStored {
                rescontent_id: 1_000_000 + i,
                res_id,
                res_rev: i + 1,
                sha256: sha256.clone(),
                size: 3,
                mimetype: "text/plain".into(),
                stored: Stored::Inline {
                    base64: ["YWJj", "YWJk"][i as usize].to_owned(),
                },
            };
            (
                ContentRef {
                    rescontent_id: 1_000_000 + i,
                    sha256,
                    size: 3,
                },
                event.encode().expect("encode"),
            )
        })
        .collect();
    for (content, event) in &contents {
        let stream = streams::content(&content.sha256).expect("stream");
        deki.state
            .store
            .append(AppendRequest::new().stream(
                stream,
                ExpectedVersion::NoStream,
                vec![event.clone()],
            ))
            .await
            .expect("content");
    }
    let stamp = |rev: i64| Stamp {
        resrev_id: 1_000_000 + rev,
        user_id: 10,
        timestamp: at,
        changeset_id: 1_000_000 + rev,
        description: None,
    };
    let mut state = ResourceState::default();
    let mut pending = Vec::new();
    let stream = streams::resource(res_id).expect("stream");
    let mut version = 0i64;
    for rev in 1..=revisions {
        let command = if rev == 1 {
            ResourceCommand::Create(
                NewResource {
                    res_id,
                    res_type: ResourceType::File,
                    parent: Parent::Page(77),
                    name: "long.txt".into(),
                    mimetype: "text/plain".into(),
                    content: contents[0].0.clone(),
                },
                stamp(rev),
            )
        } else {
            let edit = Edit {
                content: Some((
                    contents[((rev + 1) % 2) as usize].0.clone(),
                    "text/plain".into(),
                )),
                ..Edit::default()
            };
            ResourceCommand::Edit(edit, Expect::default(), stamp(rev))
        };
        let events = resource::decide(res_id, command, &state).expect("decide");
        for event in &events {
            state = resource::evolve(state, event);
            pending.push(event.encode().expect("encode"));
        }
        if pending.len() == 1000 || rev == revisions {
            let expected = if version == 0 {
                ExpectedVersion::NoStream
            } else {
                ExpectedVersion::Exact(version)
            };
            version += pending.len() as i64;
            deki.state
                .store
                .append(AppendRequest::new().stream(
                    stream.clone(),
                    expected,
                    std::mem::take(&mut pending),
                ))
                .await
                .expect("history");
        }
    }
    let last = format!("/files/{res_id}?revision={revisions}");
    for _ in 0..600 {
        if deki.get(&last, None).await.status == reqwest::StatusCode::OK {
            return res_id;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("the read model did not reach revision {revisions}");
}

async fn read_cost(deki: &Deki, res_id: i64, revisions: i64) -> (f64, f64) {
    let rounds = 300;
    let (mut first, mut last) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..20 {
        deki.get(&format!("/files/{res_id}?revision=1"), None).await;
    }
    for _ in 0..rounds {
        let started = Instant::now();
        let one = deki.get(&format!("/files/{res_id}?revision=1"), None).await;
        first += started.elapsed();
        let started = Instant::now();
        let many = deki
            .get(&format!("/files/{res_id}?revision={revisions}"), None)
            .await;
        last += started.elapsed();
        assert_eq!(
            (one.status, many.status),
            (reqwest::StatusCode::OK, reqwest::StatusCode::OK)
        );
    }
    let micros = |total: Duration| total.as_secs_f64() * 1e6 / rounds as f64;
    (micros(first), micros(last))
}

#[tokio::main]
async fn main() {
    let deki = Deki::start().await;
    let resources = Resources::with_content(
        deki.state.clone(),
        ContentConfig::new(deki.content_dir.clone(), 1024),
    );
    let floor = log_rate(&deki).await;
    let runner = runner_rate(&deki, &resources).await;
    let quick = runner_rate_no_wait(&deki, &resources).await;
    let http = http_rate(&deki).await;
    println!(
        "== resources: revisions ({:.0}s per phase; same server, same run) ==",
        phase().as_secs_f64()
    );
    println!("log, 1-event appends, 1 writer:              {floor:>8.0} /s");
    println!(
        "revisions via the command runner, 1 writer:  {runner:>8.0} /s  ({:.0}% of the log's rate)",
        100.0 * runner / floor
    );
    println!(
        "  the same without waiting for the read model: {quick:>8.0} /s  ({:.0}% of the log's rate)",
        100.0 * quick / floor
    );
    println!(
        "revisions via HTTP PUT, 1 client:            {http:>8.0} /s  ({:.0}% of the log's rate)",
        100.0 * http / floor
    );
    let revisions = 10_000;
    let started = Instant::now();
    let res_id = long_history(&deki, revisions).await;
    println!(
        "built a {revisions}-revision file in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let (first, last) = read_cost(&deki, res_id, revisions).await;
    println!("GET revision 1:      {first:>8.0} µs");
    println!(
        "GET revision {revisions}: {last:>8.0} µs  (ratio {:.2})",
        last / first
    );
    deki.stop().await;
}
