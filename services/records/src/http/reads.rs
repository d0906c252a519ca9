//! The read functions of the generic API, over the row tables: getDoc, listDocs (the class),
//! listDocsSk (a sub-collection), listDocsIdx (an index filter), and the Hdr and Org reads.
//!
//! Incremental sync: given `v`, a list answers the rows newer than `v`, one per pk — the newest,
//! and of two at the same version the document's row rather than its `del` row — and the version
//! the client stores next, `t - DELTA`, where `t` is this read's time.

use crate::class::{HDR, ORG};
use crate::http::auth::Caller;
use crate::http::body::args;
use crate::http::classes;
use crate::http::context::Records;
use crate::http::failure::Failure;
use crate::http::page::{Page, Paging};
use crate::projection::schema::table;
use crate::row::{collection_value_key, index_filter_value};
use crate::seal::SiteKey;
use palimpsest_events::records::{ClassDeclaration, IndexKind, IndexValue, Scope};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

type Param = Box<dyn ToSql + Sync + Send>;

/// A row as lists answer it.
fn row_json(key: &SiteKey, row: &tokio_postgres::Row, with_org: bool) -> Result<Value, Failure> {
    let pk: String = row.get("pk");
    let x: i16 = row.get("x");
    let del: i16 = row.get("del");
    let mut out = json!({"pk": pk, "v": row.get::<_, i64>("v"), "x": x, "del": del});
    if with_org {
        out["org"] = json!(row.get::<_, String>("org"));
    }
    if del == 0 {
        let data: Vec<u8> = row.get("data");
        let opened = key.open_bytes(&data).map_err(Failure::internal)?;
        out["data"] = crate::document::decide::with_pk(opened, &pk);
    }
    Ok(out)
}

