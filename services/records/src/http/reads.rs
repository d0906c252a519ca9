//! The read functions of the generic API, over the row tables: getDoc, listDocs (the class),
//! listDocsSk (a sub-collection), listDocsIdx (an index filter), and the Hdr and Org reads.
//!
//! Incremental sync: given `v`, a list answers the rows newer than `v`, one per pk — the newest,
//! and of two at the same version the document's row rather than its `del` row — and the version
//! the client stores next, `t - DELTA`, where `t` is this read's time.

use crate::caller::Caller;
use crate::class::lookup as classes;
use crate::class::{HDR, ORG};
use crate::coded_error::CodedError;
use crate::context::Records;
use crate::http::body::args;
use crate::http::listing::{COLUMNS, Listing, Pick, list, row_json, streamed};
use crate::http::page::{Page, Paging};
use crate::projection::schema::table;
use crate::row::{collection_value_key, index_filter_value};
use palimpsest_events::records::{ClassDeclaration, IndexKind, IndexValue, Scope};
use serde::Deserialize;
use serde_json::Value;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

type Param = Box<dyn ToSql + Sync + Send>;

/// Runs a row query; a class whose table is not created yet has no rows.
async fn rows(
    records: &Records,
    sql: &str,
    params: Vec<Param>,
) -> Result<Vec<tokio_postgres::Row>, CodedError> {
    let client = records.app.read.get().await?;
    let refs: Vec<&(dyn ToSql + Sync)> =
        params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
    match client.query(sql, &refs).await {
        Ok(rows) => Ok(rows),
        Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

/// A list's answer from its query: a page's rows are read whole (at most `limit`); a list
/// without `limit` starts its query here (a refused statement is still an error with its
/// status) and is read as its body is sent ([`streamed`]).
async fn answer(
    records: &Records,
    page: &Page,
    sql: &str,
    params: Vec<Param>,
    pick: Pick,
) -> Result<Listing, CodedError> {
    if page.limit.is_some() {
        let found = rows(records, sql, params).await?;
        return list(records, page, found, pick).await;
    }
    let client = records.app.read.get().await?;
    let refs = params.iter().map(|p| &**p as &(dyn ToSql + Sync));
    match client.query_raw(sql, refs).await {
        Ok(found) => Ok(streamed(records, page, client, found, pick)),
        Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => {
            list(records, page, Vec::new(), pick).await
        }
        Err(e) => Err(e.into()),
    }
}

/// `getDoc {org?, cl, pk, v?}`: the document (or its zombie), `null` when absent or not newer
/// than `v`.
#[derive(Deserialize)]
struct GetDoc {
    org: Option<String>,
    cl: String,
    pk: String,
    v: Option<i64>,
}

/// `getDoc`.
pub async fn get_doc(records: &Records, caller: &Caller, body: &[u8]) -> Result<Value, CodedError> {
    let a: GetDoc = args(body)?;
    let org = caller.org(a.org.as_deref())?;
    if !crate::class::is_org_code(&a.pk) {
        return Err(CodedError::bad(format!(
            "pk `{}` is not a key of this store",
            a.pk.escape_debug()
        )));
    }
    one(records, &a.cl, &org, &a.pk, a.v).await
}

async fn one(
    records: &Records,
    clazz: &str,
    org: &str,
    pk: &str,
    v: Option<i64>,
) -> Result<Value, CodedError> {
    let class = classes::find(records, clazz).await?.class;
    let sql = format!(
        "SELECT {COLUMNS} FROM {} WHERE org = $1 AND pk = $2 AND ck = '' AND v > $3",
        table("records", &class.clazz)
    );
    let found = rows(
        records,
        &sql,
        vec![
            Box::new(org.to_owned()),
            Box::new(pk.to_owned()),
            Box::new(v.unwrap_or(-1)),
        ],
    )
    .await?;
    match found.first() {
        Some(row) => Ok(row_json(&records.key, row, false)?["data"].take()),
        None => Ok(Value::Null),
    }
}

/// `listDocs {org?, cl, v?}`.
#[derive(Deserialize)]
struct ListDocs {
    org: Option<String>,
    cl: String,
    v: Option<i64>,
    #[serde(flatten)]
    paging: Paging,
}

/// `listDocs`: every document of the class (rows of the class, never `del` rows) newer than `v`.
pub async fn list_docs(
    records: &Records,
    caller: &Caller,
    body: &[u8],
) -> Result<Listing, CodedError> {
    let a: ListDocs = args(body)?;
    let org = caller.org(a.org.as_deref())?;
    let page = a.paging.page(records.now())?;
    let class = classes::find(records, &a.cl).await?.class;
    let sql = format!(
        "SELECT {COLUMNS} FROM {} WHERE org = $1 AND ck = '' AND v > $2 AND pk > $3 \
         ORDER BY pk LIMIT $4",
        table("records", &class.clazz)
    );
    let params: Vec<Param> = vec![
        Box::new(org),
        Box::new(a.v.unwrap_or(-1)),
        Box::new(page.after_pk()),
        Box::new(page.limit),
    ];
    answer(records, &page, &sql, params, Pick::All).await
}

/// `listDocsSk {org?, cl, ik, val, v?}`.
#[derive(Deserialize)]
struct ListDocsSk {
    org: Option<String>,
    cl: String,
    ik: usize,
    val: Value,
    v: Option<i64>,
    #[serde(flatten)]
    paging: Paging,
}

/// `listDocsSk`: the sub-collection `ik` of value `val` (given in clear): plus and `del` rows
/// newer than `v`, the newest per pk.
pub async fn list_docs_sk(
    records: &Records,
    caller: &Caller,
    body: &[u8],
) -> Result<Listing, CodedError> {
    let a: ListDocsSk = args(body)?;
    let org = caller.org(a.org.as_deref())?;
    let page = a.paging.page(records.now())?;
    let class = classes::find(records, &a.cl).await?.class;
    let collection = class.collections.get(a.ik).ok_or_else(|| {
        CodedError::bad(format!(
            "ik {} is not a collection of {} (it has {})",
            a.ik,
            class.clazz,
            class.collections.len()
        ))
    })?;
    let key = collection_value_key(&a.val)?;
    let filter = if collection.list {
        format!("$2 = ANY(\"{}\")", collection.name)
    } else {
        format!("\"{}\" = $2", collection.name)
    };
    let t = table("records", &class.clazz);
    let mut params: Vec<Param> = vec![
        Box::new(org),
        Box::new(key),
        Box::new(a.v.unwrap_or(-1)),
        Box::new(page.after_pk()),
    ];
    // The newest row of each pk, in pk order: from the `__sync` index for a plain collection
    // (no sort), sorted by Postgres for a list collection (its GIN index has no order).
    let sql = format!(
        "SELECT DISTINCT ON (pk) {COLUMNS} FROM {t} WHERE org = $1 AND {filter} AND v > $3 \
         AND pk > $4 ORDER BY pk, v DESC, del ASC LIMIT $5"
    );
    params.push(Box::new(page.limit));
    answer(records, &page, &sql, params, Pick::All).await
}

/// `listDocsIdx {org?, cl, ix, comp, val, v?}`.
#[derive(Deserialize)]
struct ListDocsIdx {
    org: Option<String>,
    cl: String,
    ix: Value,
    comp: String,
    val: Value,
    v: Option<i64>,
    #[serde(flatten)]
    paging: Paging,
}

/// `listDocsIdx`: documents whose index `ix` (its name or its number) compares with `val`.
/// `uniq`/`hash` take `=` (or `in` a list), `list` takes `in`, the others every operator.
pub async fn list_docs_idx(
    records: &Records,
    caller: &Caller,
    body: &[u8],
) -> Result<Listing, CodedError> {
    let a: ListDocsIdx = args(body)?;
    let class = classes::find(records, &a.cl).await?.class;
    let org = match index_of(&class, &a.ix)?.scope {
        Scope::G => {
            caller.admin("a G-scope index")?;
            None
        }
        Scope::O => Some(caller.org(a.org.as_deref())?),
    };
    let filter = IndexFilter {
        ix: &a.ix,
        comp: &a.comp,
        val: &a.val,
        v: a.v,
    };
    by_index_page(records, &class, org, filter, &a.paging).await
}

/// An index filter of a list: index, operator, value, and the version rows must be newer than.
pub struct IndexFilter<'a> {
    /// The index, by name or number.
    pub ix: &'a Value,
    /// `=`, `<`, `<=`, `>`, `>=` or `in`.
    pub comp: &'a str,
    /// The value (in clear; hashed here for `uniq`/`hash`).
    pub val: &'a Value,
    /// Rows newer than this only.
    pub v: Option<i64>,
}

fn index_of<'a>(
    class: &'a ClassDeclaration,
    ix: &Value,
) -> Result<&'a palimpsest_events::records::IndexDeclaration, CodedError> {
    let found = match ix {
        Value::String(name) => class.indexes.iter().find(|i| i.name == *name),
        Value::Number(n) => n.as_u64().and_then(|n| class.indexes.get(n as usize)),
        _ => None,
    };
    found.ok_or_else(|| CodedError::bad(format!("ix {ix} is not an index of {}", class.clazz)))
}

