//! `atlas import`: History Map SQLite databases built with the spec's DDL — the current schema
//! and an older one (§7: missing columns, the deprecated `kind`/`line_mode`, empty and
//! `line`/`path` geometry types) — filled with a small history, imported, then read back
//! through the atlas HTTP API and compared with what the database held.

mod common;

use common::Atlas;
use palimpsest_atlas::import;
use rusqlite::{Connection, params};
use serde_json::{Value, json};
use std::path::PathBuf;

/// The spec's tables as `BackEnd/db/polygons.js` creates them today.
const CURRENT_DDL: &str = r#"
CREATE TABLE entities (id TEXT PRIMARY KEY, name TEXT NOT NULL, slug TEXT UNIQUE, description TEXT,
  type_id TEXT NOT NULL DEFAULT 'country', status INTEGER DEFAULT 1, is_deleted INTEGER NOT NULL DEFAULT 0,
  created_at TEXT, updated_at TEXT);
CREATE UNIQUE INDEX idx_entities_slug ON entities (slug);
CREATE INDEX idx_entities_name ON entities (name);
CREATE TABLE geometries (id TEXT PRIMARY KEY, type TEXT, is_deleted INTEGER NOT NULL DEFAULT 0,
  draw_geometry TEXT NOT NULL, binding TEXT, time_start INTEGER, time_end INTEGER,
  bbox_min_lng REAL, bbox_min_lat REAL, bbox_max_lng REAL, bbox_max_lat REAL, created_at TEXT, updated_at TEXT);
"#;

/// An older database: no `status`/`is_deleted`/`type_id` on entities but the deprecated `kind`;
/// no `is_deleted`/`binding` on geometries but `kind` and `line_mode`; no `sections.user_id`.
const OLD_DDL: &str = r#"
CREATE TABLE entities (id TEXT PRIMARY KEY, name TEXT NOT NULL, slug TEXT UNIQUE, description TEXT,
  kind TEXT, created_at TEXT, updated_at TEXT);
CREATE TABLE geometries (id TEXT PRIMARY KEY, type TEXT, kind TEXT, line_mode TEXT,
  draw_geometry TEXT NOT NULL, time_start INTEGER, time_end INTEGER,
  bbox_min_lng REAL, bbox_min_lat REAL, bbox_max_lng REAL, bbox_max_lat REAL, created_at TEXT, updated_at TEXT);
"#;

/// The tables both shapes share, `sections` apart.
const WORKFLOW_DDL: &str = r#"
CREATE TABLE entity_geometries (entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  geometry_id TEXT NOT NULL REFERENCES geometries(id) ON DELETE CASCADE, created_at TEXT,
  PRIMARY KEY (entity_id, geometry_id));
CREATE INDEX idx_entity_geometries_geometry_id ON entity_geometries (geometry_id);
CREATE INDEX idx_entity_geometries_entity_id ON entity_geometries (entity_id);
CREATE TABLE section_states (section_id TEXT PRIMARY KEY REFERENCES sections(id) ON DELETE CASCADE,
  status TEXT NOT NULL DEFAULT 'editing', head_commit_id TEXT, version INTEGER NOT NULL DEFAULT 0,
  locked_by TEXT, locked_at TEXT, lock_expires_at TEXT, updated_at TEXT NOT NULL);
CREATE INDEX idx_section_states_status ON section_states (status, updated_at);
CREATE TABLE section_commits (id TEXT PRIMARY KEY, section_id TEXT NOT NULL REFERENCES sections(id) ON DELETE CASCADE,
  parent_commit_id TEXT REFERENCES section_commits(id), commit_no INTEGER NOT NULL,
  kind TEXT NOT NULL DEFAULT 'manual', restored_from_commit_id TEXT REFERENCES section_commits(id),
  created_by TEXT NOT NULL, created_at TEXT NOT NULL, title TEXT, note TEXT,
  snapshot_json TEXT NOT NULL, snapshot_hash TEXT);
