//! The plans of the read model's by-id reads: each id probes `kv`'s primary key, whatever the
//! table's statistics. Prepared statements keep the generic plan a connection made when the
//! table was small; for `key = ANY($2)` or a plain join with `unnest`, that plan scanned a whole
//! database (or the whole table) on every `_revs_diff` and projector batch as the table grew
//! (docs/performance/docs.md, "Replication, 2026-11-28 (second round)").

mod common;

use common::Docs;

/// The generic plan Postgres makes for `sql` (parameters of `types`) on a small `kv`,
/// explained for `args`.
async fn generic_plan(docs: &Docs, name: &str, types: &str, sql: &str, args: &str) -> String {
    let client = docs.app.state.read.get().await.expect("client");
    client
        .batch_execute(&format!(
            "SET plan_cache_mode = force_generic_plan; PREPARE {name}({types}) AS {sql}"
        ))
        .await
        .expect("prepare");
    let rows = client
        .query(&format!("EXPLAIN EXECUTE {name}({args})"), &[])
        .await
        .expect("explain");
    let plan: Vec<String> = rows.iter().map(|row| row.get(0)).collect();
    plan.join("\n")
}

/// A database holding a few documents: `kv` is small, as when a connection first prepares.
async fn small_database(docs: &Docs) {
    assert_eq!(docs.admin("PUT", "/plans", "").await.0, 201);
    for i in 0..5 {
        let (status, _) = docs
            .raw("PUT", &format!("/plans/d{i}"), Some(r#"{"n":1}"#))
            .await;
        assert_eq!(status, 201);
    }
}

#[tokio::test]
async fn documents_by_id_probe_the_primary_key_for_each_id() {
    let docs = Docs::start().await;
    small_database(&docs).await;
    let plan = generic_plan(
        &docs,
        "by_id",
        "text, text[]",
        palimpsest_docs::read::DOCUMENTS_BY_ID,
        "'plans', '{d1,new1,new2}'",
    )
    .await;
    assert!(
        plan.contains("kv_pkey") && plan.contains("key = u.key"),
        "each id probes the primary key:\n{plan}"
    );
    assert!(
        !plan.contains("kv_changes") && !plan.contains("Seq Scan on kv"),
        "no scan of the database's rows:\n{plan}"
    );
}

#[tokio::test]
async fn the_projectors_read_of_a_batchs_documents_probes_the_primary_key() {
    let docs = Docs::start().await;
    small_database(&docs).await;
    let plan = generic_plan(
        &docs,
        "stored",
        "text[], text[]",
        &palimpsest_docs::projection::stored_documents_query("docs"),
        "'{plans,plans}', '{d1,new1}'",
    )
    .await;
    assert!(
        plan.contains("kv_pkey") && plan.contains("key = u.key"),
        "each document probes the primary key:\n{plan}"
    );
    assert!(
        !plan.contains("Seq Scan on kv") && !plan.contains("Hash Join"),
        "no scan of the table:\n{plan}"
    );
}