/// Documents of `class` whose index `ix` compares with `val`, in `org` (every org when `None`),
/// all of them (one unbounded page).
pub async fn by_index(
    records: &Records,
    class: &ClassDeclaration,
    org: Option<String>,
    ix: &Value,
    comp: &str,
    val: &Value,
    v: Option<i64>,
) -> Result<Value, CodedError> {
    let filter = IndexFilter { ix, comp, val, v };
    by_index_page(records, class, org, filter, &Paging::default())
        .await?
        .into_value()
        .await
}

/// Documents of `class` whose index compares as `f` says, in `org` (every org when `None`),
/// one page of them.
pub async fn by_index_page(
    records: &Records,
    class: &ClassDeclaration,
    org: Option<String>,
    f: IndexFilter<'_>,
    paging: &Paging,
) -> Result<Listing, CodedError> {
    let page = paging.page(records.now())?;
    let (comp, val) = (f.comp, f.val);
    let index = index_of(class, f.ix)?;
    let column = format!("\"{}\"", index.name);
    let (filter, value): (String, Param) = match (index.kind, comp, val) {
        (IndexKind::List, "in", _) => (
            format!("$1 = ANY({column})"),
            param(index_filter_value(index, val)?),
        ),
        (IndexKind::List, _, _) => {
            return Err(CodedError::bad(format!(
                "index {} is a list: comp must be `in`",
                index.name
            )));
        }
        (_, "in", Value::Array(items)) if items.is_empty() => {
            return Err(CodedError::bad("val of `in` must hold at least one value"));
        }
        (_, "in", Value::Array(items)) => {
            let values = items
                .iter()
                .map(|item| index_filter_value(index, item))
                .collect::<Result<Vec<_>, _>>()?;
            (format!("{column} = ANY($1)"), array_param(values)?)
        }
        (IndexKind::Uniq | IndexKind::Hash, "=", _) => (
            format!("{column} = $1"),
            param(index_filter_value(index, val)?),
        ),
        (IndexKind::Uniq | IndexKind::Hash, _, _) => {
            return Err(CodedError::bad(format!(
                "index {} holds hashes: comp must be `=` or `in`",
                index.name
            )));
        }
        (_, "=" | "<" | "<=" | ">" | ">=", _) => (
            format!("{column} {comp} $1"),
            param(index_filter_value(index, val)?),
        ),
        _ => {
            return Err(CodedError::bad(format!(
                "comp `{comp}` must be one of = < <= > >= in (in takes a list)"
            )));
        }
    };
    let (after_org, after_pk) = page.after_org_pk();
    let mut params: Vec<Param> = vec![
        value,
        Box::new(f.v.unwrap_or(-1)),
        Box::new(after_org),
        Box::new(after_pk),
        Box::new(page.limit),
    ];
    let scope = match org {
        Some(org) => {
            params.push(Box::new(org));
            "AND org = $6"
        }
        None => "",
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM {} WHERE {filter} AND ck = '' AND v > $2 {scope} \
         AND (org, pk) > ($3, $4) ORDER BY org, pk LIMIT $5",
        table("records", &class.clazz)
    );
    answer(records, &page, &sql, params, Pick::AllWithOrg).await
}

