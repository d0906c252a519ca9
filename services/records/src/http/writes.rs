//! The write functions of the generic API: insertDoc, updateDoc, deleteDoc, operation (several
//! writes in one atomic append), and the Hdr and Org writes. Each builds the operation's writes
//! and hands them to [`crate::document::command::run`].

use crate::caller::Caller;
use crate::class::lookup::{self as classes, Found, clazz_of};
use crate::class::{FTP, HDR, ORG, TASK};
use crate::coded_error::CodedError;
use crate::context::Records;
use crate::document::command::{Operation, run};
use crate::document::{Action, Write};
use crate::http::body::args;
use palimpsest_web::command::CommandRequest;
use serde::Deserialize;
use serde_json::{Map, Value};

/// Most writes one `operation` may hold (one append).
const MAX_WRITES: usize = 1000;

/// `insertDoc {org?, data}`.
#[derive(Deserialize)]
struct Insert {
    org: Option<String>,
    data: Map<String, Value>,
}

/// `updateDoc {org?, data, v}`.
#[derive(Deserialize)]
struct Update {
    org: Option<String>,
    data: Map<String, Value>,
    v: i64,
}

/// `deleteDoc {org?, cl, pk}`.
#[derive(Deserialize)]
struct Delete {
    org: Option<String>,
    cl: String,
    pk: String,
}

/// One write of `operation`.
#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum OpWrite {
    Insert { data: Map<String, Value> },
    Update { data: Map<String, Value>, v: i64 },
    Delete { cl: String, pk: String },
}

/// `operation {org?, writes: [...]}`.
#[derive(Deserialize)]
struct OperationArgs {
    org: Option<String>,
    writes: Vec<OpWrite>,
}

/// What a request's write function needs besides its body.
pub struct Request<'a> {
    /// The context.
    pub records: &'a Records,
    /// Who asks.
    pub caller: &'a Caller,
    /// The request's idempotency facts.
    pub request: &'a CommandRequest,
}

impl Request<'_> {
    async fn one(&self, write: (Found, Write)) -> Result<Value, CodedError> {
        run(
            self.records,
            Operation {
                caller: self.caller,
                request: self.request,
                writes: vec![write],
                single: true,
            },
        )
        .await
    }
}

/// A document class (not one of the special classes, which have their own functions).
async fn document_class(records: &Records, clazz: &str) -> Result<Found, CodedError> {
    if [HDR, ORG, TASK, FTP].contains(&clazz) {
        return Err(CodedError::bad(format!(
            "class {clazz} has its own functions (getHdr, insertOrg, nextTask, setFTP, …)"
        )));
    }
    classes::find(records, clazz).await
}

async fn insert_write(
    records: &Records,
    org: &str,
    data: Map<String, Value>,
) -> Result<(Found, Write), CodedError> {
    let found = document_class(records, &clazz_of(&data)?).await?;
    let write = Write {
        class: found.class.clone(),
        org: org.to_owned(),
        action: Action::Insert(data),
    };
    Ok((found, write))
}

async fn update_write(
    records: &Records,
    org: &str,
    data: Map<String, Value>,
    v: i64,
) -> Result<(Found, Write), CodedError> {
    let found = document_class(records, &clazz_of(&data)?).await?;
    let write = Write {
        class: found.class.clone(),
        org: org.to_owned(),
        action: Action::Update(data, v),
    };
    Ok((found, write))
}

async fn delete_write(
    records: &Records,
    org: &str,
    cl: &str,
    pk: String,
) -> Result<(Found, Write), CodedError> {
    let found = document_class(records, cl).await?;
    check_pk(&pk)?;
    let write = Write {
        class: found.class.clone(),
        org: org.to_owned(),
        action: Action::Delete(pk),
    };
    Ok((found, write))
}

/// A pk given by a client: what this store writes (sha16, an org code, `1`).
fn check_pk(pk: &str) -> Result<(), CodedError> {
    if crate::class::is_org_code(pk) {
        Ok(())
    } else {
        Err(CodedError::bad(format!(
            "pk `{pk}` is not a key of this store"
        )))
    }
}

