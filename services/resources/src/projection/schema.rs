//! The read model's tables: Deki's three, with the spec's columns, defaults, keys and uniques.
//!
//! MySQL types map to Postgres as: `int(4) unsigned` → `BIGINT` (an unsigned 32-bit value does
//! not fit `INTEGER`), `int(4)` → `INTEGER`, `smallint(2) unsigned` → `INTEGER`,
//! `tinyint(1) unsigned` → `SMALLINT`, `datetime` → `TIMESTAMP` (UTC, no zone, as MySQL's),
//! `varchar(255)` → `VARCHAR(255)`, `text` → `TEXT`, `mediumblob` → `BYTEA`.
//!
//! Beside the spec: `resourcerevs.resrev_is_hidden` (the column Deki added for hidden
//! revisions) and secondary indexes for the API's lookups (files of a page, properties of a
//! user or file). There are no foreign keys: a wiped resource leaves the content rows other
//! revisions may share.

/// The DDL creating the tables and indexes in `schema`.
pub fn ddl(schema: &str) -> String {
    let head = revision_columns("");
    format!(
        r#"
CREATE TABLE {schema}.resources (
    res_id BIGINT NOT NULL PRIMARY KEY,
    res_headrev INTEGER NOT NULL,
    res_type SMALLINT NOT NULL DEFAULT 0,
    res_deleted SMALLINT NOT NULL DEFAULT 0,
    res_create_timestamp TIMESTAMP NOT NULL DEFAULT '0001-01-01 00:00:00',
    res_update_timestamp TIMESTAMP NOT NULL DEFAULT '0001-01-01 00:00:00',
    res_create_user_id BIGINT NOT NULL DEFAULT 0,
    res_update_user_id BIGINT NOT NULL DEFAULT 0,
{head}
);
CREATE INDEX resources_parent_page ON {schema}.resources (resrev_parent_page_id, res_type, res_deleted);
CREATE INDEX resources_parent_user ON {schema}.resources (resrev_parent_user_id, res_type);
CREATE INDEX resources_parent ON {schema}.resources (resrev_parent_id, res_type);
CREATE INDEX resources_deleted ON {schema}.resources (res_deleted, res_type);

CREATE TABLE {schema}.resourcerevs (
    resrev_id BIGINT NOT NULL PRIMARY KEY,
    resrev_res_id BIGINT NOT NULL DEFAULT 0,
{revs},
    resrev_is_hidden SMALLINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX resid_rev ON {schema}.resourcerevs (resrev_res_id, resrev_rev);

CREATE TABLE {schema}.resourcecontents (
    rescontent_id BIGINT NOT NULL PRIMARY KEY,
    rescontent_res_id BIGINT DEFAULT NULL,
    rescontent_res_rev INTEGER DEFAULT NULL,
    rescontent_value BYTEA,
    rescontent_mimetype VARCHAR(255) NOT NULL DEFAULT '',
    rescontent_location VARCHAR(255) DEFAULT NULL,
    rescontent_size BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX rescontent_res_id ON {schema}.resourcecontents (rescontent_res_id, rescontent_res_rev);
"#,
        revs = revision_columns("0")
    )
}

/// The revision columns shared by `resources` (the head mirror) and `resourcerevs`.
fn revision_columns(rev_default: &str) -> String {
    let rev = if rev_default.is_empty() {
        "resrev_rev INTEGER NOT NULL".to_owned()
    } else {
        format!("resrev_rev INTEGER NOT NULL DEFAULT {rev_default}")
    };
    format!(
        "    {rev},
    resrev_user_id BIGINT NOT NULL DEFAULT 0,
    resrev_parent_id BIGINT NOT NULL DEFAULT 0,
    resrev_parent_page_id BIGINT DEFAULT NULL,
    resrev_parent_user_id BIGINT DEFAULT NULL,
    resrev_change_mask SMALLINT NOT NULL DEFAULT 0,
    resrev_name VARCHAR(255) NOT NULL DEFAULT '',
    resrev_change_description VARCHAR(255) DEFAULT NULL,
    resrev_timestamp TIMESTAMP NOT NULL DEFAULT '0001-01-01 00:00:00',
    resrev_content_id BIGINT NOT NULL DEFAULT 0,
    resrev_deleted SMALLINT NOT NULL DEFAULT 0,
    resrev_changeset_id BIGINT NOT NULL DEFAULT 0,
    resrev_size BIGINT NOT NULL DEFAULT 0,
    resrev_mimetype VARCHAR(255) NOT NULL DEFAULT '',
    resrev_language VARCHAR(255) DEFAULT NULL,
    resrev_meta TEXT DEFAULT NULL"
    )
}

/// The revision columns in the order [`super::rows::revision_params`] gives their values.
pub const REVISION_COLUMNS: &str = "resrev_rev, resrev_user_id, resrev_parent_id, \
    resrev_parent_page_id, resrev_parent_user_id, resrev_change_mask, resrev_name, \
    resrev_change_description, resrev_timestamp, resrev_content_id, resrev_deleted, \
    resrev_changeset_id, resrev_size, resrev_mimetype, resrev_language, resrev_meta";