fn param(value: IndexValue) -> Param {
    match value {
        IndexValue::Text(t) => Box::new(t),
        IndexValue::Int(i) => Box::new(i),
        IndexValue::Float(f) => Box::new(f),
        IndexValue::List(l) => Box::new(l),
    }
}

fn array_param(values: Vec<IndexValue>) -> Result<Param, CodedError> {
    let mut texts = Vec::new();
    let mut ints = Vec::new();
    let mut floats = Vec::new();
    for v in values {
        match v {
            IndexValue::Text(t) => texts.push(t),
            IndexValue::Int(i) => ints.push(i),
            IndexValue::Float(f) => floats.push(f),
            IndexValue::List(_) => return Err(CodedError::bad("val of `in` holds single values")),
        }
    }
    Ok(match (texts.is_empty(), ints.is_empty()) {
        (false, _) => Box::new(texts),
        (true, false) => Box::new(ints),
        (true, true) => Box::new(floats),
    })
}

/// `getHdr {v?}`.
#[derive(Deserialize)]
struct GetHdr {
    v: Option<i64>,
}

/// `listOrgs {v?, limit?, after?}`.
#[derive(Deserialize)]
struct ListOrgs {
    v: Option<i64>,
    #[serde(flatten)]
    paging: Paging,
}

