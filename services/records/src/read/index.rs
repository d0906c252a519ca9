//! Documents by an index: the queries of listDocsIdx and listOrgsIdx, and of purgeDlvDocs'
//! choice of documents. `uniq`/`hash` take `=` (or `in` a list), `list` takes `in`, the others
//! every operator; the value is given in clear and hashed here for `uniq`/`hash`.

use super::page::{Page, Paging};
use super::rows::{Found, fetch, rows};
use super::{COLUMNS, Param, column};
use crate::coded_error::CodedError;
use crate::context::Records;
use crate::projection::schema::table;
use crate::row::index_filter_value;
use palimpsest_events::records::{ClassDeclaration, IndexDeclaration, IndexKind, IndexValue};
use serde_json::Value;

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

/// The index of `class` that `ix` names (by name or by number).
pub fn index_of<'a>(
    class: &'a ClassDeclaration,
    ix: &Value,
) -> Result<&'a IndexDeclaration, CodedError> {
    let found = match ix {
        Value::String(name) => class.indexes.iter().find(|i| i.name == *name),
        Value::Number(n) => n.as_u64().and_then(|n| class.indexes.get(n as usize)),
        _ => None,
    };
    found.ok_or_else(|| CodedError::bad(format!("ix {ix} is not an index of {}", class.clazz)))
}

/// Documents of `class` whose index compares as `filter` says, in `org` (every org when
/// `None`), one page of them in `(org, pk)` order.
pub async fn matching(
    records: &Records,
    class: &ClassDeclaration,
    org: Option<String>,
    filter: IndexFilter<'_>,
    page: &Page,
) -> Result<Found, CodedError> {
    let (sql, params) = query(class, org, filter, page)?;
    fetch(records, page, &sql, params).await
}

/// The pks of every document of `class` in `org` (every org when `None`) whose index compares
/// as `filter` says, in `(org, pk)` order: what purgeDlvDocs purges.
pub async fn matching_pks(
    records: &Records,
    class: &ClassDeclaration,
    org: Option<String>,
    filter: IndexFilter<'_>,
) -> Result<Vec<String>, CodedError> {
    let page = Paging::default().page(records.now())?;
    let (sql, params) = query(class, org, filter, &page)?;
    let found = rows(records, &sql, params).await?;
    Ok(found
        .iter()
        .map(|row| row.get::<_, String>(column::PK))
        .collect())
}

/// The SQL and parameters of the documents of `class` matching `f`, in `org` (every org when
/// `None`), on `page`.
fn query(
    class: &ClassDeclaration,
    org: Option<String>,
    f: IndexFilter<'_>,
    page: &Page,
) -> Result<(String, Vec<Param>), CodedError> {
    let index = index_of(class, f.ix)?;
    let (filter, value) = comparison(index, f.comp, f.val)?;
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
    Ok((sql, params))
}

/// The condition on `index`'s column that `comp` and `val` ask for, and its parameter `$1`;
/// refused when the index's kind does not take the operator.
fn comparison(
    index: &IndexDeclaration,
    comp: &str,
    val: &Value,
) -> Result<(String, Param), CodedError> {
    let column = format!("\"{}\"", index.name);
    match (index.kind, comp, val) {
        (IndexKind::List, "in", _) => Ok((
            format!("$1 = ANY({column})"),
            param(index_filter_value(index, val)?),
        )),
        (IndexKind::List, _, _) => Err(CodedError::bad(format!(
            "index {} is a list: comp must be `in`",
            index.name
        ))),
        (_, "in", Value::Array(items)) if items.is_empty() => {
            Err(CodedError::bad("val of `in` must hold at least one value"))
        }
        (_, "in", Value::Array(items)) => {
            let values = items
                .iter()
                .map(|item| index_filter_value(index, item))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((format!("{column} = ANY($1)"), array_param(values)?))
        }
        (IndexKind::Uniq | IndexKind::Hash, "=", _) => Ok((
            format!("{column} = $1"),
            param(index_filter_value(index, val)?),
        )),
        (IndexKind::Uniq | IndexKind::Hash, _, _) => Err(CodedError::bad(format!(
            "index {} holds hashes: comp must be `=` or `in`",
            index.name
        ))),
        (_, "=" | "<" | "<=" | ">" | ">=", _) => Ok((
            format!("{column} {comp} $1"),
            param(index_filter_value(index, val)?),
        )),
        _ => Err(CodedError::bad(format!(
            "comp `{comp}` must be one of = < <= > >= in (in takes a list)"
        ))),
    }
}

/// A single index value as a parameter.
fn param(value: IndexValue) -> Param {
    match value {
        IndexValue::Text(t) => Box::new(t),
        IndexValue::Int(i) => Box::new(i),
        IndexValue::Float(f) => Box::new(f),
        IndexValue::List(l) => Box::new(l),
    }
}

/// The values of an `in` as one array parameter, of the type they share.
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
