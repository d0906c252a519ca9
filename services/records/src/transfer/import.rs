//! importOrg: documents (or an audit dump's rows) checked and treated first, then inserted into
//! an organisation by ordinary insert operations, a chunk per operation, so the imported rows
//! are sealed, hashed and indexed like any write.

use crate::caller::Caller;
use crate::class::lookup::{Found, clazz_of, find};
use crate::class::{FTP, HDR, ORG, TASK};
use crate::coded_error::CodedError;
use crate::context::Records;
use crate::document::command::{Operation, run};
use crate::document::{Action, Write};
use crate::treatment::{self, Asked};
use palimpsest_web::command::Steps;
use serde_json::{Map, Value, json};

/// Documents inserted per operation on import.
const CHUNK: usize = 100;

/// The documents to import — `docs` as exported, or the `data` of each of an audit dump's
/// `rows` — each checked and treated (when `treat`) before anything is written.
pub async fn prepare_all(
    records: &Records,
    docs: Option<Vec<Map<String, Value>>>,
    rows: Option<Vec<Map<String, Value>>>,
    treat: bool,
) -> Result<Vec<(Found, Map<String, Value>)>, CodedError> {
    let docs = match (docs, rows) {
        (Some(docs), None) => docs,
        (None, Some(rows)) => rows_data(rows)?,
        _ => return Err(CodedError::bad("give either docs or rows")),
    };
    let asked = if treat { Asked::EveryClass } else { Asked::No };
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
    Ok(prepared)
}

/// Inserts `prepared` into `org`, an operation (step) per chunk; answers `{"imported": n}`.
pub async fn import(
    records: &Records,
    caller: &Caller,
    steps: &Steps,
    org: &str,
    prepared: &[(Found, Map<String, Value>)],
) -> Result<Value, CodedError> {
    let mut imported = 0;
    for chunk in prepared.chunks(CHUNK) {
        imported += import_chunk(records, caller, steps, org, chunk).await?;
    }
    Ok(json!({"imported": imported}))
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
) -> Result<(Found, Map<String, Value>), CodedError> {
    let cl = clazz_of(&data)?;
    if [HDR, ORG, TASK, FTP].contains(&cl.as_str()) {
        return Err(CodedError::bad(format!("class {cl} is not imported")));
    }
    let found = find(records, &cl).await?;
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
    chunk: &[(Found, Map<String, Value>)],
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
