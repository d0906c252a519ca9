//! The row tables' DDL: the SQL provider's shape, per class
//! `org, pk, v, x, z, ck, del, <collections>, <indexes>, data`, with the indexes sync reads,
//! index filters and purges need; plus `FTP(org, path, p)`, `Task(org, k0, i0, data)` and the
//! context's own `classes` and `tokens`.
//!
//! Technical columns: `x` is 0 for a live row, 1 for a zombie, 2 for a `del` row; `z` is the
//! version at which a zombie or `del` row became purgeable; `ck` tells a document's rows apart
//! (`''` for its row, the version for a `del` row); `del` is 1 on `del` rows.

use crate::class::{HDR, ORG, builtin};
use palimpsest_events::records::{ClassDeclaration, IndexKind, Scope};

/// The fixed tables, created with the schema.
pub fn ddl(s: &str) -> String {
    let mut sql = format!(
        "CREATE TABLE {s}.classes (clazz text PRIMARY KEY, declaration jsonb NOT NULL);
         CREATE TABLE {s}.tokens (hash text PRIMARY KEY, org text NOT NULL);
         CREATE TABLE {s}.\"FTP\" (org text NOT NULL, path text NOT NULL, p bigint NOT NULL, PRIMARY KEY (org, path));
         CREATE INDEX \"FTP__p\" ON {s}.\"FTP\" (p);
         CREATE TABLE {s}.\"Task\" (org text NOT NULL, k0 text NOT NULL, i0 text NOT NULL, data bytea NOT NULL, PRIMARY KEY (org, k0));
         CREATE INDEX \"Task__i0\" ON {s}.\"Task\" (i0);\n"
    );
    for clazz in [HDR, ORG] {
        if let Some(class) = builtin(clazz) {
            sql.push_str(&class_ddl(s, &class));
        }
    }
    sql
}

/// The SQL type of a collection column.
fn collection_type(list: bool) -> &'static str {
    if list { "text[]" } else { "text" }
}

/// The SQL type of an index column.
fn index_type(kind: IndexKind) -> &'static str {
    match kind {
        IndexKind::Uniq | IndexKind::Hash | IndexKind::String => "text",
        IndexKind::Int => "bigint",
        IndexKind::Float => "double precision",
        IndexKind::List => "text[]",
    }
}

/// The quoted table of a class: `schema."Article"` (names are checked when declared).
pub fn table(s: &str, clazz: &str) -> String {
    format!("{s}.\"{clazz}\"")
}

/// Creates a class's table (or adds the columns a later declaration brings, for `Org`).
pub fn class_ddl(s: &str, class: &ClassDeclaration) -> String {
    let c = &class.clazz;
    let t = table(s, c);
    let mut columns = String::from(
        "org text NOT NULL, pk text NOT NULL, v bigint NOT NULL, x smallint NOT NULL, z bigint, \
         ck text NOT NULL DEFAULT '', del smallint NOT NULL DEFAULT 0",
    );
    let mut extra = String::new();
    let mut indexes = format!(
        "CREATE INDEX IF NOT EXISTS \"{c}__v\" ON {t} (org, v);
         CREATE INDEX IF NOT EXISTS \"{c}__z\" ON {t} (z) WHERE z IS NOT NULL;\n"
    );
    for col in &class.collections {
        let (n, ty) = (&col.name, collection_type(col.list));
        columns.push_str(&format!(", \"{n}\" {ty}"));
        extra.push_str(&format!(
            "ALTER TABLE {t} ADD COLUMN IF NOT EXISTS \"{n}\" {ty};\n"
        ));
        indexes.push_str(&if col.list {
            format!("CREATE INDEX IF NOT EXISTS \"{c}__{n}\" ON {t} USING gin (\"{n}\");\n")
        } else {
            // `__sync` hands a sync (`DISTINCT ON (pk) … ORDER BY pk, v DESC, del`) its rows in
            // that order: no sort of the whole collection, and a page reads only its rows
            // (measured: 100,000 rows 320 ms against 375–525 ms sorted; a page of 1,000 15 ms
            // against a sort of them all; it costs each row written ~60% more insert time).
            format!(
                "CREATE INDEX IF NOT EXISTS \"{c}__{n}\" ON {t} (org, \"{n}\", v);
                 CREATE INDEX IF NOT EXISTS \"{c}__{n}__sync\" ON {t} (org, \"{n}\", pk, v DESC, del);\n"
            )
        });
    }
    for ix in &class.indexes {
        let (n, ty) = (&ix.name, index_type(ix.kind));
        columns.push_str(&format!(", \"{n}\" {ty}"));
        extra.push_str(&format!(
            "ALTER TABLE {t} ADD COLUMN IF NOT EXISTS \"{n}\" {ty};\n"
        ));
        indexes.push_str(&match (ix.kind, ix.scope) {
            (IndexKind::List, _) => {
                format!("CREATE INDEX IF NOT EXISTS \"{c}__{n}\" ON {t} USING gin (\"{n}\");\n")
            }
            (_, Scope::G) => format!("CREATE INDEX IF NOT EXISTS \"{c}__{n}\" ON {t} (\"{n}\");\n"),
            (_, Scope::O) => {
                format!("CREATE INDEX IF NOT EXISTS \"{c}__{n}\" ON {t} (org, \"{n}\");\n")
            }
        });
    }
    format!(
        "CREATE TABLE IF NOT EXISTS {t} ({columns}, data bytea NOT NULL, PRIMARY KEY (org, pk, ck));\n{extra}{indexes}"
    )
}
