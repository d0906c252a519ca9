//! The read model's tables: the spec's seven (columns, keys and indexes as the original's
//! SQLite schema, SQLite `INTEGER` as `BIGINT`, `REAL` as `DOUBLE PRECISION`, times as ISO
//! `TEXT`) and the history the original lacked.
//!
//! Added beside the spec's indexes:
//! - `idx_geometries_bbox`: GiST over `box(point(min_lng, min_lat), point(max_lng, max_lat))`
//!   of live geometries, for the map's bbox query;
//! - `idx_geometries_binding`: GIN over `binding::jsonb`, to find the geometries whose binding
//!   holds a geometry being deleted;
//! - `entity_history` / `geometry_history`: one row per version of each published row, naming
//!   the submission, section and reviewer that made it, valid over `[valid_from, valid_to)`
//!   (`valid_to` null for the current version): `/history` and `time_as_of=` read them;
//! - `publication_head`: the version of the `atlas/publication/map` stream applied, so an
//!   approval can tell whether the read model it consults is exactly as of that stream version;
//! - `users`: who may call the section workflow (the History Map's login, which the spec leaves
//!   out): roles and the SHA-256 of the current token (null once revoked), for token lookups.

/// The DDL creating every table and index in `schema`, one table (with its indexes) after the
/// other, each after the tables it references.
pub fn ddl(schema: &str) -> String {
    let tables = [
        entities(schema),
        geometries(schema),
        entity_geometries(schema),
        sections(schema),
        section_states(schema),
        section_commits(schema),
        section_submissions(schema),
        entity_history(schema),
        geometry_history(schema),
        publication_head(schema),
        users(schema),
    ];
    format!("\n{}\n", tables.join("\n\n"))
}

/// The box of a geometry's bbox columns, as the GiST indexes cover it.
const BOX_OF: &str = "box(point(bbox_min_lng, bbox_min_lat), point(bbox_max_lng, bbox_max_lat))";

/// `entities`: the published entities, `slug` unique over the whole table.
fn entities(schema: &str) -> String {
    format!(
        r#"CREATE TABLE {schema}.entities (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    slug TEXT,
    description TEXT,
    type_id TEXT NOT NULL DEFAULT 'country',
    status BIGINT DEFAULT 1,
    is_deleted BIGINT NOT NULL DEFAULT 0,
    created_at TEXT,
    updated_at TEXT
);
CREATE UNIQUE INDEX idx_entities_slug ON {schema}.entities (slug);
CREATE INDEX idx_entities_name ON {schema}.entities (name);"#
    )
}

/// `geometries`: the published geometries, with the bbox (GiST) and binding (GIN) indexes
/// the map and the approvals query.
fn geometries(schema: &str) -> String {
    format!(
        r#"CREATE TABLE {schema}.geometries (
    id TEXT PRIMARY KEY,
    type TEXT,
    is_deleted BIGINT NOT NULL DEFAULT 0,
    draw_geometry TEXT NOT NULL,
    binding TEXT,
    time_start BIGINT,
    time_end BIGINT,
    bbox_min_lng DOUBLE PRECISION,
    bbox_min_lat DOUBLE PRECISION,
    bbox_max_lng DOUBLE PRECISION,
    bbox_max_lat DOUBLE PRECISION,
    created_at TEXT,
    updated_at TEXT
);
CREATE INDEX idx_geometries_bbox ON {schema}.geometries USING gist (({BOX_OF})) WHERE is_deleted = 0;
CREATE INDEX idx_geometries_binding ON {schema}.geometries USING gin ((binding::jsonb)) WHERE binding IS NOT NULL;"#
    )
}

/// `entity_geometries`: which entities a geometry is linked to.
fn entity_geometries(schema: &str) -> String {
    format!(
        r#"CREATE TABLE {schema}.entity_geometries (
    entity_id TEXT NOT NULL REFERENCES {schema}.entities (id) ON DELETE CASCADE,
    geometry_id TEXT NOT NULL REFERENCES {schema}.geometries (id) ON DELETE CASCADE,
    created_at TEXT,
    PRIMARY KEY (entity_id, geometry_id)
);
CREATE INDEX idx_entity_geometries_geometry_id ON {schema}.entity_geometries (geometry_id);
CREATE INDEX idx_entity_geometries_entity_id ON {schema}.entity_geometries (entity_id);"#
    )
}

/// `sections`: one row per section, as created.
fn sections(schema: &str) -> String {
    format!(
        r#"CREATE TABLE {schema}.sections (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    description TEXT,
    user_id TEXT,
    created_by TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);"#
    )
}

/// `section_states`: where each section is in the workflow, and its lock.
fn section_states(schema: &str) -> String {
    format!(
        r#"CREATE TABLE {schema}.section_states (
    section_id TEXT PRIMARY KEY REFERENCES {schema}.sections (id) ON DELETE CASCADE,
    status TEXT NOT NULL DEFAULT 'editing',
    head_commit_id TEXT,
    version BIGINT NOT NULL DEFAULT 0,
    locked_by TEXT,
    locked_at TEXT,
    lock_expires_at TEXT,
    updated_at TEXT NOT NULL
);
CREATE INDEX idx_section_states_status ON {schema}.section_states (status, updated_at);"#
    )
}