/// Runs a row query; a class whose table is not created yet has no rows.
async fn rows(
    records: &Records,
    sql: &str,
    params: Vec<Param>,
) -> Result<Vec<tokio_postgres::Row>, Failure> {
    let client = records.app.read.get().await?;
    let refs: Vec<&(dyn ToSql + Sync)> =
        params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
    match client.query(sql, &refs).await {
        Ok(rows) => Ok(rows),
        Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

const COLUMNS: &str = "org, pk, v, x, del, data";

/// A list's answer: its rows (already written as JSON, on the threads that opened them), the
/// version to store next, and where the next page starts (`next`, `null` on the last page).
pub struct Listing {
    /// The rows' JSON objects, comma-separated (the inside of the `rows` array).
    rows: Vec<u8>,
    /// The version to store next.
    v: i64,
    /// The cursor of the next page, or `null`.
    next: Value,
}

impl Listing {
    /// The answer as a JSON value (for callers that look into the rows: the feed, purges).
    pub fn into_value(self) -> Result<Value, Failure> {
        let mut array = Vec::with_capacity(self.rows.len() + 2);
        array.push(b'[');
        array.extend_from_slice(&self.rows);
        array.push(b']');
        let rows: Value = serde_json::from_slice(&array).map_err(Failure::internal)?;
        Ok(json!({"rows": rows, "v": self.v, "next": self.next}))
    }

    /// The HTTP body `{"result": {"rows": [...], "v": …, "next": …}}`, the rows copied as
    /// written (a large sync never becomes one `Value` tree walked again to serialise).
    pub fn into_body(self) -> Vec<u8> {
        let tail = format!("],\"v\":{},\"next\":{}}}}}", self.v, self.next);
        let mut body = Vec::with_capacity(self.rows.len() + tail.len() + 20);
        body.extend_from_slice(b"{\"result\":{\"rows\":[");
        body.extend_from_slice(&self.rows);
        body.extend_from_slice(tail.as_bytes());
        body
    }
}

/// A list's answer from the rows its query found. Rows are opened off the async threads.
async fn list(
    records: &Records,
    page: &Page,
    found: Vec<tokio_postgres::Row>,
    with_org: bool,
) -> Result<Listing, Failure> {
    let next = page.next(&found, with_org);
    let key = records.key.clone();
    let rows = tokio::task::spawn_blocking(move || open_rows(&key, &found, with_org))
        .await
        .map_err(Failure::internal)??;
    Ok(Listing {
        rows,
        v: page.started.saturating_sub(records.settings.delta_ms),
        next,
    })
}

/// Rows opening (decrypt, decode) per thread at least: below it one thread does them all.
const ROWS_PER_THREAD: usize = 2_000;

/// Appends the row as lists answer it to `out`: the bytes `serde_json` writes for
/// [`row_json`]'s value (keys in sorted order: `data del org pk v x`), with `data` written
/// straight from its msgpack ([`crate::transcode`]); data the transcoder does not take (maps
/// not in sorted order) goes the `Value` path, which sorts them.
fn write_row(
    key: &SiteKey,
    row: &tokio_postgres::Row,
    with_org: bool,
    out: &mut Vec<u8>,
) -> Result<(), Failure> {
    let pk: &str = row.get("pk");
    let del: i16 = row.get("del");
    out.push(b'{');
    if del == 0 {
        let sealed: &[u8] = row.get("data");
        let plain = key.open_plain(sealed).map_err(Failure::internal)?;
        out.extend_from_slice(b"\"data\":");
        let start = out.len();
        if crate::transcode::data_json(&plain, pk, out).is_err() {
            // Maps not in sorted order (or bytes the Value path may still read, or refuse
            // with its own error): decode, sort, write.
            out.truncate(start);
            let data: Value = rmp_serde::from_slice(&plain)
                .map_err(|_| Failure::internal(crate::seal::SealError::Open))?;
            serde_json::to_writer(&mut *out, &crate::document::decide::with_pk(data, pk))
                .map_err(Failure::internal)?;
        }
        out.push(b',');
    }
    field(out, "del", &del)?;
    if with_org {
        out.push(b',');
        field(out, "org", &row.get::<_, &str>("org"))?;
    }
    out.push(b',');
    field(out, "pk", &pk)?;
    out.push(b',');
    field(out, "v", &row.get::<_, i64>("v"))?;
    out.push(b',');
    field(out, "x", &row.get::<_, i16>("x"))?;
    out.push(b'}');
    Ok(())
}

/// `"name":value` into `out`.
fn field<T: serde::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    name: &str,
    value: &T,
) -> Result<(), Failure> {
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
    serde_json::to_writer(out, value).map_err(Failure::internal)
}

/// The rows as lists answer them, written as comma-separated JSON objects, opened and written
/// on every core when there are many (decrypting and writing JSON is most of a large sync's
/// time).
fn open_rows(
    key: &SiteKey,
    found: &[tokio_postgres::Row],
    with_org: bool,
) -> Result<Vec<u8>, Failure> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = cores.min(found.len() / ROWS_PER_THREAD).max(1);
    let write = |rows: &[tokio_postgres::Row]| -> Result<Vec<u8>, Failure> {
        let mut out = Vec::with_capacity(rows.len() * 256);
        for (i, row) in rows.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_row(key, row, with_org, &mut out)?;
        }
        Ok(out)
    };
    if threads == 1 {
        return write(found);
    }
    let chunk = found.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = found
            .chunks(chunk)
            .map(|rows| scope.spawn(move || write(rows)))
            .collect();
        let mut out: Vec<u8> = Vec::new();
        for handle in handles {
            let written = handle
                .join()
                .map_err(|_| Failure::internal("a thread opening rows panicked"))??;
            if !out.is_empty() && !written.is_empty() {
                out.push(b',');
            }
            out.extend_from_slice(&written);
        }
        Ok(out)
    })
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
pub async fn get_doc(records: &Records, caller: &Caller, body: &[u8]) -> Result<Value, Failure> {
    let a: GetDoc = args(body)?;
    let org = caller.org(a.org.as_deref())?;
    if !crate::class::is_org_code(&a.pk) {
        return Err(Failure::bad(format!(
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
) -> Result<Value, Failure> {
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
) -> Result<Listing, Failure> {
    let a: ListDocs = args(body)?;
    let org = caller.org(a.org.as_deref())?;
    let page = a.paging.page(records.now())?;
    let class = classes::find(records, &a.cl).await?.class;
    let sql = format!(
        "SELECT {COLUMNS} FROM {} WHERE org = $1 AND ck = '' AND v > $2 AND pk > $3 \
         ORDER BY pk LIMIT $4",
        table("records", &class.clazz)
    );
    let found = rows(
        records,
        &sql,
        vec![
            Box::new(org),
            Box::new(a.v.unwrap_or(-1)),
            Box::new(page.after_pk()),
            Box::new(page.limit),
        ],
    )
    .await?;
    list(records, &page, found, false).await
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
) -> Result<Listing, Failure> {
    let a: ListDocsSk = args(body)?;
    let org = caller.org(a.org.as_deref())?;
    let page = a.paging.page(records.now())?;
    let class = classes::find(records, &a.cl).await?.class;
    let collection = class.collections.get(a.ik).ok_or_else(|| {
        Failure::bad(format!(
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
    let sql = format!(
        "SELECT DISTINCT ON (pk) {COLUMNS} FROM {} WHERE org = $1 AND {filter} AND v > $3 \
         AND pk > $4 ORDER BY pk, v DESC, del ASC LIMIT $5",
        table("records", &class.clazz)
    );
    let found = rows(
        records,
        &sql,
        vec![
            Box::new(org),
            Box::new(key),
            Box::new(a.v.unwrap_or(-1)),
            Box::new(page.after_pk()),
            Box::new(page.limit),
        ],
    )
    .await?;
    list(records, &page, found, false).await
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
) -> Result<Listing, Failure> {
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
) -> Result<&'a palimpsest_events::records::IndexDeclaration, Failure> {
    let found = match ix {
        Value::String(name) => class.indexes.iter().find(|i| i.name == *name),
        Value::Number(n) => n.as_u64().and_then(|n| class.indexes.get(n as usize)),
        _ => None,
    };
    found.ok_or_else(|| Failure::bad(format!("ix {ix} is not an index of {}", class.clazz)))
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
) -> Result<Value, Failure> {
    let filter = IndexFilter { ix, comp, val, v };
    by_index_page(records, class, org, filter, &Paging::default())
        .await?
        .into_value()
}

/// Documents of `class` whose index compares as `f` says, in `org` (every org when `None`),
/// one page of them.
pub async fn by_index_page(
    records: &Records,
    class: &ClassDeclaration,
    org: Option<String>,
    f: IndexFilter<'_>,
    paging: &Paging,
) -> Result<Listing, Failure> {
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
            return Err(Failure::bad(format!(
                "index {} is a list: comp must be `in`",
                index.name
            )));
        }
        (_, "in", Value::Array(items)) if items.is_empty() => {
            return Err(Failure::bad("val of `in` must hold at least one value"));
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
            return Err(Failure::bad(format!(
                "index {} holds hashes: comp must be `=` or `in`",
                index.name
            )));
        }
        (_, "=" | "<" | "<=" | ">" | ">=", _) => (
            format!("{column} {comp} $1"),
            param(index_filter_value(index, val)?),
        ),
        _ => {
            return Err(Failure::bad(format!(
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
    let found = rows(records, &sql, params).await?;
    list(records, &page, found, true).await
}

fn param(value: IndexValue) -> Param {
    match value {
        IndexValue::Text(t) => Box::new(t),
        IndexValue::Int(i) => Box::new(i),
        IndexValue::Float(f) => Box::new(f),
        IndexValue::List(l) => Box::new(l),
    }
}

fn array_param(values: Vec<IndexValue>) -> Result<Param, Failure> {
    let mut texts = Vec::new();
    let mut ints = Vec::new();
    let mut floats = Vec::new();
    for v in values {
        match v {
            IndexValue::Text(t) => texts.push(t),
            IndexValue::Int(i) => ints.push(i),
            IndexValue::Float(f) => floats.push(f),
            IndexValue::List(_) => return Err(Failure::bad("val of `in` holds single values")),
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
pub async fn get_hdr(records: &Records, body: &[u8]) -> Result<Value, Failure> {
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
pub async fn get_org(records: &Records, caller: &Caller, body: &[u8]) -> Result<Value, Failure> {
    let a: GetOrg = args(body)?;
    let org = caller.org(a.org.as_deref())?;
    one(records, ORG, &org, &org, a.v).await
}

/// `listOrgs {v?}` (admin).
pub async fn list_orgs(
    records: &Records,
    caller: &Caller,
    body: &[u8],
) -> Result<Listing, Failure> {
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
    let found = rows(records, &sql, params).await?;
    list(records, &page, found, true).await
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
) -> Result<Listing, Failure> {
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