CREATE UNIQUE INDEX idx_section_commits_no ON section_commits (section_id, commit_no);
CREATE INDEX idx_section_commits_section_time ON section_commits (section_id, created_at);
CREATE TABLE section_submissions (id TEXT PRIMARY KEY, section_id TEXT NOT NULL REFERENCES sections(id) ON DELETE CASCADE,
  commit_id TEXT NOT NULL REFERENCES section_commits(id), submitted_by TEXT NOT NULL, submitted_at TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending', reviewed_by TEXT, reviewed_at TEXT, review_note TEXT,
  snapshot_json TEXT NOT NULL, snapshot_hash TEXT);
CREATE INDEX idx_section_submissions_section_status ON section_submissions (section_id, status, submitted_at);
"#;

const CURRENT_SECTIONS: &str = "CREATE TABLE sections (id TEXT PRIMARY KEY, title TEXT NOT NULL, \
  description TEXT, user_id TEXT, created_by TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);";
const OLD_SECTIONS: &str = "CREATE TABLE sections (id TEXT PRIMARY KEY, title TEXT NOT NULL, \
  description TEXT, created_by TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);";

/// A database file in the temp folder, removed when dropped (even when the test panics).
struct SqliteFile(PathBuf);

impl SqliteFile {
    fn new() -> Self {
        SqliteFile(std::env::temp_dir().join(format!("atlas-import-{}.db", uuid::Uuid::new_v4())))
    }
}

impl Drop for SqliteFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn polygon(lng: f64, lat: f64) -> Value {
    json!({"type": "Polygon", "coordinates": [[[lng, lat], [lng + 1.0, lat], [lng + 1.0, lat + 1.0], [lng, lat]]]})
}

/// `sha256:<hex>` as the original's clients sent it (any text: the import keeps it as stored).
fn hash(tag: &str) -> String {
    format!(
        "sha256:{}",
        tag.repeat(64).chars().take(64).collect::<String>()
    )
}

/// The snapshots of the history below.
fn first_snapshot() -> Value {
    json!({
        "schema_version": 1,
        "section": {"id": "s-ly", "title": "Nhà Lý"},
        "editor_feature_collection": {"type": "FeatureCollection", "features": []},
        "entities": [
            {"operation": "create", "id": "e-ly", "name": "Nhà Lý", "slug": "nha-ly", "type_id": "dynasty"},
            {"operation": "create", "id": "e-dv", "name": "Đại Việt", "slug": "dai-viet"}
        ],
        "geometries": [
            {"operation": "create", "id": "g-ly", "type": "line", "draw_geometry": polygon(105.0, 21.0), "time_start": 1009, "time_end": 1225},
            {"operation": "create", "id": "g-dv", "type": "", "draw_geometry": polygon(105.5, 21.5), "binding": ["g-ly"]},
            {"operation": "create", "id": "g-path", "type": "path", "draw_geometry": polygon(106.0, 20.0)}
        ],
        "link_scopes": [
            {"operation": "replace", "geometry_id": "g-ly", "entity_ids": ["e-ly", "e-dv"]},
            {"operation": "replace", "geometry_id": "g-dv", "entity_ids": ["e-dv"]}
        ]
    })
}

fn second_snapshot() -> Value {
    json!({
        "schema_version": 1,
        "entities": [{"operation": "update", "id": "e-dv", "name": "Đại Việt (Trần)", "slug": "dai-viet"},
                     {"operation": "delete", "id": "e-ly"}],
        "geometries": [{"operation": "delete", "id": "g-ly"}]
    })
}

const T0: &str = "2026-03-01T08:00:00.000Z";
const T_APPROVE_1: &str = "2026-03-02T09:00:00.000Z";
const T_APPROVE_2: &str = "2026-03-05T10:30:00.000Z";

