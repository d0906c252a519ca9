//! A section commit's own work in the process, without I/O, on a short and on a long section.
//!
//! `cargo bench -p palimpsest-atlas --bench commit`
//!
//! What `POST /sections/:id/commits` does besides the append and the read-your-writes wait,
//! step by step, as `section::command::execute` runs it: the copies of the section's state the
//! command runner makes (it keeps the state between commands and hands each a copy: three
//! copies and one drop per load, counted here as three clones), the decider (validation, the
//! snapshot's hash, the events), the fold of the new events, the answer's rows and JSON, the
//! events' encoding. Each step is timed on a section of 1 and of 1,000 commits: a step whose
//! cost grows with the section's history shows in the second column (issue #30 found the
//! state copies there: 2.9 ms of a commit's 4 ms on a section of 180 commits).

use palimpsest_atlas::command::encode;
use palimpsest_atlas::read::rows::{CommitRow, SectionRow};
use palimpsest_atlas::section::{Expectations, SectionCommand, SectionState, decide, evolve, fold};
use palimpsest_events::atlas::{CommitRecorded, SectionEvent, Timestamp};
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::{Duration, Instant};

const ROUNDS: usize = 2_000;

/// The latency bench's snapshot (`tests/benches/latency.rs`).
fn snapshot(i: usize) -> Value {
    json!({
        "schema_version": 1,
        "editor_feature_collection": {"type": "FeatureCollection", "features": []},
        "entities": [{"operation": "create", "id": "e", "name": format!("Entity {i}"),
                      "slug": "e", "type_id": "country"}],
        "geometries": [{"operation": "create", "id": "g", "type": "path", "time_start": 968,
                        "draw_geometry": {"type": "Polygon", "coordinates":
                            [[[104.0, 19.0], [106.0, 19.0], [106.0, 21.0], [104.0, 19.0]]]}}],
        "link_scopes": [{"geometry_id": "g", "entity_ids": ["e"]}]
    })
}

fn at() -> Timestamp {
    Timestamp::parse("2026-04-19T10:00:00Z").expect("time")
}

/// A section created and locked by `bench`, with `commits` commits.
fn section(commits: usize) -> SectionState {
    let mut events = vec![
        SectionEvent::SectionCreated {
            section_id: "s".into(),
            title: "Bench".into(),
            description: None,
            user_id: Some("bench".into()),
            created_by: Some("bench".into()),
            created_at: at(),
        },
        SectionEvent::SectionLocked {
            locked_by: "bench".into(),
            locked_at: at(),
            lock_expires_at: at().plus_seconds(1_000_000),
        },
    ];
    for i in 0..commits {
        let snapshot = snapshot(i);
        events.push(SectionEvent::SectionCommitted(CommitRecorded {
            commit_id: format!("c{i}"),
            commit_no: i as i64 + 1,
            parent_commit_id: i.checked_sub(1).map(|p| format!("c{p}")),
            restored_from_commit_id: None,
            created_by: "bench".into(),
            created_at: at(),
            title: None,
            note: None,
            snapshot_hash: palimpsest_atlas::hashing::snapshot_hash(&snapshot),
            snapshot,
        }));
    }
    fold(&events)
}

/// Medians of each step over [`ROUNDS`] commits on `kept`.
fn steps(kept: &SectionState) -> [(&'static str, Duration); 5] {
    let mut times: [Vec<Duration>; 5] = Default::default();
    for i in 0..ROUNDS {
        let started = Instant::now();
        let copies = [kept.clone(), kept.clone(), kept.clone()];
        let [state, ..] = copies;
        let copied = Instant::now();
        let command = SectionCommand::Commit {
            commit_id: format!("n{i}"),
            actor: "bench".into(),
            title: None,
            note: None,
            snapshot: snapshot(i),
            expected: Expectations::default(),
            now: at().plus_seconds(1),
        };
        let events = decide(command, &state).expect("the commit is accepted");
        let decided = Instant::now();
        let after = events.iter().fold(state, evolve);
        let folded = Instant::now();
        let row = SectionRow::from_state(&after).expect("section");
        let head = after.head().map(|c| CommitRow::from_commit(&row.id, c));
        let body = serde_json::to_vec(&json!({ "commit": head, "state": row.state }));
        black_box(body.expect("answer"));
        let answered = Instant::now();
        black_box(encode(&events).expect("encoded"));
        let encoded = Instant::now();
        drop(after);
        for (step, took) in times.iter_mut().zip([
            copied - started,
            decided - copied,
            folded - decided,
            answered - folded,
            encoded - answered,
        ]) {
            step.push(took);
        }
    }
    let names = ["state copies", "decide", "fold", "answer", "encode"];
    let mut medians = [("", Duration::ZERO); 5];
    for ((median, name), mut step) in medians.iter_mut().zip(names).zip(times) {
        step.sort();
        *median = (name, step[step.len() / 2]);
    }
    medians
}

fn main() {
    let (short, long) = (steps(&section(1)), steps(&section(1_000)));
    println!("section commit, own work per step (median of {ROUNDS}, µs)");
    println!("{:<14} {:>12} {:>16}", "step", "1 commit", "1,000 commits");
    for ((name, one), (_, many)) in short.iter().zip(&long) {
        println!(
            "{name:<14} {:>12.1} {:>16.1}",
            one.as_secs_f64() * 1e6,
            many.as_secs_f64() * 1e6
        );
    }
}
