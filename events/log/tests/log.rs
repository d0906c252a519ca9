//! The log against a real Postgres: appends, conflicts, idempotency, immutability, ordering, audit.

use palimpsest_events::{ExpectedVersion, Metadata, NewEvent, StreamName};
use palimpsest_log::{AppendError, AppendOptions, AppendRequest, EventStore, StoredReply, audit};
use palimpsest_testkit::TestDb;
use serde_json::json;

fn stream(key: &str) -> StreamName {
    StreamName::new("test", "thing", key).expect("stream name")
}

fn event(n: i64) -> NewEvent {
    NewEvent::new("Happened", 1, json!({ "n": n }))
}

async fn setup() -> (TestDb, EventStore) {
    let db = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    (db, store)
}

#[tokio::test]
async fn appends_and_reads_back_with_chained_hashes() {
    let (db, store) = setup().await;
    let a = store
        .append(AppendRequest::new().stream(
            stream("a"),
            ExpectedVersion::NoStream,
            vec![event(1), event(2)],
        ))
        .await
        .expect("append");
    assert_eq!(
        a.events
            .iter()
            .map(|e| (e.version, e.position))
            .collect::<Vec<_>>(),
        vec![(1, 1), (2, 2)]
    );
    assert_eq!(a.events[0].prev_hash, None);
    assert_eq!(
        a.events[1].prev_hash.as_deref(),
        Some(a.events[0].hash.as_str())
    );
    store
        .append(AppendRequest::new().stream(stream("a"), ExpectedVersion::Exact(2), vec![event(3)]))
        .await
        .expect("append");
    let read = store.read_stream(&stream("a"), 1, 100).await.expect("read");
    assert_eq!(
        read.iter().map(|e| e.version).collect::<Vec<_>>(),
        vec![2, 3]
    );
    assert_eq!(read[0], a.events[1], "read back exactly what was recorded");
    assert_eq!(
        store.stream_version(&stream("a")).await.expect("version"),
        3
    );
    assert_eq!(store.read_all(0, 10).await.expect("all").len(), 3);
    let report = audit::verify(store.pool(), None).await.expect("audit");
    assert_eq!(report.broken, None);
    assert_eq!((report.streams, report.events), (1, 3));
    db.drop().await;
}