/// Fills `db` with a small history: section s-ly (commit, submit, approved), section s-tran
/// (commit, submit, rejected, restore, submit, approved), section s-pending (a pending
/// submission and a live lock), section s-conflict (a conflicted submission), section s-empty;
/// and the published rows the two approvals left.
fn fill(db: &Connection, old: bool) {
    let section = |id: &str, title: &str, user: Option<&str>, at: &str| {
        if old {
            db.execute(
                "INSERT INTO sections (id, title, description, created_by, created_at, updated_at) VALUES (?1, ?2, 'mô tả', 'ann', ?3, ?3)",
                params![id, title, at],
            )
        } else {
            db.execute(
                "INSERT INTO sections (id, title, description, user_id, created_by, created_at, updated_at) VALUES (?1, ?2, 'mô tả', ?3, 'ann', ?4, ?4)",
                params![id, title, user, at],
            )
        }
        .expect("section");
    };
    let state = |id: &str,
                 status: &str,
                 head: Option<&str>,
                 version: i64,
                 lock: Option<(&str, &str, &str)>| {
        db.execute(
            "INSERT INTO section_states (section_id, status, head_commit_id, version, locked_by, locked_at, lock_expires_at, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![id, status, head, version, lock.map(|l| l.0), lock.map(|l| l.1), lock.map(|l| l.2), T0],
        )
        .expect("state");
    };
    #[allow(clippy::too_many_arguments)]
    let commit = |id: &str,
                  section: &str,
                  parent: Option<&str>,
                  no: i64,
                  kind: &str,
                  from: Option<&str>,
                  by: &str,
                  at: &str,
                  snapshot: &Value,
                  h: Option<String>| {
        db.execute(
            "INSERT INTO section_commits (id, section_id, parent_commit_id, commit_no, kind, restored_from_commit_id, created_by, created_at, title, note, snapshot_json, snapshot_hash) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'ghi chú', ?10, ?11)",
            params![id, section, parent, no, kind, from, by, at, format!("commit {no}"), snapshot.to_string(), h],
        )
        .expect("commit");
    };
    #[allow(clippy::too_many_arguments)]
    let submission = |id: &str,
                      section: &str,
                      commit: &str,
                      at: &str,
                      status: &str,
                      review: Option<(&str, &str, &str)>,
                      snapshot: &Value,
                      h: Option<String>| {
        db.execute(
            "INSERT INTO section_submissions (id, section_id, commit_id, submitted_by, submitted_at, status, reviewed_by, reviewed_at, review_note, snapshot_json, snapshot_hash) \
             VALUES (?1, ?2, ?3, 'ann', ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![id, section, commit, at, status, review.map(|r| r.0), review.map(|r| r.1), review.map(|r| r.2), snapshot.to_string(), h],
        )
        .expect("submission");
    };
    let (first, second) = (first_snapshot(), second_snapshot());

    section("s-ly", "Nhà Lý", Some("u-ann"), T0);
    commit(
        "c-ly-1",
        "s-ly",
        None,
        1,
        "manual",
        None,
        "ann",
        "2026-03-01T08:10:00.000Z",
        &first,
        Some(hash("a")),
    );
    submission(
        "sub-ly",
        "s-ly",
        "c-ly-1",
        "2026-03-01T08:20:00.000Z",
        "approved",
        Some(("rev", T_APPROVE_1, "ok")),
        &first,
        Some(hash("a")),
    );
    state("s-ly", "approved", Some("c-ly-1"), 1, None);

    section("s-tran", "Nhà Trần", None, "2026-03-03T08:00:00.000Z");
    commit(
        "c-tr-1",
        "s-tran",
        None,
        1,
        "manual",
        None,
        "bob",
        "2026-03-03T08:10:00.000Z",
        &second,
        Some(hash("b")),
    );
    submission(
        "sub-tr-1",
        "s-tran",
        "c-tr-1",
        "2026-03-03T08:20:00.000Z",
        "rejected",
        Some(("rev", "2026-03-04T08:00:00.000Z", "sửa lại")),
        &second,
        Some(hash("b")),
    );
    // No stored hash on the restore: the import computes it as the spec defines it.
    commit(
        "c-tr-2",
        "s-tran",
        Some("c-tr-1"),
        2,
        "restore",
        Some("c-tr-1"),
        "bob",
        "2026-03-05T08:00:00.000Z",
        &second,
        None,
    );
    submission(
        "sub-tr-2",
        "s-tran",
        "c-tr-2",
        "2026-03-05T08:10:00.000Z",
        "approved",
        Some(("rev2", T_APPROVE_2, "duyệt")),
        &second,
        None,
    );
    state("s-tran", "approved", Some("c-tr-2"), 2, None);

    section(
        "s-pending",
        "Chờ duyệt",
        Some("u-cat"),
        "2026-03-06T08:00:00.000Z",
    );
    let pending = json!({"entities": [{"operation": "create", "id": "e-new", "name": "Mới"}]});
    commit(
        "c-p-1",
        "s-pending",
        None,
        1,
        "manual",
        None,
        "cat",
        "2026-03-06T08:10:00.000Z",
        &pending,
        Some(hash("c")),
    );
    submission(
        "sub-p",
        "s-pending",
        "c-p-1",
        "2026-03-06T08:20:00.000Z",
        "pending",
        None,
        &pending,
        Some(hash("c")),
    );
    state(
        "s-pending",
        "submitted",
        Some("c-p-1"),
        1,
        Some((
            "dan",
            "2026-03-06T09:00:00.000Z",
            "2099-01-01T00:00:00.000Z",
        )),
    );

    section("s-conflict", "Xung đột", None, "2026-03-07T08:00:00.000Z");
    let stale = json!({"entities": [{"operation": "update", "id": "e-dv", "name": "x", "base_hash": hash("f")}]});
    commit(
        "c-x-1",
        "s-conflict",
        None,
        1,
        "manual",
        None,
        "eve",
        "2026-03-07T08:10:00.000Z",
        &stale,
        Some(hash("d")),
    );
    submission(
        "sub-x",
        "s-conflict",
        "c-x-1",
        "2026-03-07T08:20:00.000Z",
        "conflicted",
        Some((
            "rev",
            "2026-03-07T09:00:00.000Z",
            "Conflict: entity e-dv changed",
        )),
        &stale,
        Some(hash("d")),
    );
    state("s-conflict", "submitted", Some("c-x-1"), 1, None);

    section("s-empty", "Trống", None, "2026-03-08T08:00:00.000Z");
    state("s-empty", "editing", None, 0, None);

    // The published rows the two approvals left.
    let entity = |id: &str,
                  name: &str,
                  slug: &str,
                  type_id: &str,
                  deleted: i64,
                  created: &str,
                  updated: &str| {
        if old {
            db.execute(
                "INSERT INTO entities (id, name, slug, description, kind, created_at, updated_at) VALUES (?1, ?2, ?3, NULL, 'legacy', ?4, ?5)",
                params![id, name, slug, created, updated],
            )
        } else {
            db.execute(
                "INSERT INTO entities (id, name, slug, description, type_id, status, is_deleted, created_at, updated_at) VALUES (?1, ?2, ?3, NULL, ?4, 1, ?5, ?6, ?7)",
                params![id, name, slug, type_id, deleted, created, updated],
            )
        }
        .expect("entity");
    };
    entity(
        "e-ly",
        "Nhà Lý",
        "nha-ly",
        "dynasty",
        1,
        T_APPROVE_1,
        T_APPROVE_2,
    );
    entity(
        "e-dv",
        "Đại Việt (Trần)",
        "dai-viet",
        "country",
        0,
        T_APPROVE_1,
        T_APPROVE_2,
    );
    let geometry = |id: &str,
                    kind: Option<&str>,
                    deleted: i64,
                    g: &Value,
                    binding: Option<&str>,
                    years: (Option<i64>, Option<i64>),
                    lng: f64,
                    lat: f64,
                    updated: &str| {
        if old {
            db.execute(
                "INSERT INTO geometries (id, type, kind, line_mode, draw_geometry, time_start, time_end, bbox_min_lng, bbox_min_lat, bbox_max_lng, bbox_max_lat, created_at, updated_at) \
                 VALUES (?1, ?2, 'legacy', 'straight', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![id, kind, g.to_string(), years.0, years.1, lng, lat, lng + 1.0, lat + 1.0, T_APPROVE_1, updated],
            )
        } else {
            db.execute(
                "INSERT INTO geometries (id, type, is_deleted, draw_geometry, binding, time_start, time_end, bbox_min_lng, bbox_min_lat, bbox_max_lng, bbox_max_lat, created_at, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                params![id, kind, deleted, g.to_string(), binding, years.0, years.1, lng, lat, lng + 1.0, lat + 1.0, T_APPROVE_1, updated],
            )
        }
        .expect("geometry");
    };
    geometry(
        "g-ly",
        Some(if old { "line" } else { "dynasty" }),
        1,
        &polygon(105.0, 21.0),
        None,
        (Some(1009), Some(1225)),
        105.0,
        21.0,
        T_APPROVE_2,
    );
    geometry(
        "g-dv",
        if old { Some("") } else { Some("country") },
        0,
        &polygon(105.5, 21.5),
        Some("[]"),
        (None, None),
        105.5,
        21.5,
        T_APPROVE_2,
    );
    geometry(
        "g-path",
        Some("path"),
        0,
        &polygon(106.0, 20.0),
        None,
        (Some(1400), None),
        106.0,
        20.0,
        T_APPROVE_1,
    );
    db.execute(
        "INSERT INTO entity_geometries (entity_id, geometry_id, created_at) VALUES ('e-dv', 'g-dv', ?1)",
        params![T_APPROVE_1],
    )
    .expect("link");
}

