//! Documents by key, by class and by sub-collection: the queries of getDoc (and getHdr,
//! getOrg), listDocs, listOrgs and listDocsSk.

use super::page::Page;
use super::rows::{Found, fetch, rows};
use super::{COLUMNS, Param};
use crate::class::ORG;
use crate::class::lookup as classes;
use crate::coded_error::CodedError;
use crate::context::Records;
use crate::projection::schema::table;
use crate::row::collection_value_key;
use serde_json::Value;
use tokio_postgres::Row;

/// The row of document `pk` of class `clazz` in `org` (or its zombie), if it is newer than `v`.
pub async fn one(
    records: &Records,
    clazz: &str,
    org: &str,
    pk: &str,
    v: Option<i64>,
) -> Result<Option<Row>, CodedError> {
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
    Ok(found.into_iter().next())
}

/// `listDocs`: every document of class `clazz` in `org` (rows of the class, never `del` rows)
/// newer than `v`, one page of them in pk order.
pub async fn of_class(
    records: &Records,
    clazz: &str,
    org: String,
    v: Option<i64>,
    page: &Page,
) -> Result<Found, CodedError> {
    let class = classes::find(records, clazz).await?.class;
    let sql = format!(
        "SELECT {COLUMNS} FROM {} WHERE org = $1 AND ck = '' AND v > $2 AND pk > $3 \
         ORDER BY pk LIMIT $4",
        table("records", &class.clazz)
    );
    let params: Vec<Param> = vec![
        Box::new(org),
        Box::new(v.unwrap_or(-1)),
        Box::new(page.after_pk()),
        Box::new(page.limit),
    ];
    fetch(records, page, &sql, params).await
}

/// `listDocsSk`: the sub-collection `ik` of class `clazz` whose value is `val` (given in
/// clear), in `org`: plus and `del` rows newer than `v`, the newest per pk, one page of them in
/// pk order.
pub async fn of_collection(
    records: &Records,
    clazz: &str,
    org: String,
    ik: usize,
    val: &Value,
    v: Option<i64>,
    page: &Page,
) -> Result<Found, CodedError> {
    let class = classes::find(records, clazz).await?.class;
    let collection = class.collections.get(ik).ok_or_else(|| {
        CodedError::bad(format!(
            "ik {} is not a collection of {} (it has {})",
            ik,
            class.clazz,
            class.collections.len()
        ))
    })?;
    let key = collection_value_key(val)?;
    let filter = if collection.list {
        format!("$2 = ANY(\"{}\")", collection.name)
    } else {
        format!("\"{}\" = $2", collection.name)
    };
    let t = table("records", &class.clazz);
    let mut params: Vec<Param> = vec![
        Box::new(org),
        Box::new(key),
        Box::new(v.unwrap_or(-1)),
        Box::new(page.after_pk()),
    ];
    // The newest row of each pk, in pk order: from the `__sync` index for a plain collection
    // (no sort), sorted by Postgres for a list collection (its GIN index has no order).
    let sql = format!(
        "SELECT DISTINCT ON (pk) {COLUMNS} FROM {t} WHERE org = $1 AND {filter} AND v > $3 \
         AND pk > $4 ORDER BY pk, v DESC, del ASC LIMIT $5"
    );
    params.push(Box::new(page.limit));
    fetch(records, page, &sql, params).await
}

/// `listOrgs`: every organisation's document newer than `v`, one page of them in pk order.
pub async fn orgs(records: &Records, v: Option<i64>, page: &Page) -> Result<Found, CodedError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM {} WHERE ck = '' AND v > $1 AND pk > $2 ORDER BY pk LIMIT $3",
        table("records", ORG)
    );
    let params: Vec<Param> = vec![
        Box::new(v.unwrap_or(-1)),
        Box::new(page.after_pk()),
        Box::new(page.limit),
    ];
    fetch(records, page, &sql, params).await
}