/// `section_commits`: every commit and restore, numbered per section.
fn section_commits(schema: &str) -> String {
    format!(
        r#"CREATE TABLE {schema}.section_commits (
    id TEXT PRIMARY KEY,
    section_id TEXT NOT NULL REFERENCES {schema}.sections (id) ON DELETE CASCADE,
    parent_commit_id TEXT REFERENCES {schema}.section_commits (id),
    commit_no BIGINT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'manual',
    restored_from_commit_id TEXT REFERENCES {schema}.section_commits (id),
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    title TEXT,
    note TEXT,
    snapshot_json TEXT NOT NULL,
    snapshot_hash TEXT
);
CREATE UNIQUE INDEX idx_section_commits_no ON {schema}.section_commits (section_id, commit_no);
CREATE INDEX idx_section_commits_section_time ON {schema}.section_commits (section_id, created_at);"#
    )
}

/// `section_submissions`: every submission and its review.
fn section_submissions(schema: &str) -> String {
    format!(
        r#"CREATE TABLE {schema}.section_submissions (
    id TEXT PRIMARY KEY,
    section_id TEXT NOT NULL REFERENCES {schema}.sections (id) ON DELETE CASCADE,
    commit_id TEXT NOT NULL REFERENCES {schema}.section_commits (id),
    submitted_by TEXT NOT NULL,
    submitted_at TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    reviewed_by TEXT,
    reviewed_at TEXT,
    review_note TEXT,
    snapshot_json TEXT NOT NULL,
    snapshot_hash TEXT
);
CREATE INDEX idx_section_submissions_section_status ON {schema}.section_submissions (section_id, status, submitted_at);"#
    )
}

/// `entity_history`: one row per version of each published entity.
fn entity_history(schema: &str) -> String {
    format!(
        r#"CREATE TABLE {schema}.entity_history (
    entity_id TEXT NOT NULL,
    version BIGINT NOT NULL,
    position BIGINT NOT NULL,
    change TEXT NOT NULL,
    submission_id TEXT NOT NULL,
    section_id TEXT NOT NULL,
    reviewed_by TEXT,
    changed_at TEXT NOT NULL,
    valid_from TIMESTAMPTZ NOT NULL,
    valid_to TIMESTAMPTZ,
    name TEXT NOT NULL,
    slug TEXT,
    description TEXT,
    type_id TEXT NOT NULL,
    status BIGINT,
    is_deleted BIGINT NOT NULL,
    created_at TEXT,
    updated_at TEXT,
    PRIMARY KEY (entity_id, version)
);
CREATE INDEX idx_entity_history_valid ON {schema}.entity_history USING gist (tstzrange(valid_from, valid_to));"#
    )
}

/// `geometry_history`: one row per version of each published geometry, with its links.
fn geometry_history(schema: &str) -> String {
    format!(
        r#"CREATE TABLE {schema}.geometry_history (
    geometry_id TEXT NOT NULL,
    version BIGINT NOT NULL,
    position BIGINT NOT NULL,
    change TEXT NOT NULL,
    detail TEXT,
    submission_id TEXT NOT NULL,
    section_id TEXT NOT NULL,
    reviewed_by TEXT,
    changed_at TEXT NOT NULL,
    valid_from TIMESTAMPTZ NOT NULL,
    valid_to TIMESTAMPTZ,
    type TEXT,
    is_deleted BIGINT NOT NULL,
    draw_geometry TEXT NOT NULL,
    binding TEXT,
    time_start BIGINT,
    time_end BIGINT,
    bbox_min_lng DOUBLE PRECISION,
    bbox_min_lat DOUBLE PRECISION,
    bbox_max_lng DOUBLE PRECISION,
    bbox_max_lat DOUBLE PRECISION,
    created_at TEXT,
    updated_at TEXT,
    entity_ids JSONB NOT NULL,
    PRIMARY KEY (geometry_id, version)
);
CREATE INDEX idx_geometry_history_bbox_valid ON {schema}.geometry_history
    USING gist (({BOX_OF}), tstzrange(valid_from, valid_to)) WHERE is_deleted = 0;
CREATE INDEX idx_geometry_history_entities ON {schema}.geometry_history USING gin (entity_ids);"#
    )
}

/// `publication_head`: the version of the publication stream the read model applied.
fn publication_head(schema: &str) -> String {
    format!(
        r#"CREATE TABLE {schema}.publication_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
);
INSERT INTO {schema}.publication_head (id, version) VALUES (1, 0);"#
    )
}

/// `users`: who may call the section workflow, looked up by token hash.
fn users(schema: &str) -> String {
    format!(
        r#"CREATE TABLE {schema}.users (
    user_id TEXT PRIMARY KEY,
    roles TEXT[] NOT NULL,
    token_sha256 TEXT,
    issued_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE UNIQUE INDEX idx_users_token ON {schema}.users (token_sha256);"#
    )
}