fn build(old: bool) -> SqliteFile {
    let file = SqliteFile::new();
    let db = Connection::open(&file.0).expect("open");
    let (published, sections) = if old {
        (OLD_DDL, OLD_SECTIONS)
    } else {
        (CURRENT_DDL, CURRENT_SECTIONS)
    };
    db.execute_batch(&format!("{published}{sections}{WORKFLOW_DDL}"))
        .expect("ddl");
    fill(&db, old);
    file
}

/// Imports `file` into the app's log and waits until the atlas read model shows it.
async fn run_import(
    atlas: &Atlas,
    file: &SqliteFile,
) -> Result<import::ImportReport, import::ImportError> {
    let source = import::read(&file.0)?;
    let plan = import::plan(&source, &atlas.state.store.limits());
    let report = import::import(&atlas.state.store, plan).await?;
    if report.last_position > 0 {
        atlas
            .state
            .commands
            .wait_for("atlas", report.last_position)
            .await
            .expect("read model");
    }
    Ok(report)
}

fn canonical(v: &Value) -> String {
    palimpsest_events::canonical::to_canonical_string(v)
}

fn sqlite_rows(file: &SqliteFile, sql: &str) -> Vec<Vec<rusqlite::types::Value>> {
    let db = Connection::open(&file.0).expect("open");
    let mut stmt = db.prepare(sql).expect("prepare");
    let n = stmt.column_count();
    stmt.query_map([], |row| (0..n).map(|i| row.get(i)).collect())
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

fn text(v: &rusqlite::types::Value) -> Value {
    match v {
        rusqlite::types::Value::Null => Value::Null,
        rusqlite::types::Value::Integer(n) => json!(n),
        rusqlite::types::Value::Real(r) => json!(r),
        rusqlite::types::Value::Text(t) => json!(t),
        rusqlite::types::Value::Blob(_) => panic!("no blobs here"),
    }
}

/// Every section, commit and submission reads back through HTTP as the database held it.
async fn assert_workflow_equal(atlas: &Atlas, file: &SqliteFile) {
    let (_, listed) = atlas.get("/sections").await;
    assert_eq!(listed.as_array().map(Vec::len), Some(5), "{listed}");
    for row in sqlite_rows(
        file,
        "SELECT s.id, s.title, s.description, s.created_by, s.created_at, st.status, st.head_commit_id, st.version, st.locked_by FROM sections s JOIN section_states st ON st.section_id = s.id",
    ) {
        let id = text(&row[0]);
        let id = id.as_str().expect("id");
        let (status, got) = atlas.get(&format!("/sections/{id}")).await;
        assert_eq!(status, 200, "{got}");
        let section = if got["section"].is_object() {
            &got["section"]
        } else {
            &got
        };
        assert_eq!(section["title"], text(&row[1]));
        assert_eq!(section["description"], text(&row[2]));
        assert_eq!(section["created_by"], text(&row[3]));
        assert_eq!(section["created_at"], text(&row[4]));
        // The spec leaves a conflicted approval's section `submitted`; ours says `conflicted`
        // (README: "the `conflicted` section status is ours").
        let expected_status = if id == "s-conflict" {
            json!("conflicted")
        } else {
            text(&row[5])
        };
        assert_eq!(got["state"]["status"], expected_status, "{id}: {got}");
        assert_eq!(got["state"]["head_commit_id"], text(&row[6]), "{id}");
        assert_eq!(got["state"]["version"], text(&row[7]), "{id}");
        assert_eq!(got["state"]["locked_by"], text(&row[8]), "{id}");

        let (_, commits) = atlas.get(&format!("/sections/{id}/commits")).await;
        let stored = sqlite_rows(
            file,
            &format!(
                "SELECT id, commit_no, kind, parent_commit_id, restored_from_commit_id, created_by, created_at, title, note, snapshot_json, snapshot_hash FROM section_commits WHERE section_id = '{id}' ORDER BY commit_no"
            ),
        );
        assert_eq!(
            commits.as_array().map(Vec::len),
            Some(stored.len()),
            "{id}: {commits}"
        );
        for (c, row) in commits.as_array().expect("commits").iter().zip(&stored) {
            for (i, column) in [
                "id",
                "commit_no",
                "kind",
                "parent_commit_id",
                "restored_from_commit_id",
                "created_by",
                "created_at",
                "title",
                "note",
            ]
            .iter()
            .enumerate()
            {
                assert_eq!(c[*column], text(&row[i]), "{id} commit {column}: {c}");
            }
            let snapshot: Value =
                serde_json::from_str(c["snapshot_json"].as_str().expect("json")).expect("parses");
            let held: Value =
                serde_json::from_str(text(&row[9]).as_str().expect("json")).expect("parses");
            // The same JSON (the read model keeps it in RFC 8785 canonical form: 105.0 is 105).
            assert_eq!(
                canonical(&snapshot),
                canonical(&held),
                "{id}: the snapshot is carried whole"
            );
            match text(&row[10]) {
                Value::Null => assert_eq!(
                    c["snapshot_hash"],
                    json!(palimpsest_atlas::hashing::snapshot_hash(&held))
                ),
                h => assert_eq!(c["snapshot_hash"], h, "stored hashes are kept"),
            }
        }

        let (_, subs) = atlas.get(&format!("/sections/{id}/submissions")).await;
        let stored = sqlite_rows(
            file,
            &format!(
                "SELECT id, commit_id, submitted_by, submitted_at, status, reviewed_by, reviewed_at, review_note, snapshot_hash FROM section_submissions WHERE section_id = '{id}' ORDER BY submitted_at DESC"
            ),
        );
        assert_eq!(
            subs.as_array().map(Vec::len),
            Some(stored.len()),
            "{id}: {subs}"
        );
        for (s, row) in subs.as_array().expect("subs").iter().zip(&stored) {
            for (i, column) in [
                "id",
                "commit_id",
                "submitted_by",
                "submitted_at",
                "status",
                "reviewed_by",
                "reviewed_at",
                "review_note",
            ]
            .iter()
            .enumerate()
            {
                assert_eq!(s[*column], text(&row[i]), "{id} submission {column}: {s}");
            }
            if !row[8].eq(&rusqlite::types::Value::Null) {
                assert_eq!(s["snapshot_hash"], text(&row[8]));
            }
        }
    }
}

/// The published map reads back as the database (after §7's repairs) held it, now and as of
/// the times its rows carry.
async fn assert_published_equal(atlas: &Atlas, old: bool) {
    let (status, dv) = atlas.get("/entities/e-dv").await;
    assert_eq!(status, 200, "{dv}");
    assert_eq!(dv["name"], "Đại Việt (Trần)");
    assert_eq!(dv["slug"], "dai-viet");
    assert_eq!(dv["type_id"], "country");
    assert_eq!(
        dv["status"], 1,
        "a missing status column reads as its default 1"
    );
    assert_eq!(dv["created_at"], T_APPROVE_1);
    assert_eq!(dv["updated_at"], T_APPROVE_2);
    assert_eq!(dv["geometry_count"], 1);
    let (status, _) = atlas.get("/entities/e-ly").await;
    assert_eq!(
        status,
        if old { 200 } else { 404 },
        "deleted only where the database says so"
    );

    let (_, map) = atlas
        .get("/geometries?minLng=100&minLat=15&maxLng=110&maxLat=25")
        .await;
    let mut features: Vec<(String, Value)> = map["features"]
        .as_array()
        .expect("features")
        .iter()
        .map(|f| (f["id"].as_str().unwrap_or_default().to_owned(), f.clone()))
        .collect();
    features.sort_by(|a, b| a.0.cmp(&b.0));
    let ids: Vec<&str> = features.iter().map(|f| f.0.as_str()).collect();
    let expected: Vec<&str> = if old {
        vec!["g-dv", "g-ly", "g-path"]
    } else {
        vec!["g-dv", "g-path"]
    };
    assert_eq!(ids, expected, "{map}");
    let dv_feature = &features[0].1;
    assert_eq!(dv_feature["geometry"], polygon(105.5, 21.5));
    // Old shape: '' repaired from the linked entity; new shape: stored as is.
    assert_eq!(dv_feature["properties"]["type"], "country", "{dv_feature}");
    let path = &features.last().expect("g-path").1;
    assert_eq!(
        path["properties"]["type"], "path",
        "no linked entity: left as the database held it"
    );
    if old {
        let ly = &features[1].1;
        assert_eq!(
            ly["properties"]["type"], "line",
            "unlinked legacy type: left as stored"
        );
        let stored = atlas
            .rows("SELECT binding FROM atlas.geometries WHERE id = 'g-ly'")
            .await;
        assert_eq!(
            stored,
            vec![json!({"binding": null})],
            "a missing binding column reads as NULL"
        );
    } else {
        assert_eq!(dv_feature["properties"]["binding"], json!([]));
    }

    // time_as_of: before the rows' last change, the rows that had not changed yet are there as
    // they are now; after it, the map equals the live one.
    let (_, before) = atlas
        .get(
            "/geometries?minLng=100&minLat=15&maxLng=110&maxLat=25&time_as_of=2026-03-03T00:00:00Z",
        )
        .await;
    let before_ids: Vec<&str> = before["features"]
        .as_array()
        .expect("features")
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert_eq!(before_ids, vec!["g-path"], "{before}");
    let (_, now) = atlas
        .get(
            "/geometries?minLng=100&minLat=15&maxLng=110&maxLat=25&time_as_of=2026-04-01T00:00:00Z",
        )
        .await;
    assert_eq!(
        now["features"].as_array().map(Vec::len),
        map["features"].as_array().map(Vec::len)
    );
    let (_, as_of) = atlas
        .get("/entities/e-dv?time_as_of=2026-04-01T00:00:00Z")
        .await;
    assert_eq!(as_of["name"], dv["name"]);
    let (status, _) = atlas
        .get("/entities/e-dv?time_as_of=2026-03-01T00:00:00Z")
        .await;
    assert_eq!(
        status, 404,
        "each row is carried as one version, valid from its updated_at"
    );
    let (_, history) = atlas.get("/entities/e-dv/history").await;
    assert_eq!(
        history[0]["submission_id"], "sub-tr-2",
        "attributed to the last approval naming it: {history}"
    );
    assert_eq!(history[0]["reviewed_by"], "rev2");
}

async fn dump(atlas: &Atlas) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for (table, key) in [
        ("entities", "id"),
        ("geometries", "id"),
        ("entity_geometries", "entity_id, geometry_id"),
        ("sections", "id"),
        ("section_states", "section_id"),
        ("section_commits", "id"),
        ("section_submissions", "id"),
        ("entity_history", "entity_id, version"),
        ("geometry_history", "geometry_id, version"),
    ] {
        out.push(
            atlas
                .rows(&format!("SELECT * FROM atlas.{table} ORDER BY {key}"))
                .await,
        );
    }
    out
}

