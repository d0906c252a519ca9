//! The plan of a batch: its statements, in the order applying the events one by one would run
//! them (a dropped or reordered statement fails here before any database sees it).

use super::AtlasProjection;
use crate::recorded::recorded;
use palimpsest_events::StreamName;
use palimpsest_events::atlas::{CommitRecorded, SectionEvent, Timestamp};
use palimpsest_events::canonical::to_canonical_string;
use palimpsest_projections::Planner;
use palimpsest_projections::statement::Statement;
use serde_json::json;

/// What a planned statement is, for comparing plans: its first four words (verb, table, first
/// column) and its values as `Debug` prints them.
fn shape(statement: &Statement) -> (String, Vec<String>) {
    let Statement::Dml { sql, params } = statement else {
        panic!("atlas plans DML statements only");
    };
    let words: Vec<&str> = sql.split_whitespace().take(4).collect();
    (
        words.join(" "),
        params.iter().map(|p| format!("{p:?}")).collect(),
    )
}

#[test]
fn a_section_created_and_committed_plans_its_rows_in_event_order() {
    let at = Timestamp::parse("2026-04-19T10:00:00Z").expect("time");
    let snapshot = json!({"schema_version": 1, "entities": [{"operation": "create", "id": "e", "name": "Lý"}]});
    let section = crate::streams::section("s1").expect("stream");
    let elsewhere = StreamName::new("pads", "pad", "p1").expect("stream");
    let created = SectionEvent::SectionCreated {
        section_id: "s1".into(),
        title: "Đại Việt".into(),
        description: None,
        user_id: Some("ann".into()),
        created_by: Some("ann".into()),
        created_at: at,
    };
    let committed = SectionEvent::SectionCommitted(CommitRecorded {
        commit_id: "c1".into(),
        commit_no: 1,
        parent_commit_id: None,
        restored_from_commit_id: None,
        created_by: "ann".into(),
        created_at: at,
        title: None,
        note: None,
        snapshot_hash: crate::hashing::snapshot_hash(&snapshot),
        snapshot: snapshot.clone(),
    });
    let events = [
        recorded(&section, 1, 1, &created),
        recorded(&elsewhere, 1, 2, &created),
        recorded(&section, 2, 3, &committed),
    ];

    let mut planned = Vec::new();
    AtlasProjection
        .plan("atlas_next", &events, &mut planned)
        .expect("planned");

    let iso = format!("{:?}", at.to_iso());
    let text = |s: &str| format!("{s:?}");
    let some = |s: &str| format!("Some({s:?})");
    let shapes: Vec<(String, Vec<String>)> = planned.iter().map(shape).collect();
    assert_eq!(
        shapes,
        [
            (
                "INSERT INTO atlas_next.sections (id,".to_owned(),
                vec![
                    text("s1"),
                    text("Đại Việt"),
                    "None".to_owned(),
                    some("ann"),
                    some("ann"),
                    iso.clone(),
                ],
            ),
            (
                "INSERT INTO atlas_next.section_states (section_id,".to_owned(),
                vec![text("s1"), iso.clone()],
            ),
            (
                "INSERT INTO atlas_next.section_commits (id,".to_owned(),
                vec![
                    text("c1"),
                    text("s1"),
                    "None".to_owned(),
                    "1".to_owned(),
                    text("manual"),
                    "None".to_owned(),
                    text("ann"),
                    iso.clone(),
                    "None".to_owned(),
                    "None".to_owned(),
                    text(&to_canonical_string(&snapshot)),
                    text(&crate::hashing::snapshot_hash(&snapshot)),
                ],
            ),
            (
                "UPDATE atlas_next.section_states SET head_commit_id".to_owned(),
                vec![text("s1"), text("c1"), iso.clone()],
            ),
            (
                "UPDATE atlas_next.sections SET updated_at".to_owned(),
                vec![text("s1"), iso],
            ),
        ]
    );
}
