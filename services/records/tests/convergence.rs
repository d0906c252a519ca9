//! A simulated client following the spec's session rules converges with the store after random
//! concurrent changes (property test against the real server).

mod common;

use common::Records;
use palimpsest_records::settings::Settings;
use palimpsest_records::sync::Session;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};

const AUTHORS: [&str; 3] = ["Hugo", "Zola", "Sand"];

#[derive(Debug, Clone)]
enum Change {
    Author(usize, usize),
    Delete(usize),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (0..5usize, 0..AUTHORS.len()).prop_map(|(d, a)| Change::Author(d, a)),
        (0..5usize).prop_map(Change::Delete),
    ]
}

async fn apply(r: &Records, org: &str, change: &Change) {
    let doc = |d: usize| format!("d{d}");
    let d = match change {
        Change::Author(d, _) | Change::Delete(d) => *d,
    };
    let pk = palimpsest_records::hash::sha16(&doc(d));
    let (_, current) = r
        .admin_call("getDoc", json!({"org": org, "cl": "Article", "pk": pk}))
        .await;
    let current = &current["result"];
    // Conflicts with a concurrent change of the same document are expected: the store decides.
    let _ = match change {
        Change::Author(_, a) if current.is_null() => {
            r.admin_call("insertDoc", json!({"org": org, "data": {"clazz": "Article", "p1": doc(d), "auteur": AUTHORS[*a]}})).await
        }
        Change::Author(_, a) => {
            r.admin_call("updateDoc", json!({"org": org, "v": current["v"], "data": {"clazz": "Article", "p1": doc(d), "auteur": AUTHORS[*a]}})).await
        }
        Change::Delete(_) => r.admin_call("deleteDoc", json!({"org": org, "cl": "Article", "pk": pk})).await,
    };
}

async fn sync(r: &Records, org: &str, session: &mut Session) {
    for author in AUTHORS {
        let name = format!("Article/auteur/{author}");
        let answer = r
            .ok("listDocsSk", json!({"org": org, "cl": "Article", "ik": 1, "val": author, "v": session.since(&name)}))
            .await;
        session.apply(&name, &answer, |data| {
            data["auteur"] == author && data["x"] == 0
        });
    }
}

async fn truth(r: &Records, org: &str, author: &str) -> BTreeSet<String> {
    let all = r.ok("listDocs", json!({"org": org, "cl": "Article"})).await;
    all["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter(|row| row["x"] == 0 && row["data"]["auteur"] == author)
                .filter_map(|row| row["pk"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_client_following_the_session_rules_converges_with_the_store() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let r = runtime.block_on(Records::start_with(Settings {
        delta_ms: 5,
        ..Settings::default()
    }));
    let case = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config {
        cases: 12,
        failure_persistence: None,
        ..Config::default()
    });
    let rounds = prop::collection::vec(prop::collection::vec(change(), 1..5), 1..5);
    let result = runner.run(&rounds, |rounds| {
        let org = format!("p{}", case.fetch_add(1, Ordering::SeqCst));
        let converged = runtime.block_on(async {
            let mut session = Session::default();
            for round in &rounds {
                futures::future::join_all(round.iter().map(|c| apply(&r, &org, c))).await;
                sync(&r, &org, &mut session).await;
            }
            let mut diverged: Vec<Value> = Vec::new();
            for author in AUTHORS {
                let name = format!("Article/auteur/{author}");
                let held = session
                    .collections
                    .get(&name)
                    .map(|c| c.pks.clone())
                    .unwrap_or_default();
                let real = truth(&r, &org, author).await;
                if held != real {
                    diverged.push(json!({"author": author, "client": held, "store": real}));
                }
            }
            diverged
        });
        prop_assert!(
            converged.is_empty(),
            "diverged: {converged:?} after {rounds:?}"
        );
        Ok(())
    });
    runtime.block_on(r.stop());
    if let Err(e) = result {
        panic!("{e}");
    }
}