/// `getHdr`: anyone may read the service's global state.
pub async fn get_hdr(records: &Records, body: &[u8]) -> Result<Value, CodedError> {
    let a: GetHdr = args(body)?;
    one(records, HDR, "", "1", a.v).await
}

/// `getOrg {org, v?}`.
#[derive(Deserialize)]
struct GetOrg {
    org: Option<String>,
    v: Option<i64>,
}

/// `getOrg`: an organisation reads its own, the admin any.
pub async fn get_org(records: &Records, caller: &Caller, body: &[u8]) -> Result<Value, CodedError> {
    let a: GetOrg = args(body)?;
    let org = caller.org(a.org.as_deref())?;
    one(records, ORG, &org, &org, a.v).await
}

/// `listOrgs {v?}` (admin).
pub async fn list_orgs(
    records: &Records,
    caller: &Caller,
    body: &[u8],
) -> Result<Listing, CodedError> {
    caller.admin("listOrgs")?;
    let a: ListOrgs = args(body)?;
    let page = a.paging.page(records.now())?;
    let sql = format!(
        "SELECT {COLUMNS} FROM {} WHERE ck = '' AND v > $1 AND pk > $2 ORDER BY pk LIMIT $3",
        table("records", ORG)
    );
    let params: Vec<Param> = vec![
        Box::new(a.v.unwrap_or(-1)),
        Box::new(page.after_pk()),
        Box::new(page.limit),
    ];
    answer(records, &page, &sql, params, Pick::AllWithOrg).await
}

/// `listOrgsIdx {ix, comp, val, v?}`.
#[derive(Deserialize)]
struct ListOrgsIdx {
    ix: Value,
    comp: String,
    val: Value,
    v: Option<i64>,
    #[serde(flatten)]
    paging: Paging,
}

/// `listOrgsIdx` (admin).
pub async fn list_orgs_idx(
    records: &Records,
    caller: &Caller,
    body: &[u8],
) -> Result<Listing, CodedError> {
    caller.admin("listOrgsIdx")?;
    let a: ListOrgsIdx = args(body)?;
    let class = classes::find(records, ORG).await?.class;
    let filter = IndexFilter {
        ix: &a.ix,
        comp: &a.comp,
        val: &a.val,
        v: a.v,
    };
    by_index_page(records, &class, None, filter, &a.paging).await
}
