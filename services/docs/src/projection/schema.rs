//! The read model's tables in schema `docs`.
//!
//! - `databases`: one row per live database (its incarnation, `revs_limit`, and `last_seq`:
//!   how many changes its documents have had, the database's own sequence, as Sync Gateway's
//!   `_sync:seq` counter and CouchDB's per-database `update_seq`).
//! - `kv`: Sync Gateway's key-value form, one bucket per database: a document under its id
//!   (its JSON with `_sync`), a local document under `_sync:local:<id>`. Document rows carry
//!   beside the value what `_changes` and `_all_docs` read without parsing it: `seq` (the
//!   database's sequence at the document's last change, its change order), the winning `rev`,
//!   whether it is `deleted`, and `position` (the log position of that change: the tombstone
//!   purge's horizon is a log position).
//! - `channels`: per database and channel, each document in it (or removed from it) with the
//!   sequence at which that last changed: `_changes?filter=sync_gateway/bychannel` reads it.
//! - `access`: the grants of every document's access map (user or `role:` name → channel),
//!   from which a user's `all_channels` is derived when it logs in.
//! - `role_access`: the grants of every document's role map (`role()`: user → role), from
//!   which a user's derived roles (beside its `admin_roles`) are read on each request.
//!   In both, a grant the document no longer makes keeps its row with `revoked_seq`, the
//!   sequence that revoked it (null while granted): a user's `_changes` shows the documents of
//!   the channels it lost that way once, as `removed`, and reads them as `_removed`.
//! - `old_revs`: the body of every revision that stopped being a leaf (with the channels it
//!   was in, as JSON), kept until the database is compacted (`POST /{db}/_compact`), so that
//!   `GET ?rev=` reads an older revision as CouchDB answers it before compaction. Sync Gateway
//!   keeps such bodies too (its `_sync:rev:` backups), for a while.
//! - `attachments`: Sync Gateway's `_sync:att:sha1-<base64>` entries (the key), their bytes
//!   (`data`, up to the inline size) or where they are in the attachment folder (`location`,
//!   relative to it), and the `md5-` digest clients know them by. Shared by every database and
//!   document.

/// The DDL creating every table and index in `schema`.
pub fn ddl(schema: &str) -> String {
    format!(
        r#"
CREATE TABLE {schema}.databases (
    name TEXT PRIMARY KEY,
    incarnation UUID NOT NULL,
    revs_limit INTEGER NOT NULL,
    created_seq BIGINT NOT NULL,
    sync TEXT,
    guest TEXT,
    purged_seq BIGINT NOT NULL DEFAULT 0,
    last_seq BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE {schema}.kv (
    db TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    seq BIGINT,
    rev TEXT,
    deleted BOOLEAN,
    position BIGINT,
    PRIMARY KEY (db, key)
);
CREATE INDEX kv_changes ON {schema}.kv (db, seq) WHERE seq IS NOT NULL;

CREATE TABLE {schema}.channels (
    db TEXT NOT NULL,
    channel TEXT NOT NULL,
    key TEXT NOT NULL,
    seq BIGINT NOT NULL,
    removed BOOLEAN NOT NULL,
    PRIMARY KEY (db, channel, key)
);
CREATE INDEX channels_changes ON {schema}.channels (db, channel, seq);

CREATE TABLE {schema}.access (
    db TEXT NOT NULL,
    grantee TEXT NOT NULL,
    channel TEXT NOT NULL,
    key TEXT NOT NULL,
    revoked_seq BIGINT,
    PRIMARY KEY (db, grantee, channel, key)
);
CREATE INDEX access_by_key ON {schema}.access (db, key);

CREATE TABLE {schema}.role_access (
    db TEXT NOT NULL,
    grantee TEXT NOT NULL,
    role TEXT NOT NULL,
    key TEXT NOT NULL,
    revoked_seq BIGINT,
    PRIMARY KEY (db, grantee, role, key)
);
CREATE INDEX role_access_by_key ON {schema}.role_access (db, key);

CREATE TABLE {schema}.old_revs (
    db TEXT NOT NULL,
    key TEXT NOT NULL,
    rev TEXT NOT NULL,
    body TEXT NOT NULL,
    channels TEXT NOT NULL,
    PRIMARY KEY (db, key, rev)
);

CREATE TABLE {schema}.attachments (
    key TEXT PRIMARY KEY,
    md5 TEXT NOT NULL,
    length BIGINT NOT NULL,
    data BYTEA,
    location TEXT,
    CHECK (data IS NOT NULL OR location IS NOT NULL)
);
CREATE INDEX attachments_md5 ON {schema}.attachments (md5);
"#
    )
}