async fn import_reads_back(old: bool) {
    let atlas = Atlas::start().await;
    let file = build(old);
    let before = std::fs::read(&file.0).expect("bytes");
    let report = run_import(&atlas, &file).await.expect("import");
    assert_eq!(
        std::fs::read(&file.0).expect("bytes"),
        before,
        "the source file is never written"
    );
    assert_eq!(report.counts.sections, 5);
    assert_eq!(report.counts.commits, 5);
    assert_eq!(report.counts.submissions, 5);
    assert_eq!(report.counts.reviews, 4);
    assert_eq!(report.counts.entities, 2);
    assert_eq!(report.counts.geometries, 3);
    assert_eq!(report.counts.repaired_types, if old { 1 } else { 0 });
    assert_eq!(report.already, 0);
    assert!(report.appended > 0 && report.events > 0);
    let imported = atlas
        .rows(
            "SELECT DISTINCT actor FROM log.events \
             WHERE context = 'atlas' AND category <> 'user'",
        )
        .await;
    let name = file.0.file_name().expect("file name").to_string_lossy();
    assert_eq!(
        imported,
        vec![json!({"actor": format!("import:{name}")})],
        "every imported event names the import of this file, which no user can be"
    );

    assert_workflow_equal(&atlas, &file).await;
    assert_published_equal(&atlas, old).await;

    // Importing again appends nothing.
    let size = atlas.log_size().await;
    let again = run_import(&atlas, &file).await.expect("second import");
    assert_eq!((again.appended, again.already), (0, report.appended));
    assert_eq!(atlas.log_size().await, size);

    // The imported history replays into the same read model.
    let live = dump(&atlas).await;
    palimpsest_projections::rebuild(
        &atlas.state.store,
        palimpsest_atlas::projection().as_ref(),
        |_, _| {},
    )
    .await
    .expect("rebuild");
    assert_eq!(
        dump(&atlas).await,
        live,
        "a replayed rebuild equals the live read model"
    );

    // The imported sections go on working: the pending submission can be reviewed.
    let (status, body) = atlas
        .post(
            "/submissions/sub-p/reject",
            json!({"reviewed_by": "rev", "review_note": "sau"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    atlas.stop().await;
}

#[tokio::test]
async fn a_current_database_imports_and_reads_back_as_it_was() {
    import_reads_back(false).await;
}

#[tokio::test]
async fn an_old_database_is_repaired_as_section_7_says_and_imported() {
    import_reads_back(true).await;
}

#[tokio::test]
async fn rows_that_cannot_be_carried_refuse_the_whole_import() {
    let atlas = Atlas::start().await;
    let file = build(false);
    {
        let db = Connection::open(&file.0).expect("open");
        db.execute(
            "UPDATE section_commits SET title = 'a' || char(0) || 'b' WHERE id = 'c-ly-1'",
            [],
        )
        .expect("nul");
        db.execute(
            "UPDATE section_submissions SET snapshot_json = '{nope' WHERE id = 'sub-p'",
            [],
        )
        .expect("bad json");
        db.execute(
            "INSERT INTO entities (id, name, created_at, updated_at) VALUES ('e-seeded', 'seeded', ?1, ?1)",
            params![T0],
        )
        .expect("seeded");
    }
    let size = atlas.log_size().await;
    let err = run_import(&atlas, &file).await.expect_err("refused");
    let import::ImportError::Uncarried(rows) = &err else {
        panic!("not a refusal of rows: {err}");
    };
    let mut ids: Vec<&str> = rows.iter().map(|u| u.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, vec!["c-ly-1", "e-seeded", "sub-p"], "{err}");
    assert!(
        err.to_string().starts_with("3 row(s) cannot be carried"),
        "{err}"
    );
    assert_eq!(atlas.log_size().await, size, "nothing was appended");
    atlas.stop().await;
}

#[tokio::test]
async fn an_import_over_other_atlas_data_refuses() {
    let atlas = Atlas::start().await;
    let (status, _) = atlas
        .post("/sections", json!({"title": "x", "created_by": "ann"}))
        .await;
    assert_eq!(status, 201);
    let file = build(false);
    // The same entity id already published live.
    let (_, sub) = atlas
        .submitted(
            "ann",
            json!({"entities": [{"operation": "create", "id": "e-dv", "name": "live"}]}),
        )
        .await;
    atlas.approve(&sub).await;
    let size = atlas.log_size().await;
    let err = run_import(&atlas, &file).await.expect_err("refused");
    assert!(
        matches!(&err, import::ImportError::Occupied(streams) if streams == &vec!["atlas/entity/e-dv".to_owned()]),
        "{err}"
    );
    assert_eq!(atlas.log_size().await, size, "nothing was appended");
    atlas.stop().await;
}
