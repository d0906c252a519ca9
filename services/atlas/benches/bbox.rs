//! The map's bbox query over 100,000 geometries.
//!
//! `DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres cargo bench -p palimpsest-atlas --bench bbox`
//!
//! Creates its own database on the server `DATABASE_URL` names, builds the atlas read model's
//! tables there, seeds 100,000 live geometries (small polygons spread over the globe, each
//! linked to one of 10,000 entities) straight into the tables, runs the `GET /geometries` query
//! (`read::geometries::feature_collection`, the handler's own code) for random windows, prints
//! p50/p99 latencies and the plan, then drops the database.

use palimpsest_atlas::projection::schema::ddl;
use palimpsest_atlas::read::geometries::{MapQuery, feature_collection};
use std::time::{Duration, Instant};
use tokio_postgres::{Client, NoTls};

const GEOMETRIES: i64 = 100_000;
const ENTITIES: i64 = 10_000;
const QUERIES: usize = 300;

async fn connect(url: &str) -> Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"));
    tokio::spawn(connection);
    client
}

/// A small deterministic generator (no dependency needed for uniform windows).
struct Lcg(u64);

impl Lcg {
    fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

async fn seed(client: &Client) {
    client
        .batch_execute("CREATE SCHEMA atlas")
        .await
        .expect("schema");
    client.batch_execute(&ddl("atlas")).await.expect("tables");
    client
        .batch_execute(&format!(
            "SELECT setseed(0.42);
             INSERT INTO atlas.entities (id, name, slug, type_id, status, is_deleted, created_at, updated_at)
             SELECT 'e' || i, 'Entity ' || i, 'entity-' || i, 'country', 1, 0,
                    '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'
             FROM generate_series(1, {ENTITIES}) i;
             INSERT INTO atlas.geometries (id, type, is_deleted, draw_geometry, binding, time_start, time_end,
                    bbox_min_lng, bbox_min_lat, bbox_max_lng, bbox_max_lat, created_at, updated_at)
             SELECT 'g' || i, 'country', 0,
                    format('{{\"type\":\"Polygon\",\"coordinates\":[[[%s,%s],[%s,%s],[%s,%s],[%s,%s]]]}}',
                           lng, lat, lng + w, lat, lng + w, lat + w, lng, lat),
                    NULL, (random() * 2000)::bigint, NULL, lng, lat, lng + w, lat + w,
                    '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'
             FROM (SELECT i, -180 + random() * 359 AS lng, -80 + random() * 159 AS lat, 0.1 + random() * 0.9 AS w
                   FROM generate_series(1, {GEOMETRIES}) i) g;
             INSERT INTO atlas.entity_geometries (entity_id, geometry_id, created_at)
             SELECT 'e' || (1 + i % {ENTITIES}), 'g' || i, '2026-01-01T00:00:00.000Z'
             FROM generate_series(1, {GEOMETRIES}) i;
             ANALYZE;"
        ))
        .await
        .expect("seed");
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn run(client: &Client, size: f64, rng: &mut Lcg) -> (Duration, Duration, f64) {
    let mut times = Vec::with_capacity(QUERIES);
    let mut features = 0usize;
    for _ in 0..QUERIES {
        let lng = -180.0 + rng.unit() * (360.0 - size);
        let lat = -80.0 + rng.unit() * (160.0 - size);
        let q = MapQuery {
            min_lng: lng,
            min_lat: lat,
            max_lng: lng + size,
            max_lat: lat + size,
            time: None,
            entity_id: None,
            as_of: None,
        };
        let started = Instant::now();
        let fc = feature_collection(client, &q).await.expect("query");
        times.push(started.elapsed());
        features += fc["features"].as_array().map(Vec::len).unwrap_or(0);
    }
    times.sort();
    (
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        features as f64 / QUERIES as f64,
    )
}

fn main() {
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let admin = connect(&url).await;
        let name = format!("atlas_bench_{}", uuid::Uuid::new_v4().simple());
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .expect("create database");
        let base = url.rsplit_once('/').map(|(b, _)| b).unwrap_or(&url);
        let client = connect(&format!("{base}/{name}")).await;
        let started = Instant::now();
        seed(&client).await;
        println!(
            "atlas bbox bench: seeded {GEOMETRIES} geometries, {ENTITIES} entities in {:.1}s",
            started.elapsed().as_secs_f64()
        );
        let plan = client
            .query(
                "EXPLAIN SELECT id FROM atlas.geometries g WHERE g.is_deleted = 0 AND \
                 box(point(g.bbox_min_lng, g.bbox_min_lat), point(g.bbox_max_lng, g.bbox_max_lat)) \
                 && box(point(10, 10), point(12, 12))",
                &[],
            )
            .await
            .expect("explain");
        let plan: Vec<String> = plan.iter().map(|r| r.get(0)).collect();
        println!("plan: {}", plan.join(" | "));
        let mut rng = Lcg(7);
        for size in [2.0, 5.0, 20.0] {
            let (p50, p99, avg) = run(&client, size, &mut rng).await;
            println!(
                "bbox {size}°x{size}°: {QUERIES} queries, p50 {:.2} ms, p99 {:.2} ms, {avg:.0} features/query",
                p50.as_secs_f64() * 1000.0,
                p99.as_secs_f64() * 1000.0
            );
        }
        drop(client);
        admin
            .batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)"))
            .await
            .expect("drop database");
    });
}
