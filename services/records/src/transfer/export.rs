//! exportOrg: an organisation's live documents read from the row tables, opened with the site
//! key, treated when asked, as exported data or as the audit dump's clear rows.

use crate::class::lookup::{all_classes, find};
use crate::class::{HDR, ORG};
use crate::coded_error::CodedError;
use crate::context::Records;
use crate::document::decide::with_pk;
use crate::projection::schema::table;
use crate::row;
use crate::treatment::{self, Asked};
use palimpsest_events::records::{ClassDeclaration, CollectionKey, IndexValue};
use serde_json::{Map, Value, json};
use tokio_postgres::error::SqlState;

/// `exportOrg`: every live document of the org (of class `cl` only when given), decrypted,
/// treated when asked, ordered by class then pk: `{"docs": [data…]}`, or with `clear`
/// `{"rows": [row…]}` (the audit dump). `treat` with a `cl` that has no treatment is a
/// BADREQUEST; without `cl` the classes without one are exported as they are.
pub async fn export(
    records: &Records,
    org: &str,
    cl: Option<&str>,
    clear: bool,
    treat: bool,
) -> Result<Value, CodedError> {
    let asked = asked(treat, cl);
    let treatments = &records.settings.treatments;
    treatment::check(treatments, asked)?;
    let classes = match cl {
        Some(cl) => vec![find(records, cl).await?.class],
        None => all_classes(records)
            .await?
            .into_iter()
            .filter(|c| c.clazz != HDR && c.clazz != ORG)
            .collect(),
    };
    let exporting = Exporting {
        treatments,
        asked,
        clear,
        org,
    };
    let client = records.app.read.get().await?;
    let mut out = Vec::new();
    for class in classes {
        let sql = format!(
            "SELECT pk, v, data FROM {} WHERE org = $1 AND ck = '' AND x = 0 ORDER BY pk",
            table("records", &class.clazz)
        );
        let rows = match client.query(&sql, &[&org]).await {
            Ok(rows) => rows,
            Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        for stored in rows {
            let sealed: Vec<u8> = stored.get(2);
            let data = records
                .key
                .open_bytes(&sealed)
                .map_err(CodedError::internal)?;
            out.push(exporting.document(&class, stored.get(0), stored.get(1), data)?);
        }
    }
    Ok(if clear {
        json!({ "rows": out })
    } else {
        json!({ "docs": out })
    })
}

/// How an export writes each document out.
struct Exporting<'a> {
    treatments: &'a treatment::Treatments,
    asked: Asked<'a>,
    clear: bool,
    org: &'a str,
}

impl Exporting<'_> {
    /// The stored document `pk` of `class` at version `v`, its `data` opened: as exported data
    /// (with `pk`) or, for the audit dump, as its clear row; treated first when asked.
    fn document(
        &self,
        class: &ClassDeclaration,
        pk: &str,
        v: i64,
        data: Value,
    ) -> Result<Value, CodedError> {
        let Value::Object(data) = data else {
            return Err(CodedError::internal(format!(
                "{}/{pk}: data is not an object",
                class.clazz
            )));
        };
        if self.asked == Asked::No && !self.clear {
            return Ok(with_pk(Value::Object(data), pk));
        }
        let data = treatment::treat(self.treatments, self.asked, &class.clazz, data)?;
        // A treatment may change the key or indexed properties: the row follows the new data.
        let shape = row::shape(class, self.org, &data)
            .map_err(|e| CodedError::bad(format!("{} {pk}: {e}", class.clazz)))?;
        Ok(if self.clear {
            clear_row(self.org, v, shape, data)
        } else {
            with_pk(Value::Object(data), &shape.pk)
        })
    }
}

/// What a call's `treat` (and the class it names, if any) asks for.
fn asked(treat: bool, cl: Option<&str>) -> Asked<'_> {
    match (treat, cl) {
        (false, _) => Asked::No,
        (true, Some(cl)) => Asked::Class(cl),
        (true, None) => Asked::EveryClass,
    }
}

/// A live document's row as the host holds it, `data` in clear: the audit dump's row.
fn clear_row(org: &str, v: i64, shape: row::Shape, data: Map<String, Value>) -> Value {
    let mut out = Map::new();
    out.insert("org".into(), json!(org));
    out.insert("pk".into(), json!(shape.pk));
    out.insert("v".into(), json!(v));
    out.insert("x".into(), json!(0));
    out.insert("z".into(), Value::Null);
    out.insert("ck".into(), json!(""));
    out.insert("del".into(), json!(0));
    for (name, key) in shape.collections {
        out.insert(
            name,
            match key {
                CollectionKey::One(hash) => json!(hash),
                CollectionKey::Many(hashes) => json!(hashes),
            },
        );
    }
    for (name, value) in shape.indexes {
        out.insert(name, index_column(value));
    }
    out.insert("data".into(), Value::Object(data));
    Value::Object(out)
}

/// An index column's value as its SQL column holds it.
fn index_column(value: IndexValue) -> Value {
    match value {
        IndexValue::Text(s) => json!(s),
        IndexValue::Int(n) => json!(n),
        IndexValue::Float(f) => json!(f),
        IndexValue::List(l) => json!(l),
    }
}