#[tokio::test]
async fn a_wrong_expected_version_names_the_stream_and_writes_nothing_in_any_stream() {
    let (db, store) = setup().await;
    store
        .append(AppendRequest::new().stream(stream("a"), ExpectedVersion::NoStream, vec![event(1)]))
        .await
        .expect("append");
    let err = store
        .append(
            AppendRequest::new()
                .stream(stream("b"), ExpectedVersion::NoStream, vec![event(2)])
                .stream(stream("a"), ExpectedVersion::Exact(5), vec![event(3)]),
        )
        .await
        .expect_err("conflict");
    match err {
        AppendError::WrongExpectedVersion {
            stream: s, actual, ..
        } => {
            assert_eq!(s, stream("a"));
            assert_eq!(actual, 1);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(
        store.stream_version(&stream("b")).await.expect("version"),
        0
    );
    assert_eq!(store.read_all(0, 10).await.expect("all").len(), 1);
    let no_stream = store
        .append(AppendRequest::new().stream(stream("a"), ExpectedVersion::NoStream, vec![event(4)]))
        .await;
    assert!(matches!(
        no_stream,
        Err(AppendError::WrongExpectedVersion { .. })
    ));
    db.drop().await;
}

#[tokio::test]
async fn malformed_requests_are_refused_before_the_database() {
    let (db, store) = setup().await;
    assert!(matches!(
        store.append(AppendRequest::new()).await,
        Err(AppendError::Invalid(_))
    ));
    let twice = AppendRequest::new()
        .stream(stream("a"), ExpectedVersion::Any, vec![event(1)])
        .stream(stream("a"), ExpectedVersion::Any, vec![event(2)]);
    assert!(matches!(
        store.append(twice).await,
        Err(AppendError::Invalid(_))
    ));
    let e = event(1);
    let same_id =
        AppendRequest::new().stream(stream("a"), ExpectedVersion::Any, vec![e.clone(), e]);
    assert!(matches!(
        store.append(same_id).await,
        Err(AppendError::Invalid(_))
    ));
    assert_eq!(store.head_position().await.expect("head"), 0);
    db.drop().await;
}

#[tokio::test]
async fn a_retried_command_returns_the_first_result_and_appends_nothing() {
    let (db, store) = setup().await;
    let meta = Metadata {
        idempotency_key: Some("cmd-1".into()),
        actor: Some("ann".into()),
        ..Default::default()
    };
    let req = AppendRequest::new()
        .stream(stream("a"), ExpectedVersion::NoStream, vec![event(1)])
        .metadata(meta.clone());
    let first = store.append(req.clone()).await.expect("first");
    let again = store.append(req).await.expect("retry");
    assert!(again.replayed);
    assert_eq!(again.events, first.events);
    // A retry with fresh event ids but the same key is still the same command.
    let fresh = AppendRequest::new()
        .stream(stream("a"), ExpectedVersion::NoStream, vec![event(1)])
        .metadata(meta);
    assert_eq!(
        store.append(fresh).await.expect("retry").events,
        first.events
    );
    // The same event ids without a key are recognised too.
    let by_ids = AppendRequest::new().stream(stream("b"), ExpectedVersion::Any, vec![event(7)]);
    let once = store.append(by_ids.clone()).await.expect("once");
    let twice = store.append(by_ids).await.expect("twice");
    assert!(twice.replayed);
    assert_eq!(twice.events, once.events);
    assert_eq!(store.head_position().await.expect("head"), 2);
    db.drop().await;
}

/// A call made of several commands keeps its final answer under its key with no event of its
/// own: stored once, a repeat is replayed (nothing appended), and the key's positions read back
/// no event.
#[tokio::test]
async fn an_answer_is_stored_alone_under_its_key_once() {
    let (db, store) = setup().await;
    store
        .append(AppendRequest::new().stream(stream("a"), ExpectedVersion::NoStream, vec![event(1)]))
        .await
        .expect("an event first");
    let reply = StoredReply {
        request_hash: vec![1, 2, 3],
        status: 200,
        content_type: "application/json".into(),
        body: br#"{"purged":3}"#.to_vec(),
    };
    let answer = |body: &[u8]| {
        AppendRequest::new()
            .metadata(Metadata {
                idempotency_key: Some("call-1".into()),
                ..Default::default()
            })
            .reply(StoredReply {
                body: body.to_vec(),
                ..reply.clone()
            })
    };
    let first = store.append(answer(&reply.body)).await.expect("stored");
    assert!(!first.replayed);
    assert!(first.events.is_empty());
    assert_eq!(
        store.command_reply("call-1").await.expect("read"),
        Some(Some(reply.clone()))
    );
    let again = store.append(answer(b"{}")).await.expect("repeat");
    assert!(again.replayed, "a second answer under the key is a repeat");
    assert!(again.events.is_empty());
    assert_eq!(
        store.command_reply("call-1").await.expect("read"),
        Some(Some(reply)),
        "the first answer is kept"
    );
    assert_eq!(store.head_position().await.expect("head"), 1);
    // Without a key (or a reply) an append with no stream is still malformed.
    let keyless = AppendRequest::new().reply(StoredReply {
        request_hash: vec![],
        status: 200,
        content_type: "text/plain".into(),
        body: vec![],
    });
    assert!(matches!(
        store.append(keyless).await,
        Err(AppendError::Invalid(_))
    ));
    db.drop().await;
}

#[tokio::test]
async fn events_cannot_be_updated_deleted_truncated_or_inserted_behind_the_lock() {
    let (db, store) = setup().await;
    store
        .append(AppendRequest::new().stream(stream("a"), ExpectedVersion::Any, vec![event(1)]))
        .await
        .expect("append");
    let client = store.pool().get().await.expect("client");
    for sql in [
        "UPDATE log.events SET event_type = 'Other'",
        "DELETE FROM log.events",
        "TRUNCATE log.events",
        "INSERT INTO log.events SELECT position + 1, gen_random_uuid(), context, category, \
         stream_key, version + 1, event_type, schema_version, payload, actor, correlation_id, \
         causation_id, idempotency_key, recorded_at, hash, hash FROM log.events",
    ] {
        let err = client.batch_execute(sql).await.expect_err(sql);
        assert!(err.to_string().contains("db error"), "{sql}: {err}");
    }
    assert_eq!(store.read_all(0, 10).await.expect("all").len(), 1);
    db.drop().await;
}

#[tokio::test]
async fn a_reader_never_passes_over_a_lower_position_that_commits_last() {
    let (db, store) = setup().await;
    // Writer 1 takes the append lock and writes position 1, and does not commit yet.
    let mut slow = store.pool().get().await.expect("client");
    let tx = slow.transaction().await.expect("tx");
    tx.execute(
        "SELECT pg_advisory_xact_lock($1)",
        &[&palimpsest_log::APPEND_LOCK_KEY],
    )
    .await
    .expect("lock");
    tx.batch_execute(
        "INSERT INTO log.events (position, event_id, context, category, stream_key, version, \
         event_type, schema_version, payload, recorded_at, hash) VALUES (1, gen_random_uuid(), \
         'test', 'thing', 'slow', 1, 'Happened', 1, '{}', now(), '\\x00'); \
         UPDATE log.head SET position = 1",
    )
    .await
    .expect("insert");
    // Writer 2 appends meanwhile: it must get the higher position, and cannot commit first.
    let fast_store = store.clone();
    let fast = tokio::spawn(async move {
        fast_store
            .append(AppendRequest::new().stream(
                stream("fast"),
                ExpectedVersion::Any,
                vec![event(2)],
            ))
            .await
    });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(!fast.is_finished(), "the second writer waits for the first");
    assert!(store.read_all(0, 10).await.expect("read").is_empty());
    tx.commit().await.expect("commit");
    let appended = fast.await.expect("join").expect("append");
    assert_eq!(appended.events[0].position, 2);
    let seen: Vec<i64> = store
        .read_all(0, 10)
        .await
        .expect("read")
        .iter()
        .map(|e| e.position)
        .collect();
    assert_eq!(seen, vec![1, 2]);
    db.drop().await;
}

#[tokio::test]
async fn concurrent_commands_share_commits_yet_each_gets_its_own_outcome() {
    let (db, store) = setup().await;
    let mut tasks = Vec::new();
    for i in 0..64 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            // Every even writer races on one stream with NoStream: exactly one may win.
            let (s, expected) = if i % 2 == 0 {
                (stream("contested"), ExpectedVersion::NoStream)
            } else {
                (stream(&format!("own-{i}")), ExpectedVersion::NoStream)
            };
            store
                .append(AppendRequest::new().stream(s, expected, vec![event(i)]))
                .await
        }));
    }
    let mut ok = 0;
    let mut conflicts = 0;
    for t in tasks {
        match t.await.expect("join") {
            Ok(_) => ok += 1,
            Err(AppendError::WrongExpectedVersion { .. }) => conflicts += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!((ok, conflicts), (33, 31));
    let positions: Vec<i64> = store
        .read_all(0, 100)
        .await
        .expect("read")
        .iter()
        .map(|e| e.position)
        .collect();
    assert_eq!(positions, (1..=33).collect::<Vec<_>>());
    db.drop().await;
}

#[tokio::test]
async fn audit_finds_an_edited_a_removed_and_a_reordered_event() {
    for (tamper, broken_at) in [
        (
            "UPDATE log.events SET payload = '{\"n\": 99}' WHERE version = 2",
            2,
        ),
        ("DELETE FROM log.events WHERE version = 2", 3),
        (
            "UPDATE log.events SET position = -position WHERE version IN (2, 3); \
             UPDATE log.events SET position = CASE version WHEN 2 THEN 3 ELSE 2 END WHERE position < 0",
            3,
        ),
    ] {
        let (db, store) = setup().await;
        store
            .append(AppendRequest::new().stream(
                stream("a"),
                ExpectedVersion::Any,
                vec![event(1), event(2), event(3)],
            ))
            .await
            .expect("append");
        let client = store.pool().get().await.expect("client");
        client
            .batch_execute(&format!(
                "ALTER TABLE log.events DISABLE TRIGGER USER; {tamper}; \
                 ALTER TABLE log.events ENABLE TRIGGER USER"
            ))
            .await
            .expect("tamper");
        let report = audit::verify(store.pool(), Some(&stream("a")))
            .await
            .expect("audit");
        let broken = report
            .broken
            .unwrap_or_else(|| panic!("not detected: {tamper}"));
        assert_eq!(broken.version, broken_at, "{tamper}: {}", broken.reason);
        db.drop().await;
    }
}

#[tokio::test]
async fn a_stream_without_events_is_a_version_check_and_positions_follow_request_order() {
    let (db, store) = setup().await;
    store
        .append(AppendRequest::new().stream(
            stream("read"),
            ExpectedVersion::NoStream,
            vec![event(1)],
        ))
        .await
        .expect("append");
    // The command read `read` at version 1 and writes `b` then `a`.
    let ok = store
        .append(
            AppendRequest::new()
                .stream(stream("read"), ExpectedVersion::Exact(1), vec![])
                .stream(stream("b"), ExpectedVersion::NoStream, vec![event(2)])
                .stream(
                    stream("a"),
                    ExpectedVersion::NoStream,
                    vec![event(3), event(4)],
                ),
        )
        .await
        .expect("append");
    let order: Vec<(String, i64)> = ok
        .events
        .iter()
        .map(|e| (e.stream.key.clone(), e.position))
        .collect();
    assert_eq!(
        order,
        vec![("b".into(), 2), ("a".into(), 3), ("a".into(), 4)]
    );
    assert_eq!(
        store
            .stream_version(&stream("read"))
            .await
            .expect("version"),
        1
    );
    // Had `read` moved, nothing would be written.
    let moved = store
        .append(
            AppendRequest::new()
                .stream(stream("read"), ExpectedVersion::Exact(0), vec![])
                .stream(stream("c"), ExpectedVersion::NoStream, vec![event(5)]),
        )
        .await;
    assert!(matches!(
        moved,
        Err(AppendError::WrongExpectedVersion { .. })
    ));
    assert_eq!(store.head_position().await.expect("head"), 4);
    db.drop().await;
}

#[tokio::test]
async fn two_appenders_on_one_log_keep_versions_positions_and_chains() {
    // Each store remembers the heads it wrote; the other's appends must make it re-read them.
    // The second writes its batches with the nine statements the one call replaced (the bench's
    // comparison), so each way's guard also meets the other's writes.
    let (db, first) = setup().await;
    let pool = palimpsest_log::store::pool(db.url(), 4).expect("pool");
    let statements = AppendOptions {
        one_call: false,
        ..AppendOptions::default()
    };
    let second = EventStore::with_options(db.url(), pool, statements)
        .await
        .expect("second store");
    for round in 0..5i64 {
        for (i, store) in [&first, &second].into_iter().enumerate() {
            let version = round * 2 + i as i64;
            let expected = if version == 0 {
                ExpectedVersion::NoStream
            } else {
                ExpectedVersion::Exact(version)
            };
            store
                .append(AppendRequest::new().stream(
                    stream("shared"),
                    expected,
                    vec![event(version)],
                ))
                .await
                .expect("append at the version the other store left");
        }
    }
    // A stream this store never saw, created by the other one: not taken for a new stream.
    let err = first
        .append(AppendRequest::new().stream(
            stream("shared"),
            ExpectedVersion::NoStream,
            vec![event(99)],
        ))
        .await
        .expect_err("the stream exists");
    assert!(
        matches!(err, AppendError::WrongExpectedVersion { actual: 10, .. }),
        "{err}"
    );
    second
        .append(AppendRequest::new().stream(stream("other"), ExpectedVersion::Any, vec![event(1)]))
        .await
        .expect("other");
    let appended = first
        .append(AppendRequest::new().stream(stream("other"), ExpectedVersion::Any, vec![event(2)]))
        .await
        .expect("any version on a stream created elsewhere");
    assert_eq!(appended.events[0].version, 2);
    let positions: Vec<i64> = first
        .read_all(0, 100)
        .await
        .expect("read")
        .iter()
        .map(|e| e.position)
        .collect();
    assert_eq!(positions, (1..=12).collect::<Vec<_>>());
    let report = palimpsest_log::audit::verify(first.pool(), None)
        .await
        .expect("audit");
    assert_eq!(report.broken, None);
    db.drop().await;
}

/// The call that writes a batch (`log.append_batch`) sets the commit mode of the transaction it
/// ends: it must outlast the call itself, or a batch answered at its own commit would not be on
/// disk on a server whose default is asynchronous, and a deferred one would wait for an fsync
/// under the lock.
#[tokio::test]
async fn the_append_call_sets_how_its_transaction_commits() {
    let (db, store) = setup().await;
    let client = store.pool().get().await.expect("client");
    let empty = vec!["'{}'"; 28].join(", ");
    let call = format!("SELECT log.append_batch(0, NULL, $1, {empty}, NULL)");
    for (flushed, mode) in [(true, "on"), (false, "off"), (true, "on")] {
        client
            .batch_execute("BEGIN; SET LOCAL synchronous_commit = local")
            .await
            .expect("begin");
        client.execute(&call, &[&flushed]).await.expect("call");
        let shown: String = client
            .query_one("SHOW synchronous_commit", &[])
            .await
            .expect("show")
            .get(0);
        assert_eq!(shown, mode, "flushed = {flushed}");
        client.batch_execute("ROLLBACK").await.expect("rollback");
    }
    db.drop().await;
}

/// The call refuses a batch planned on a log that has moved since (another process appended):
/// nothing of it is written, and the error is the guard's, which makes the appender read the
/// heads again rather than retry carefully.
#[tokio::test]
async fn the_append_call_writes_nothing_when_the_log_moved() {
    let (db, store) = setup().await;
    store
        .append(AppendRequest::new().stream(stream("a"), ExpectedVersion::Any, vec![event(1)]))
        .await
        .expect("append");
    let client = store.pool().get().await.expect("client");
    // No event, one idempotency row: what an answer stored alone under its key sends.
    let no_events = vec!["'{}'"; 21].join(", ");
    let key = "ARRAY['k'], ARRAY[2]::bigint[], ARRAY[1]::bigint[], ARRAY[NULL]::bytea[], \
               ARRAY[NULL]::int2[], ARRAY[NULL]::text[], ARRAY[NULL]::bytea[]";
    let call = format!("SELECT log.append_batch($1, NULL, true, {no_events}, {key}, NULL)");
    let err = client
        .execute(&call, &[&0i64])
        .await
        .expect_err("the log is at 1, not 0");
    assert_eq!(
        err.code(),
        Some(&tokio_postgres::error::SqlState::T_R_SERIALIZATION_FAILURE)
    );
    let keys = "SELECT count(*) FROM log.idempotency";
    let stored: i64 = client.query_one(keys, &[]).await.expect("keys").get(0);
    assert_eq!(stored, 0);
    // The same call planned where the log ends is written.
    client.execute(&call, &[&1i64]).await.expect("at the head");
    let stored: i64 = client.query_one(keys, &[]).await.expect("keys").get(0);
    assert_eq!(stored, 1);
    assert_eq!(store.head_position().await.expect("head"), 1);
    db.drop().await;
}

#[tokio::test]
async fn a_retried_command_whose_stream_moved_on_is_a_repeat_not_a_conflict() {
    let (db, store) = setup().await;
    let retried =
        AppendRequest::new().stream(stream("a"), ExpectedVersion::NoStream, vec![event(1)]);
    let first = store.append(retried.clone()).await.expect("first");
    store
        .append(AppendRequest::new().stream(stream("a"), ExpectedVersion::Exact(1), vec![event(2)]))
        .await
        .expect("second");
    let again = store
        .append(retried)
        .await
        .expect("the retry is recognised by its event ids");
    assert!(again.replayed);
    assert_eq!(again.events, first.events);
    assert_eq!(store.head_position().await.expect("head"), 2);
    db.drop().await;
}

#[tokio::test]
async fn repeats_and_a_second_appender_amid_pipelined_batches_keep_every_outcome_and_chain() {
    let (db, store) = setup().await;
    let other = EventStore::connect(db.url()).await.expect("second store");
    let keyed = |i: i64| {
        AppendRequest::new()
            .stream(
                stream(&format!("keyed-{i}")),
                ExpectedVersion::NoStream,
                vec![event(i)],
            )
            .metadata(Metadata {
                idempotency_key: Some(format!("key-{i}")),
                ..Default::default()
            })
    };
    let mut firsts = Vec::new();
    for i in 0..10 {
        firsts.push(store.append(keyed(i)).await.expect("keyed"));
    }
    let mut tasks = Vec::new();
    for i in 0..300i64 {
        let store = if i % 5 == 0 {
            other.clone()
        } else {
            store.clone()
        };
        tasks.push(tokio::spawn(async move {
            let req = if i % 7 == 0 {
                keyed(i % 10)
            } else {
                AppendRequest::new().stream(
                    stream(&format!("busy-{}", i % 8)),
                    ExpectedVersion::Any,
                    vec![event(i), event(i + 1000)],
                )
            };
            (i, store.append(req).await.expect("append"))
        }));
    }
    let mut written = 10;
    for t in tasks {
        let (i, appended) = t.await.expect("join");
        if i % 7 == 0 {
            assert!(appended.replayed, "command {i} repeats key-{}", i % 10);
            assert_eq!(appended.events, firsts[(i % 10) as usize].events);
        } else {
            assert!(!appended.replayed);
            written += 2;
        }
    }
    let positions: Vec<i64> = store
        .read_all(0, 10_000)
        .await
        .expect("read")
        .iter()
        .map(|e| e.position)
        .collect();
    assert_eq!(positions, (1..=written).collect::<Vec<_>>());
    let report = audit::verify(store.pool(), None).await.expect("audit");
    assert_eq!(report.broken, None);
    db.drop().await;
}

/// What this process knows is on disk covers every answered append, alone (its own commit
/// flushed it) or among many (their batches deferred the flush to a durability commit), and a
/// flush asked for covers what another process appended.
#[tokio::test]
async fn every_answered_append_is_known_to_be_on_disk() {
    let (db, store) = setup().await;
    assert_eq!(
        store.durable().current(),
        0,
        "nothing is known before a flush"
    );
    let alone = store
        .append(AppendRequest::new().stream(
            stream("alone"),
            ExpectedVersion::NoStream,
            vec![event(1)],
        ))
        .await
        .expect("append");
    assert!(store.durable().current() >= alone.last_position);
    // Each writer looks the moment it is answered: a later batch's flush must not be what
    // covers an earlier one. This store never flushes a batch with its own commit, so every
    // batch waits for a durability commit.
    let pool = palimpsest_log::store::pool(db.url(), 16).expect("pool");
    let options = AppendOptions {
        flush_when_alone: false,
        ..AppendOptions::default()
    };
    let deferring = EventStore::with_options(db.url(), pool, options)
        .await
        .expect("connect");
    let tasks: Vec<_> = (0..64)
        .map(|i| {
            let store = deferring.clone();
            tokio::spawn(async move {
                let position = store
                    .append(AppendRequest::new().stream(
                        stream(&format!("many-{i}")),
                        ExpectedVersion::NoStream,
                        vec![event(i)],
                    ))
                    .await
                    .expect("append")
                    .last_position;
                (position, store.durable().current())
            })
        })
        .collect();
    for task in tasks {
        let (position, on_disk) = task.await.expect("join");
        assert!(
            on_disk >= position,
            "answered at {position}, known on disk up to {on_disk}"
        );
    }
    let elsewhere = EventStore::connect(db.url()).await.expect("connect");
    let theirs = elsewhere
        .append(AppendRequest::new().stream(
            stream("theirs"),
            ExpectedVersion::NoStream,
            vec![event(2)],
        ))
        .await
        .expect("append");
    let mut head = store.head().subscribe();
    while *head.borrow_and_update() < theirs.last_position {
        head.changed().await.expect("head");
    }
    store.wait_durable().await.expect("flush");
    assert!(store.durable().current() >= theirs.last_position);
    db.drop().await;
}

#[tokio::test]
async fn the_pool_hands_out_the_connection_returned_last() {
    let db = TestDb::create().await;
    let pool = palimpsest_log::store::pool(db.url(), 4).expect("pool");
    let first = pool.get().await.expect("first");
    let second = pool.get().await.expect("second");
    let (older, newer) = (backend(&first).await, backend(&second).await);
    assert_ne!(older, newer);
    drop(first);
    drop(second);
    // The backend used last is warm; the one idle longest is not.
    let again = pool.get().await.expect("again");
    assert_eq!(backend(&again).await, newer);
    drop(again);
    drop(pool);
    db.drop().await;
}

/// The server process behind a pooled connection.
async fn backend(client: &deadpool_postgres::Client) -> i32 {
    let row = client
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .expect("pid");
    row.get(0)
}
