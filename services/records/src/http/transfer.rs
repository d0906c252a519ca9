//! exportOrg and importOrg (administrator): an organisation's documents out as clear data, and
//! back in — into the same org or re-keyed to another — through ordinary insert operations, so
//! the imported rows are sealed, hashed and indexed like any write.
//!
//! An export is the clear data; zombies are left out, they are deletions. Re-keying is the
//! import into another org: `org` is rewritten, `pk` recomputed.
//!
//! The spec's audit ("sans cryptage dans la base importée, afin de pouvoir les lire en clair")
//! is `exportOrg` with `clear`: each document as the row the host holds (`org, pk, v, x, z, ck,
//! del`, collection and index columns, as `toRow` computes them) but with `data` in clear. That
//! dump is the unencrypted imported base: it exists only in the administrator's answer, never
//! in the log, the row tables, the reply store or NATS (the host must not read `data`).
//! `importOrg` takes such a dump back (`rows`) and seals it on import. With `treat`, both apply
//! the class's registered treatment ([`crate::treatment`]) to each document's data, so the
//! spec's replacement after treatment is: `exportOrg {org: A, cl, clear, treat}` → T, then
//! `purgeAllDocs {org: A, cl}`, then `importOrg {org: A, rows: T}`.

use crate::class::{FTP, HDR, ORG, TASK};
use crate::document::decide::with_pk;
use crate::document::{Action, Write};
use crate::http::auth::Caller;
use crate::http::body::{args, clazz};
use crate::http::classes;
use crate::http::context::Records;
use crate::http::failure::CodedError;
use crate::http::purges::all_classes;
use crate::http::run::{Operation, call, run};
use crate::projection::schema::table;
use crate::row;
use crate::treatment::{self, Asked};
use palimpsest_events::records::{ClassDeclaration, CollectionKey, IndexValue};
use palimpsest_web::command::{CommandRequest, Steps};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_postgres::error::SqlState;

/// Documents inserted per operation on import.
const CHUNK: usize = 100;

/// `exportOrg {org, cl?, clear?, treat?}`.
#[derive(Deserialize)]
struct Export {
    org: String,
    cl: Option<String>,
    /// Answer the audit dump: rows in the spec's row form with `data` in clear.
    clear: Option<bool>,
    /// Apply the classes' treatments.
    treat: Option<bool>,
}

/// `exportOrg`: every live document of the org (of class `cl` only when given), decrypted,
/// treated when asked, ordered by class then pk: `{"docs": [data…]}`, or with `clear`
/// `{"rows": [row…]}` (the audit dump). `treat` with a `cl` that has no treatment is a
/// BADREQUEST; without `cl` the classes without one are exported as they are.
pub async fn export_org(
    records: &Records,
    caller: &Caller,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("exportOrg")?;
    let a: Export = args(body)?;
    let org = caller.org(Some(&a.org))?;
    let clear = a.clear.unwrap_or(false);
    let asked = asked(a.treat.unwrap_or(false), a.cl.as_deref());
    let treatments = &records.settings.treatments;
    treatment::check(treatments, asked)?;
    let classes = match &a.cl {
        Some(cl) => vec![classes::find(records, cl).await?.class],
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
        org: &org,
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

/// `importOrg {org, docs | rows, treat?}`.
#[derive(Deserialize)]
struct Import {
    org: String,
    /// Documents as `exportOrg` answers them.
    docs: Option<Vec<Map<String, Value>>>,
    /// Rows of an audit dump (`exportOrg` with `clear`): their `data` is imported.
    rows: Option<Vec<Map<String, Value>>>,
    /// Apply the classes' treatments.
    treat: Option<bool>,
}

/// `importOrg`: inserts each exported document — or each clear row's `data` — into `org` (its
/// own or another: re-keyed), treated first when asked; answers how many. Every document is
/// checked and treated before anything is written. One call under the request's
/// Idempotency-Key, an operation (step) per chunk. A document already there stops the import
/// with `EXISTS` (the operations before it are kept; the same call retried replays them and
/// goes on, e.g. after removing that document).
pub async fn import_org(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("importOrg")?;
    let a: Import = args(body)?;
    let org = caller.org(Some(&a.org))?;
    let docs = match (a.docs, a.rows) {
        (Some(docs), None) => docs,
        (None, Some(rows)) => rows_data(rows)?,
        _ => return Err(CodedError::bad("give either docs or rows")),
    };
    let asked = if a.treat.unwrap_or(false) {
        Asked::EveryClass
    } else {
        Asked::No
    };
    let mut prepared = Vec::with_capacity(docs.len());
    for (i, data) in docs.into_iter().enumerate() {
        prepared.push(
            prepare(records, asked, data)
                .await
                .map_err(|f| CodedError {
                    message: format!("document {i}: {}", f.message),
                    ..f
                })?,
        );
    }
    call(records, caller, request, |steps| async move {
        let mut imported = 0;
        for chunk in prepared.chunks(CHUNK) {
            imported += import_chunk(records, caller, &steps, &org, chunk).await?;
        }
        Ok(json!({"imported": imported}))
    })
    .await
}

/// The `data` of each row of an audit dump.
fn rows_data(rows: Vec<Map<String, Value>>) -> Result<Vec<Map<String, Value>>, CodedError> {
    rows.into_iter()
        .enumerate()
        .map(|(i, mut row)| match row.remove("data") {
            Some(Value::Object(data)) => Ok(data),
            _ => Err(CodedError::bad(format!("rows[{i}].data must be an object"))),
        })
        .collect()
}

/// A document to import: its class (one that is imported), its data treated as asked and
/// without the technical properties the write sets.
async fn prepare(
    records: &Records,
    asked: Asked<'_>,
    data: Map<String, Value>,
) -> Result<(classes::Found, Map<String, Value>), CodedError> {
    let cl = clazz(&data)?;
    if [HDR, ORG, TASK, FTP].contains(&cl.as_str()) {
        return Err(CodedError::bad(format!("class {cl} is not imported")));
    }
    let found = classes::find(records, &cl).await?;
    let mut data = treatment::treat(&records.settings.treatments, asked, &cl, data)?;
    for technical in ["org", "v", "x", "pk"] {
        data.remove(technical);
    }
    Ok((found, data))
}

/// Inserts one chunk of an import in one operation; answers how many documents it inserted.
async fn import_chunk(
    records: &Records,
    caller: &Caller,
    steps: &Steps,
    org: &str,
    chunk: &[(classes::Found, Map<String, Value>)],
) -> Result<usize, CodedError> {
    let writes: Vec<_> = chunk
        .iter()
        .map(|(found, data)| {
            (
                found.clone(),
                Write {
                    class: found.class.clone(),
                    org: org.to_owned(),
                    action: Action::Insert(data.clone()),
                },
            )
        })
        .collect();
    let count = writes.len();
    // The chunk's documents are fixed by the request (its fingerprint): its place names it.
    let request = steps.next(&[]);
    run(
        records,
        Operation {
            caller,
            request: &request,
            writes,
            single: false,
        },
    )
    .await?;
    Ok(count)
}
