//! exportOrg and importOrg (administrator): an organisation's documents out as clear data, and
//! back in — into the same org or re-keyed to another — through ordinary insert operations, so
//! the imported rows are sealed, hashed and indexed like any write.
//!
//! An export is the clear data (the audit the spec describes reads it as is); zombies are left
//! out, they are deletions. Re-keying is the import into another org: `org` is rewritten, `pk`
//! recomputed.

use crate::class::{FTP, HDR, ORG, TASK};
use crate::document::{Action, Write};
use crate::http::auth::Caller;
use crate::http::body::{args, clazz};
use crate::http::classes;
use crate::http::context::Records;
use crate::http::failure::Failure;
use crate::http::purges::all_classes;
use crate::http::run::{Operation, call, run};
use crate::projection::schema::table;
use palimpsest_web::command::{CommandRequest, Steps};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_postgres::error::SqlState;

/// Documents inserted per operation on import.
const CHUNK: usize = 100;

/// `exportOrg {org, cl?}`.
#[derive(Deserialize)]
struct Export {
    org: String,
    cl: Option<String>,
}

/// `exportOrg`: `{"docs": [data…]}`, every live document of the org (of class `cl` only when
/// given), decrypted, ordered by class then pk.
pub async fn export_org(records: &Records, caller: &Caller, body: &[u8]) -> Result<Value, Failure> {
    caller.admin("exportOrg")?;
    let a: Export = args(body)?;
    let org = caller.org(Some(&a.org))?;
    let classes = match &a.cl {
        Some(cl) => vec![classes::find(records, cl).await?.class],
        None => all_classes(records)
            .await?
            .into_iter()
            .filter(|c| c.clazz != HDR && c.clazz != ORG)
            .collect(),
    };
    let client = records.app.read.get().await?;
    let mut docs = Vec::new();
    for class in classes {
        let sql = format!(
            "SELECT pk, data FROM {} WHERE org = $1 AND ck = '' AND x = 0 ORDER BY pk",
            table("records", &class.clazz)
        );
        let rows = match client.query(&sql, &[&org]).await {
            Ok(rows) => rows,
            Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        for row in rows {
            let sealed: Vec<u8> = row.get(1);
            let data = records.key.open_bytes(&sealed).map_err(Failure::internal)?;
            docs.push(crate::document::decide::with_pk(
                data,
                row.get::<_, &str>(0),
            ));
        }
    }
    Ok(json!({"docs": docs}))
}

/// `importOrg {org, docs}`.
#[derive(Deserialize)]
struct Import {
    org: String,
    docs: Vec<Map<String, Value>>,
}

/// `importOrg`: inserts each exported document into `org` (its own or another: re-keyed);
/// answers how many. One call under the request's Idempotency-Key, an operation (step) per
/// chunk. A document already there stops the import with `EXISTS` (the operations before it are
/// kept; the same call retried replays them and goes on, e.g. after removing that document).
pub async fn import_org(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, Failure> {
    caller.admin("importOrg")?;
    let a: Import = args(body)?;
    let org = caller.org(Some(&a.org))?;
    call(records, caller, request, |steps| async move {
        let mut imported = 0;
        for chunk in a.docs.chunks(CHUNK) {
            imported += import_chunk(records, caller, &steps, &org, chunk).await?;
        }
        Ok(json!({"imported": imported}))
    })
    .await
}

/// Inserts one chunk of an import in one operation; answers how many documents it inserted.
async fn import_chunk(
    records: &Records,
    caller: &Caller,
    steps: &Steps,
    org: &str,
    chunk: &[Map<String, Value>],
) -> Result<usize, Failure> {
    let mut writes = Vec::with_capacity(chunk.len());
    for data in chunk {
        let cl = clazz(data)?;
        if [HDR, ORG, TASK, FTP].contains(&cl.as_str()) {
            return Err(Failure::bad(format!("class {cl} is not imported")));
        }
        let found = classes::find(records, &cl).await?;
        let mut data = data.clone();
        for technical in ["org", "v", "x", "pk"] {
            data.remove(technical);
        }
        writes.push((
            found.clone(),
            Write {
                class: found.class,
                org: org.to_owned(),
                action: Action::Insert(data),
            },
        ));
    }
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
