//! Proof times in a tree of 1,000,000 leaves (`BENCH_TREE_LEAVES`), without appending a
//! million events: synthetic leaves go through a [`Frontier`] (as the tree maker's do), every
//! node it yields from the stored level up is loaded into `log.tree_nodes` of a fresh, migrated
//! database, with one event row a position for the leaves under them (binary `COPY`), then random inclusion and consistency proofs are timed as the `/v1/log/proof/*`
//! routes make them (`palimpsest_log::tree::proof`, on one pooled connection), and every proof is
//! checked against roots computed here from the nodes in memory, so a wrong answer fails the
//! bench instead of being timed.

use crate::{Server, connect, percentile};
use deadpool_postgres::{GenericClient, Object};
use palimpsest_events::merkle::{self, Hash, NodeId, Range};
use palimpsest_log::EventStore;
use palimpsest_log::tree::{Frontier, nodes, proof};
use std::time::Instant;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::Type;

/// Proofs of each kind timed.
const PROOFS: usize = 1000;

fn leaves() -> u64 {
    std::env::var("BENCH_TREE_LEAVES")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(1e6) as u64
}

/// A deterministic stream of pseudo-random numbers (splitmix64): no `rand` in this bench.
struct Draw(u64);

impl Draw {
    /// A number in `lo..=hi`.
    fn between(&mut self, lo: u64, hi: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        lo + (z ^ (z >> 31)) % (hi - lo + 1)
    }
}

/// Every complete node of a tree, by level then index, as the tree maker would store them.
struct Tree {
    levels: Vec<Vec<Hash>>,
    root: Hash,
}

impl Tree {
    /// The tree of `n` synthetic leaves (position `p`'s chain hash stands in as `p`'s bytes).
    fn build(n: u64) -> Tree {
        let mut frontier = Frontier::default();
        let mut levels: Vec<Vec<Hash>> = Vec::new();
        let mut new = Vec::new();
        for p in 1..=n {
            new.clear();
            frontier.push(merkle::event_leaf(p, &chain_hash(p)), &mut new);
            for (id, hash) in &new {
                let level = id.level as usize;
                if levels.len() <= level {
                    levels.push(Vec::new());
                }
                assert_eq!(levels[level].len() as u64, id.index, "nodes come in order");
                levels[level].push(*hash);
            }
        }
        let root = frontier.root();
        Tree { levels, root }
    }

    fn node(&self, id: NodeId) -> Option<Hash> {
        self.levels
            .get(id.level as usize)?
            .get(id.index as usize)
            .copied()
    }

    /// The root of the first `size` leaves, from the nodes in memory.
    fn root_of(&self, size: u64) -> Hash {
        Range {
            start: 0,
            end: size,
        }
        .hash(|id| self.node(id))
        .expect("a stored node")
    }

    fn nodes(&self) -> usize {
        self.levels.iter().map(Vec::len).sum()
    }
}

/// Loads `tree` as the tree maker leaves it: its nodes from [`nodes::STORED_LEVEL`] up into
/// `log.tree_nodes`, its size into `log.tree_size`, and for the leaves below, one event row a
/// position (its chain hash is all a leaf is made from), each with one binary `COPY` (the log's
/// own triggers off: these rows were never appended).
async fn load(client: &tokio_postgres::Client, tree: &Tree, n: u64) {
    client
        .batch_execute("SET session_replication_role = replica")
        .await
        .expect("triggers off");
    let sink = client
        .copy_in("COPY log.tree_nodes (level, index, hash) FROM STDIN BINARY")
        .await
        .expect("copy in");
    let writer = BinaryCopyInWriter::new(sink, &[Type::INT2, Type::INT8, Type::BYTEA]);
    let mut writer = std::pin::pin!(writer);
    for (level, hashes) in tree.levels.iter().enumerate() {
        if !nodes::is_stored(NodeId {
            level: level as u32,
            index: 0,
        }) {
            continue;
        }
        for (index, hash) in hashes.iter().enumerate() {
            writer
                .as_mut()
                .write(&[&(level as i16), &(index as i64), &hash.as_slice()])
                .await
                .expect("copy row");
        }
    }
    writer.as_mut().finish().await.expect("copy done");
    load_events(client, n).await;
    client
        .execute("UPDATE log.tree_size SET size = $1", &[&(n as i64)])
        .await
        .expect("tree size");
    for table in ["log.tree_nodes", "log.events"] {
        client
            .batch_execute(&format!("VACUUM ANALYZE {table}"))
            .await
            .expect("analyze");
    }
}

/// One event row a position `1..=n`, with [`Tree::build`]'s chain hash.
async fn load_events(client: &tokio_postgres::Client, n: u64) {
    let sink = client
        .copy_in(
            "COPY log.events (position, event_id, context, category, stream_key, version, \
             event_type, schema_version, payload, recorded_at, hash) FROM STDIN BINARY",
        )
        .await
        .expect("copy in");
    let types = [
        Type::INT8,
        Type::UUID,
        Type::TEXT,
        Type::TEXT,
        Type::TEXT,
        Type::INT8,
        Type::TEXT,
        Type::INT4,
        Type::JSON,
        Type::TIMESTAMPTZ,
        Type::BYTEA,
    ];
    let writer = BinaryCopyInWriter::new(sink, &types);
    let mut writer = std::pin::pin!(writer);
    let now = std::time::SystemTime::now();
    let payload = serde_json::json!({});
    for p in 1..=n {
        let id = uuid::Uuid::from_u64_pair(0, p);
        let key = p.to_string();
        writer
            .as_mut()
            .write(&[
                &(p as i64),
                &id,
                &"bench",
                &"tree",
                &key,
                &1i64,
                &"Leaf",
                &1i32,
                &payload,
                &now,
                &chain_hash(p).as_slice(),
            ])
            .await
            .expect("copy row");
    }
    writer.as_mut().finish().await.expect("copy done");
}

