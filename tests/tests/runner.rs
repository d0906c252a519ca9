//! The runner's concepts, beneath HTTP, against the real log: a decision that asks to be
//! decided again later (records' `REGVER`), a value handed back that is kept nowhere (a request
//! without key), a nested command run as a step (resources' id lease), and a refusal of the
//! log that stays typed (413 stays 413).

use axum::http::StatusCode;
use palimpsest_events::{DecodeError, Metadata, NewEvent, RecordedEvent, StreamName};
use palimpsest_testkit::TestApp;
use palimpsest_web::PlatformKind;
use palimpsest_web::command::{
    Answer, Attempt, Command, CommandError, CommandRequest, Decision, Reply, StreamState,
};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// How many events a stream holds: the least state a decider can read.
#[derive(Clone, Debug, Default)]
struct Count(i64);

impl StreamState for Count {
    fn initial(_: &StreamName) -> Self {
        Count(0)
    }
    fn fold(&mut self, _: &RecordedEvent) -> Result<(), DecodeError> {
        self.0 += 1;
        Ok(())
    }
}

fn stream(key: &str) -> StreamName {
    StreamName::new("runnertest", "counter", key).expect("a valid stream name")
}

fn command(request: &CommandRequest) -> Command<'_> {
    Command {
        request,
        context: "runnertest",
        projections: &[],
        metadata: Metadata {
            actor: Some("user:ann".into()),
            ..Metadata::default()
        },
    }
}

fn counted(n: i64) -> NewEvent {
    NewEvent::new("Counted", 1, json!({ "n": n }))
}

fn ok_reply(body: &serde_json::Value) -> Reply {
    Reply::json(StatusCode::OK, body)
}

#[tokio::test]
async fn a_decider_that_asks_to_retry_later_is_decided_again_and_appends_once() {
    let app = TestApp::start_without_projectors().await;
    let tries = Arc::new(AtomicU32::new(0));
    let request = CommandRequest::none();
    let answer = app
        .state
        .commands
        .run_for::<String, u32, _, _>(command(&request), |attempt: Attempt| {
            let tries = tries.clone();
            async move {
                let count: Count = attempt.load(&stream("early")).await?;
                let n = tries.fetch_add(1, Ordering::SeqCst);
                if n < 2 {
                    return Err(CommandError::retry(
                        "too early".into(),
                        Duration::from_millis(2),
                    ));
                }
                Ok(Decision::unstored(n).write(stream("early"), vec![counted(count.0)]))
            }
        })
        .await
        .expect("decided on the third try");
    assert!(matches!(
        answer,
        Answer::Decided {
            value: 2,
            reply: None
        }
    ));
    let events = app
        .state
        .store
        .read_stream(&stream("early"), 0, 10)
        .await
        .expect("read");
    assert_eq!(events.len(), 1, "one append for three tries");
    app.stop().await;
}

