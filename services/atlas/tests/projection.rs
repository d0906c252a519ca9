//! The projector against Postgres, below the HTTP surface: what a log the deciders would never
//! write does to it. A history version copies its live row inside SQL, so a version with no
//! live row must still stop the projector, with its reason, rather than leave the history
//! without it.

use palimpsest_events::atlas::{EntityEvent, EntityRow, PublicationSource, Timestamp};
use palimpsest_events::{DomainEvent, Metadata, RecordedEvent};
use palimpsest_testkit::TestDb;

/// `event` on entity `key`'s stream, at `version` and `position`.
fn recorded(key: &str, version: i64, event: &EntityEvent) -> RecordedEvent {
    let new = event.encode().expect("encode");
    RecordedEvent {
        event_id: new.event_id,
        stream: palimpsest_atlas::streams::entity(key).expect("stream"),
        version,
        position: version,
        event_type: new.event_type,
        schema_version: new.schema_version,
        payload: new.payload,
        metadata: Metadata::default(),
        recorded_at: chrono::Utc::now(),
        prev_hash: None,
        hash: String::new(),
    }
}

fn row(id: &str, name: &str) -> EntityRow {
    let at = Timestamp::parse("2026-04-19T10:00:00Z").expect("time");
    EntityRow {
        id: id.into(),
        name: name.into(),
        slug: None,
        description: None,
        type_id: "country".into(),
        status: None,
        is_deleted: 0,
        created_at: at,
        updated_at: at,
    }
}

fn source() -> PublicationSource {
    PublicationSource {
        submission_id: "sub1".into(),
        section_id: "s1".into(),
        reviewed_by: None,
    }
}

#[tokio::test]
async fn a_version_without_its_live_row_stops_the_projector_and_a_version_with_one_is_recorded() {
    let db = TestDb::create().await;
    let pool = palimpsest_log::store::pool(db.url(), 2).expect("pool");
    let mut client = pool.get().await.expect("client");
    let projection = palimpsest_atlas::projection();
    let tx = client.transaction().await.expect("tx");
    tx.batch_execute("CREATE SCHEMA atlas")
        .await
        .expect("schema");
    projection
        .create_tables(&tx, "atlas")
        .await
        .expect("tables");

    // Several times over, so the copy runs on Postgres' generic plan as well as on its custom
    // ones (where the parameters are constants the planner could fold).
    for (version, name) in (1..=7).zip(["a", "b", "c", "d", "e", "f", "g"]) {
        let event = if version == 1 {
            EntityEvent::EntityCreated {
                entity: row("e1", name),
                source: source(),
            }
        } else {
            EntityEvent::EntityUpdated {
                entity: row("e1", name),
                source: source(),
            }
        };
        projection
            .apply(&tx, "atlas", &recorded("e1", version, &event))
            .await
            .expect("a version of a live row is recorded");
    }
    let versions: i64 = tx
        .query_one(
            "SELECT count(*) FROM atlas.entity_history WHERE entity_id = 'e1'",
            &[],
        )
        .await
        .expect("history")
        .get(0);
    assert_eq!(versions, 7);

    let orphan = EntityEvent::EntityUpdated {
        entity: row("e2", "nobody"),
        source: source(),
    };
    let refused = projection
        .apply(&tx, "atlas", &recorded("e2", 1, &orphan))
        .await
        .expect_err("a version with no live row stops the projector");
    assert!(!refused.is_transient(), "{refused}");
    let reason = format!("{refused:?}");
    assert!(
        reason.contains("entity e2 has no row to record a version of"),
        "{reason}"
    );
    drop(tx);
    drop(client);
    pool.close();
    db.drop().await;
}