/// `insertDoc`.
pub async fn insert_doc(req: Request<'_>, body: &[u8]) -> Result<Value, CodedError> {
    let a: Insert = args(body)?;
    let org = req.caller.org(a.org.as_deref())?;
    req.one(insert_write(req.records, &org, a.data).await?)
        .await
}

/// `updateDoc`.
pub async fn update_doc(req: Request<'_>, body: &[u8]) -> Result<Value, CodedError> {
    let a: Update = args(body)?;
    let org = req.caller.org(a.org.as_deref())?;
    req.one(update_write(req.records, &org, a.data, a.v).await?)
        .await
}

/// `deleteDoc`.
pub async fn delete_doc(req: Request<'_>, body: &[u8]) -> Result<Value, CodedError> {
    let a: Delete = args(body)?;
    let org = req.caller.org(a.org.as_deref())?;
    req.one(delete_write(req.records, &org, &a.cl, a.pk).await?)
        .await
}

/// `operation`: several writes, one time, one append.
pub async fn operation(req: Request<'_>, body: &[u8]) -> Result<Value, CodedError> {
    let a: OperationArgs = args(body)?;
    let org = req.caller.org(a.org.as_deref())?;
    if a.writes.is_empty() || a.writes.len() > MAX_WRITES {
        return Err(CodedError::bad(format!(
            "writes must hold 1 to {MAX_WRITES} writes"
        )));
    }
    let mut writes = Vec::with_capacity(a.writes.len());
    for w in a.writes {
        writes.push(match w {
            OpWrite::Insert { data } => insert_write(req.records, &org, data).await?,
            OpWrite::Update { data, v } => update_write(req.records, &org, data, v).await?,
            OpWrite::Delete { cl, pk } => delete_write(req.records, &org, &cl, pk).await?,
        });
    }
    run(
        req.records,
        Operation {
            caller: req.caller,
            request: req.request,
            writes,
            single: false,
        },
    )
    .await
}

/// `{data}` or `{data, v}` of the Hdr and Org writes.
#[derive(Deserialize)]
struct Special {
    data: Map<String, Value>,
    v: Option<i64>,
}

fn special_data(
    mut data: Map<String, Value>,
    clazz: &str,
) -> Result<Map<String, Value>, CodedError> {
    match data.get("clazz") {
        None => {
            data.insert("clazz".into(), Value::String(clazz.to_owned()));
        }
        Some(Value::String(c)) if c == clazz => {}
        Some(_) => return Err(CodedError::bad(format!("data.clazz must be {clazz}"))),
    }
    Ok(data)
}

/// `insertHdr` / `updateHdr` (admin): the singleton, pk `1`.
pub async fn write_hdr(req: Request<'_>, body: &[u8], update: bool) -> Result<Value, CodedError> {
    req.caller.admin("writing Hdr")?;
    let a: Special = args(body)?;
    let data = special_data(a.data, HDR)?;
    let found = classes::find(req.records, HDR).await?;
    let action = special_action(data, a.v, update)?;
    req.one((
        found.clone(),
        Write {
            class: found.class,
            org: String::new(),
            action,
        },
    ))
    .await
}

/// `insertOrg` / `updateOrg` (admin): pk is the org code, `data.org`.
pub async fn write_org(req: Request<'_>, body: &[u8], update: bool) -> Result<Value, CodedError> {
    req.caller.admin("writing Org")?;
    let a: Special = args(body)?;
    let data = special_data(a.data, ORG)?;
    let org = match data.get("org") {
        Some(Value::String(code)) => req.caller.org(Some(code))?,
        _ => {
            return Err(CodedError::bad(
                "data.org (the organisation's code) is required",
            ));
        }
    };
    let found = classes::find(req.records, ORG).await?;
    let action = special_action(data, a.v, update)?;
    req.one((
        found.clone(),
        Write {
            class: found.class,
            org,
            action,
        },
    ))
    .await
}

fn special_action(
    data: Map<String, Value>,
    v: Option<i64>,
    update: bool,
) -> Result<Action, CodedError> {
    match (update, v) {
        (false, _) => Ok(Action::Insert(data)),
        (true, Some(v)) => Ok(Action::Update(data, v)),
        (true, None) => Err(CodedError::bad("v (the version read) is required")),
    }
}