#[tokio::test]
async fn a_decider_that_is_never_ready_answers_its_refusal_not_a_conflict() {
    let app = TestApp::start_without_projectors().await;
    let request = CommandRequest::none();
    let refused = app
        .state
        .commands
        .run(command(&request), |_| async {
            Err::<Decision, _>(CommandError::retry("REGVER".to_owned(), Duration::ZERO))
        })
        .await
        .expect_err("never decided");
    assert!(
        matches!(refused, CommandError::Rejected(ref r) if r == "REGVER"),
        "{refused:?}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_keyed_command_keeps_its_reply_and_hands_its_value_only_to_the_first_call() {
    let app = TestApp::start_without_projectors().await;
    let request = CommandRequest::keyed("k-1".into(), b"the request".to_vec());
    let decide = |attempt: Attempt| async move {
        let count: Count = attempt.load(&stream("keyed")).await?;
        Ok::<_, CommandError<String>>(
            Decision::new(ok_reply(&json!({ "n": count.0 })))
                .write(stream("keyed"), vec![counted(count.0)])
                .with_value(count.0 + 100),
        )
    };
    let first = app
        .state
        .commands
        .run_for(command(&request), decide)
        .await
        .expect("first");
    let Answer::Decided {
        value,
        reply: Some(reply),
    } = first
    else {
        panic!("the first call decides: {first:?}");
    };
    assert_eq!(value, 100);
    let again = app
        .state
        .commands
        .run_for(command(&request), decide)
        .await
        .expect("repeat");
    let Answer::Repeated(stored) = again else {
        panic!("a repeat answers the kept reply: {again:?}");
    };
    assert_eq!(stored, reply);
    let events = app
        .state
        .store
        .read_stream(&stream("keyed"), 0, 10)
        .await
        .expect("read");
    assert_eq!(events.len(), 1);
    app.stop().await;
}

#[tokio::test]
async fn a_keyed_command_that_decides_no_reply_is_refused_before_its_append() {
    let app = TestApp::start_without_projectors().await;
    let request = CommandRequest::keyed("k-2".into(), b"the request".to_vec());
    let refused = app
        .state
        .commands
        .run_for(command(&request), |_| async {
            Ok::<_, CommandError<String>>(
                Decision::unstored(1).write(stream("unkept"), vec![counted(0)]),
            )
        })
        .await
        .expect_err("nothing to keep under the key");
    assert!(matches!(refused, CommandError::Internal(_)), "{refused:?}");
    let events = app
        .state
        .store
        .read_stream(&stream("unkept"), 0, 10)
        .await
        .expect("read");
    assert!(events.is_empty());
    app.stop().await;
}

#[tokio::test]
async fn a_step_appends_on_its_own_with_its_callers_actor_and_hands_back_its_value() {
    let app = TestApp::start_without_projectors().await;
    let request = CommandRequest::none();
    let reply = app
        .state
        .commands
        .run(command(&request), |attempt: Attempt| async move {
            let leased: i64 = attempt
                .step("runnertest", |inner: Attempt| async move {
                    let count: Count = inner.load(&stream("lease")).await?;
                    Ok::<_, CommandError<String>>(
                        Decision::unstored(count.0 + 1)
                            .write(stream("lease"), vec![counted(count.0)]),
                    )
                })
                .await?;
            Ok(Decision::new(ok_reply(&json!({ "leased": leased })))
                .write(stream("user"), vec![counted(leased)]))
        })
        .await
        .expect("ran");
    assert_eq!(
        reply.json_body::<serde_json::Value>().expect("json"),
        json!({ "leased": 1 })
    );
    let lease = app
        .state
        .store
        .read_stream(&stream("lease"), 0, 10)
        .await
        .expect("read");
    assert_eq!(lease.len(), 1);
    assert_eq!(lease[0].metadata.actor.as_deref(), Some("user:ann"));
    let user = app
        .state
        .store
        .read_stream(&stream("user"), 0, 10)
        .await
        .expect("read");
    assert!(
        user[0].position > lease[0].position,
        "the step is its own, earlier append"
    );
    app.stop().await;
}

/// What a decider read of two streams on each try: `other` (read only) and `memo` (written).
type Reads = Arc<std::sync::Mutex<Vec<(i64, i64)>>>;

/// Reads `other` and `memo`, notes their counts, and appends `memo`'s count to `memo`; on its
/// first try, `meanwhile` runs between the reads and the append.
async fn count_into_memo<F: std::future::Future<Output = ()>>(
    attempt: Attempt,
    reads: Reads,
    meanwhile: impl FnOnce() -> F,
) -> Result<Decision<()>, CommandError<String>> {
    let other: Count = attempt.load(&stream("other")).await?;
    let memo: Count = attempt.load(&stream("memo")).await?;
    let first = {
        let mut reads = reads.lock().expect("reads");
        reads.push((other.0, memo.0));
        reads.len() == 1
    };
    if first {
        meanwhile().await;
    }
    Ok(Decision::unstored(()).write(stream("memo"), vec![counted(memo.0)]))
}

/// A first try takes the states this process keeps up to date from its memory of the log: a
/// run of commands each folds the one before's event exactly once (each appends the count it
/// read, so a state folded twice or not at all shows in the stream).
#[tokio::test]
async fn kept_states_follow_this_processs_own_appends_once_each() {
    let app = TestApp::start_without_projectors().await;
    let request = CommandRequest::none();
    for _ in 0..20 {
        let reads = Reads::default();
        app.state
            .commands
            .run_for(command(&request), |attempt: Attempt| {
                count_into_memo(attempt, reads.clone(), || async {})
            })
            .await
            .expect("ran");
    }
    let events = app
        .state
        .store
        .read_stream(&stream("memo"), 0, 100)
        .await
        .expect("read");
    let counts: Vec<i64> = events
        .iter()
        .map(|e| e.payload["n"].as_i64().expect("n"))
        .collect();
    assert_eq!(counts, (0..20).collect::<Vec<i64>>());
    app.stop().await;
}

/// A stream a first try took from memory without reading the log, and does not write, is
/// checked by the append at the version read: when another process appended to it meanwhile,
/// the append fails, and the next try reads the log and decides from what is there now.
#[tokio::test]
async fn a_stream_read_from_memory_is_checked_by_the_append_and_read_again_when_it_moved() {
    let app = TestApp::start_without_projectors().await;
    let elsewhere = palimpsest_log::EventStore::connect(&app.database_url())
        .await
        .expect("another process's log");
    let request = CommandRequest::none();
    let warm = Reads::default();
    app.state
        .commands
        .run_for(command(&request), |attempt: Attempt| {
            count_into_memo(attempt, warm.clone(), || async {})
        })
        .await
        .expect("the states are kept");
    let reads = Reads::default();
    app.state
        .commands
        .run_for(command(&request), |attempt: Attempt| {
            let elsewhere = elsewhere.clone();
            count_into_memo(attempt, reads.clone(), move || async move {
                let other = palimpsest_log::AppendRequest::new().stream(
                    stream("other"),
                    palimpsest_events::ExpectedVersion::Any,
                    vec![counted(0)],
                );
                elsewhere.append(other).await.expect("appended elsewhere");
            })
        })
        .await
        .expect("decided again");
    assert_eq!(
        *reads.lock().expect("reads"),
        vec![(0, 1), (1, 1)],
        "the first try read `other` before the other process's event, the second after it"
    );
    let memo = app
        .state
        .store
        .read_stream(&stream("memo"), 0, 10)
        .await
        .expect("read");
    assert_eq!(memo.len(), 2, "one append for the two tries");
    app.stop().await;
}

#[tokio::test]
async fn an_event_too_large_for_the_log_stays_a_413() {
    let app = TestApp::start_without_projectors().await;
    let request = CommandRequest::none();
    let big = "x".repeat(2 * 1024 * 1024);
    let refused = app
        .state
        .commands
        .run(command(&request), |_| {
            let big = big.clone();
            async move {
                Ok::<_, CommandError<String>>(Decision::new(ok_reply(&json!({}))).write(
                    stream("big"),
                    vec![NewEvent::new("Big", 1, json!({ "x": big }))],
                ))
            }
        })
        .await
        .expect_err("too large");
    let failure = refused.into_refusal().expect_err("the platform's failure");
    assert_eq!(failure.kind, PlatformKind::TooLarge);
    assert_eq!(failure.status(), StatusCode::PAYLOAD_TOO_LARGE);
    app.stop().await;
}

#[tokio::test]
async fn a_write_waits_for_the_partitions_of_its_streams_only() {
    let count = 4;
    let app = TestApp::builder()
        .partitions("stream_heads", count)
        .start()
        .await;
    let partition =
        |key: &str| palimpsest_projections::partition::partition_of(&stream(key), count);
    let slow = (0..)
        .map(|i| format!("slow-{i}"))
        .find(|k| partition(k) != partition("fast"))
        .expect("a stream in another partition");
    // Every partition is taken before the slow one is held up.
    let read = app.state.store.pool().get().await.expect("client");
    let started = std::time::Instant::now();
    while palimpsest_projections::partition::lease::shares(&read, "stream_heads")
        .await
        .expect("shares")
        != [i64::from(count)]
    {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "partitions taken"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut blocker = app.state.store.pool().get().await.expect("client");
    let held_up = blocker.transaction().await.expect("tx");
    let slow_partition =
        palimpsest_projections::partition::partition_name("stream_heads", partition(&slow), count);
    // The partition's own transaction lock, as its batches take it.
    palimpsest_projections::checkpoint::lock(&held_up, &slow_partition)
        .await
        .expect("lock");
    let write = |key: String| {
        let commands = app.state.commands.clone();
        async move {
            let request = CommandRequest::none();
            let command = Command {
                projections: &["stream_heads"],
                ..command(&request)
            };
            commands
                .run_for::<String, (), _, _>(command, |_: Attempt| {
                    let key = key.clone();
                    async move { Ok(Decision::unstored(()).write(stream(&key), vec![counted(1)])) }
                })
                .await
                .expect("written")
        }
    };
    // The slow stream's write waits for its partition (held up); the fast one's does not.
    let slow_write = tokio::spawn(write(slow));
    tokio::time::sleep(Duration::from_millis(50)).await;
    write("fast".to_owned()).await;
    assert!(
        !slow_write.is_finished(),
        "the slow write waits for its partition"
    );
    let metrics = reqwest::get(app.url("/metrics"))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics");
    assert!(
        !metrics
            .contains("palimpsest_read_your_writes_timeouts_total{projection=\"stream_heads\"}"),
        "the fast write did not wait out the other partition: {metrics}"
    );
    held_up.rollback().await.expect("release");
    slow_write
        .await
        .expect("the slow write answers once its partition moves");
}
