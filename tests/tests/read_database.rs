//! Read models on a Postgres of their own (`--read-database-url all=URL`): the real app with two
//! fresh databases, writes through HTTP in every context, each read back at once through HTTP
//! (the write waited for the checkpoint in the read database), every read model rebuilt by
//! `replay` into the read database equal to the live one, and not one read-model row in the
//! log's database.

use palimpsest_e2e::chaos::checks::{projections, replay_equals_live};
use palimpsest_e2e::postgres::connect;
use palimpsest_e2e::workload::write_and_read_back_in_every_context;
use palimpsest_testkit::TestApp;

#[tokio::test]
async fn read_models_apart_answer_reads_wait_for_writes_and_rebuild_equal_to_live() {
    let app = TestApp::builder().read_models_apart().start().await;
    let read_url = app.read_database_url().expect("read database");
    write_and_read_back_in_every_context(&app).await;

    let log = connect(&app.database_url()).await;
    let in_log = projections(&log).await;
    assert!(
        in_log.is_empty(),
        "read models in the log's database: {in_log:?}"
    );
    let schemas: Vec<String> = log
        .query(
            "SELECT nspname::text FROM pg_namespace WHERE nspname IN \
             ('pads', 'atlas', 'docs', 'records', 'resources', 'stream_heads')",
            &[],
        )
        .await
        .expect("schemas")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(
        schemas.is_empty(),
        "read-model schemas in the log's database: {schemas:?}"
    );

    let reads = connect(&read_url).await;
    let names = projections(&reads).await;
    assert_eq!(
        names,
        [
            "atlas",
            "docs",
            "pads",
            "records",
            "resources",
            "stream_heads"
        ],
        "every read model lives in the read database"
    );
    let head = app.state.store.head_position().await.expect("head");
    let log_id = app.state.store.log_id();
    let settings = app.tool_settings();
    for name in &names {
        let checkpoint = format!("SELECT position, log_id FROM {name}.projection_checkpoint");
        let row = reads.query_one(&checkpoint, &[]).await.expect("checkpoint");
        assert_eq!(
            row.get::<_, uuid::Uuid>(1),
            log_id,
            "{name} is fed by this log"
        );
        assert!(row.get::<_, i64>(0) > 0, "{name} has applied events");
        replay_equals_live(&settings, &reads, name).await;
        let at: i64 = reads
            .query_one(&checkpoint, &[])
            .await
            .expect("checkpoint")
            .get(0);
        assert_eq!(at, head, "{name}: the rebuild stands at the log's head");
    }
    assert!(
        projections(&log).await.is_empty(),
        "the replays wrote nothing in the log's database"
    );
    app.stop().await;
}

/// A read database that another log fed is refused, not extended: its checkpoint names the log
/// it was built from.
#[tokio::test]
async fn a_read_database_of_another_log_is_refused() {
    let first = TestApp::builder().read_models_apart().start().await;
    let read_url = first.read_database_url().expect("read database");
    let store = palimpsest_log::EventStore::connect(&first.database_url())
        .await
        .expect("log");
    let other = palimpsest_testkit::TestDb::create().await;
    let other_store = palimpsest_log::EventStore::connect(other.url())
        .await
        .expect("another log");
    assert_ne!(store.log_id(), other_store.log_id());
    let pool = palimpsest_log::store::pool(&read_url, 2).expect("pool");
    let read = palimpsest_projections::ReadDatabase::apart(pool);
    let refused = palimpsest_projections::ensure_in(
        &other_store,
        &read,
        &palimpsest_stream_heads::StreamHeads,
    )
    .await;
    match refused {
        Err(palimpsest_projections::ProjectionError::OtherLog { fed_by, log_id, .. }) => {
            assert_eq!((fed_by, log_id), (store.log_id(), other_store.log_id()));
        }
        other => panic!("expected OtherLog, got {:?}", other.map(|_| ())),
    }
    other.drop().await;
    first.stop().await;
}