/// Position `p`'s stand-in chain hash: its bytes.
fn chain_hash(p: u64) -> Hash {
    let mut chain = [0u8; 32];
    chain[..8].copy_from_slice(&p.to_be_bytes());
    chain
}

fn to_hashes(hex: &[String]) -> Vec<Hash> {
    hex.iter()
        .map(|h| {
            let mut out = [0u8; 32];
            hex::decode_to_slice(h, &mut out).expect("a hex hash");
            out
        })
        .collect()
}

/// p50 and p99 (ms) of `times`.
fn summary(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    (percentile(&times, 0.5), percentile(&times, 0.99))
}

/// Times [`PROOFS`] random inclusion proofs in the tree of `n` leaves; checks each one.
async fn inclusions(client: &Object, tree: &Tree, n: u64) -> (f64, f64) {
    let mut draw = Draw(27);
    let mut times = Vec::with_capacity(PROOFS);
    for _ in 0..PROOFS {
        let position = draw.between(1, n);
        let t0 = Instant::now();
        let p = proof::inclusion(client, position, n).await.expect("proof");
        times.push(t0.elapsed().as_secs_f64() * 1000.0);
        let leaf = to_hashes(std::slice::from_ref(&p.leaf_hash))[0];
        assert!(
            merkle::verify_inclusion(
                position - 1,
                n,
                &leaf,
                &to_hashes(&p.audit_path),
                &tree.root
            ),
            "the inclusion proof of {position} in {n} does not verify"
        );
        assert_eq!(
            Some(leaf),
            tree.node(NodeId {
                level: 0,
                index: position - 1
            })
        );
    }
    summary(times)
}

/// Times [`PROOFS`] random consistency proofs (`from < to <= n`); checks each one.
async fn consistencies(client: &Object, tree: &Tree, n: u64) -> (f64, f64) {
    let mut draw = Draw(24);
    let mut times = Vec::with_capacity(PROOFS);
    for _ in 0..PROOFS {
        let to = draw.between(2, n);
        let from = draw.between(1, to - 1);
        let t0 = Instant::now();
        let p = proof::consistency(client, from, to).await.expect("proof");
        times.push(t0.elapsed().as_secs_f64() * 1000.0);
        let (old, new) = (tree.root_of(from), tree.root_of(to));
        assert!(
            merkle::verify_consistency(from, to, &old, &new, &to_hashes(&p.proof)),
            "the consistency proof {from} -> {to} does not verify"
        );
    }
    summary(times)
}

/// The floor: one stored node read by its key per query, as unprepared as the proofs' queries.
async fn floor(client: &Object, n: u64) -> (f64, f64) {
    let mut draw = Draw(1);
    let mut times = Vec::with_capacity(PROOFS);
    for _ in 0..PROOFS {
        let index = draw.between(0, (n >> nodes::STORED_LEVEL) - 1) as i64;
        let t0 = Instant::now();
        client
            .query_one(
                "SELECT hash FROM log.tree_nodes WHERE level = $1 AND index = $2",
                &[&(nodes::STORED_LEVEL as i16), &index],
            )
            .await
            .expect("a node");
        times.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    summary(times)
}

/// Proof times in a tree of [`leaves`] leaves, against the 5 ms target.
pub async fn proof_times(server: &Server) {
    let n = leaves();
    println!("\n== the signed tree: proofs in a tree of {n} leaves ==");
    let (url, db) = server.database("tree_proofs").await;
    let store = EventStore::connect(&url).await.expect("migrated store");
    let client = connect(&url).await;
    let t0 = Instant::now();
    let tree = Tree::build(n);
    let built = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    load(&client, &tree, n).await;
    println!(
        "tree: {} nodes built in {built:.1} s; those kept and {n} event rows loaded (COPY, \
         VACUUM ANALYZE) in {:.1} s",
        tree.nodes(),
        t1.elapsed().as_secs_f64()
    );
    // A pooled connection, as the `/v1/log` routes use.
    let pooled = store.pool().get().await.expect("pooled client");
    let (i50, i99) = inclusions(&pooled, &tree, n).await;
    let (c50, c99) = consistencies(&pooled, &tree, n).await;
    let (f50, f99) = floor(&pooled, n).await;
    println!(
        "tree: inclusion proof at {n} leaves ({PROOFS} random, all verified): \
         p50 {i50:.2} ms, p99 {i99:.2} ms (target p99 <= 5 ms)"
    );
    println!(
        "tree: consistency proof up to {n} leaves ({PROOFS} random, all verified): \
         p50 {c50:.2} ms, p99 {c99:.2} ms (target p99 <= 5 ms)"
    );
    println!(
        "  floor: one node by its key per query: p50 {f50:.2} ms, p99 {f99:.2} ms (a proof is \
         three queries in one round trip: the tree's size, its stored nodes, the leaves under \
         the others)"
    );
    drop((pooled, client, store));
    if let Some(db) = db {
        db.drop().await;
    }
}
