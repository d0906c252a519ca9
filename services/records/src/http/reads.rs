//! The read functions of the generic API: getDoc, listDocs (the class), listDocsSk (a
//! sub-collection), listDocsIdx (an index filter), and the Hdr and Org reads. Each reads its
//! arguments, checks who may read what, and answers what its query in [`crate::read`] found.

use crate::caller::Caller;
use crate::class::lookup as classes;
use crate::class::{HDR, ORG};
use crate::coded_error::CodedError;
use crate::context::Records;
use crate::http::body::args;
use crate::http::listing::{Listing, Pick, answer, row_json};
use crate::read::documents;
use crate::read::index::{self, IndexFilter, index_of};
use crate::read::page::Paging;
use palimpsest_events::records::{ClassDeclaration, Scope};
use serde::Deserialize;
use serde_json::Value;
use tokio_postgres::Row;

/// A single document's answer: its data, `null` when its query found no row.
fn document(records: &Records, found: Option<Row>) -> Result<Value, CodedError> {
    match found {
        Some(row) => Ok(row_json(&records.key, &row, false)?["data"].take()),
        None => Ok(Value::Null),
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
    let found = documents::one(records, &a.cl, &org, &a.pk, a.v).await?;
    document(records, found)
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
    let found = documents::of_class(records, &a.cl, org, a.v, &page).await?;
    answer(records, &page, found, Pick::All).await
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
    let found = documents::of_collection(records, &a.cl, org, a.ik, &a.val, a.v, &page).await?;
    answer(records, &page, found, Pick::All).await
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
/// A G-scope index lists across organisations: the administrator's only.
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
    by_index(records, &class, org, filter, &a.paging).await
}

/// One page of the documents of `class` whose index compares as `filter` says, in `org`
/// (every org when `None`), each with its `org`.
async fn by_index(
    records: &Records,
    class: &ClassDeclaration,
    org: Option<String>,
    filter: IndexFilter<'_>,
    paging: &Paging,
) -> Result<Listing, CodedError> {
    let page = paging.page(records.now())?;
    let found = index::matching(records, class, org, filter, &page).await?;
    answer(records, &page, found, Pick::AllWithOrg).await
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
    let found = documents::one(records, HDR, "", "1", a.v).await?;
    document(records, found)
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
    let found = documents::one(records, ORG, &org, &org, a.v).await?;
    document(records, found)
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
    let found = documents::orgs(records, a.v, &page).await?;
    answer(records, &page, found, Pick::AllWithOrg).await
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
    by_index(records, &class, None, filter, &a.paging).await
}
