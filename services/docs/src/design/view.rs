//! A view query, computed per request (decision 0032): the map function runs over the
//! documents the caller may read, the rows sort in CouchDB's collation by key then id, the
//! range or `keys` select, and a reduce (`_count`, `_sum`, `_stats` or a function) folds them,
//! grouped by `group`/`group_level`. Pure but for the engine; the route reads the documents.

use super::collate::collate;
use super::js::{Functions, JsError};
use super::{ViewSource, query_error};
use crate::http::error::CouchError;
use crate::http::params::{Params, flag, flag_or, json, number};
use axum::http::StatusCode;
use serde_json::{Value, json};
use std::cmp::Ordering;
use std::collections::HashMap;

/// A document a view runs over: its id and its JSON as the map function sees it.
pub struct Source {
    /// `_id`.
    pub id: String,
    /// The winner, with `_id`, `_rev` and `_conflicts`.
    pub doc: String,
}

/// How rows are grouped for the reduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// One row for everything selected.
    All,
    /// `group=true`: one row per key.
    Exact,
    /// `group_level=N`: one row per first N members of an array key.
    Level(usize),
}

/// What a view query asks (CouchDB's query parameters).
#[derive(Debug, Clone)]
pub struct Query {
    keys: Option<Vec<Value>>,
    start: Option<Value>,
    end: Option<Value>,
    inclusive_end: bool,
    descending: bool,
    limit: usize,
    skip: usize,
    include_docs: bool,
    reduce: Option<bool>,
    group: Group,
}

fn parse_error(reason: impl Into<String>) -> CouchError {
    CouchError::new(StatusCode::BAD_REQUEST, "query_parse_error", reason)
}

impl Query {
    /// Reads the query string (and `keys` from a POST body): a malformed value is a 400.
    pub fn parse(params: &Params, body_keys: Option<Vec<Value>>) -> Result<Query, CouchError> {
        let key = json::<Value>(params, "key")?;
        let keys = match body_keys {
            Some(keys) => Some(keys),
            None => json::<Vec<Value>>(params, "keys")?,
        };
        let start = json::<Value>(params, "startkey")?.or(json::<Value>(params, "start_key")?);
        let end = json::<Value>(params, "endkey")?.or(json::<Value>(params, "end_key")?);
        if keys.is_some() && (key.is_some() || start.is_some() || end.is_some()) {
            return Err(parse_error(
                "`keys` is incompatible with `key`, `start_key` and `end_key`",
            ));
        }
        let (keys, start, end) = match key {
            Some(key) => (Some(vec![key]), None, None),
            None => (keys, start, end),
        };
        let group_level = number(params, "group_level")?;
        let group = match (flag(params, "group")?, group_level) {
            (_, Some(level)) => Group::Level(usize::try_from(level).unwrap_or(usize::MAX)),
            (true, None) => Group::Exact,
            (false, None) => Group::All,
        };
        let reduce = params
            .contains_key("reduce")
            .then(|| flag(params, "reduce"))
            .transpose()?;
        let size = |n: Option<u64>, default| {
            n.map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX))
        };
        Ok(Query {
            keys,
            start,
            end,
            inclusive_end: flag_or(params, "inclusive_end", true)?,
            descending: flag(params, "descending")?,
            limit: size(number(params, "limit")?, usize::MAX),
            skip: size(number(params, "skip")?, 0),
            include_docs: flag(params, "include_docs")?,
            reduce,
            group,
        })
    }
}

/// A built-in reduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// How many rows.
    Count,
    /// The sum of the values (numbers, or arrays of numbers member by member).
    Sum,
    /// `{sum, count, min, max, sumsqr}` of numeric values.
    Stats,
}

impl Builtin {
    /// `_count`, `_sum` or `_stats`; another `_` name is CouchDB's 400.
    pub fn parse(name: &str) -> Result<Builtin, CouchError> {
        match name.trim() {
            "_count" => Ok(Builtin::Count),
            "_sum" => Ok(Builtin::Sum),
            "_stats" => Ok(Builtin::Stats),
            other => Err(CouchError::bad_request(format!(
                "unknown built-in reduce function: {other}"
            ))),
        }
    }

    fn reduce(self, values: &[&Value]) -> Result<Value, CouchError> {
        match self {
            Builtin::Count => Ok(json!(values.len())),
            Builtin::Sum => values
                .iter()
                .try_fold(json!(0), |sum, value| add(&sum, value)),
            Builtin::Stats => {
                let numbers = values
                    .iter()
                    .map(|v| v.as_f64().ok_or_else(|| builtin_error("_stats", v)))
                    .collect::<Result<Vec<f64>, _>>()?;
                let fold =
                    |start: f64, f: fn(f64, f64) -> f64| numbers.iter().copied().fold(start, f);
                Ok(json!({
                    "sum": number_value(fold(0.0, |a, b| a + b)),
                    "count": numbers.len(),
                    "min": number_value(fold(f64::INFINITY, f64::min)),
                    "max": number_value(fold(f64::NEG_INFINITY, f64::max)),
                    "sumsqr": number_value(fold(0.0, |a, b| a + b * b)),
                }))
            }
        }
    }
}

fn builtin_error(name: &str, value: &Value) -> CouchError {
    CouchError::new(
        StatusCode::BAD_REQUEST,
        "builtin_reduce_error",
        format!("{name} can only reduce numbers (or arrays of them for _sum), not {value}"),
    )
}

/// `a + b` as `_sum` adds: numbers, or arrays of numbers member by member.
fn add(a: &Value, b: &Value) -> Result<Value, CouchError> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => Ok(number_value(
            x.as_f64().unwrap_or(0.0) + y.as_f64().unwrap_or(0.0),
        )),
        (Value::Number(x), Value::Array(_)) if x.as_f64() == Some(0.0) => add(&json!([]), b),
        (Value::Array(x), Value::Array(y)) => {
            let longest = x.len().max(y.len());
            (0..longest)
                .map(|i| add(x.get(i).unwrap_or(&json!(0)), y.get(i).unwrap_or(&json!(0))))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
        _ => Err(builtin_error("_sum", b)),
    }
}

/// A number as CouchDB writes it: integral ones without a fraction.
fn number_value(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        json!(n as i64)
    } else {
        json!(n)
    }
}

/// One row of the map's output.
struct Row {
    id: String,
    key: Value,
    value: Value,
}

/// The map function's rows over `sources`, sorted by key then id. A function that throws on a
/// document emits nothing for it (CouchDB skips it too); one that runs out of its limits fails
/// the query.
fn map_rows(functions: &Functions, sources: &[Source]) -> Result<Vec<Row>, CouchError> {
    let mut rows = Vec::new();
    for source in sources {
        match functions.map("map", &source.doc) {
            Ok(emitted) => rows.extend(emitted.into_iter().map(|(key, value)| Row {
                id: source.id.clone(),
                key,
                value,
            })),
            Err(JsError::Threw(reason)) => {
                tracing::debug!(doc = source.id, %reason, "the map function threw: the document is skipped");
            }
            Err(other) => return Err(query_error(other)),
        }
    }
    rows.sort_by(|a, b| collate(&a.key, &b.key).then_with(|| a.id.cmp(&b.id)));
    Ok(rows)
}

/// The rows `query` selects, in its order: by `keys` (each key's rows in turn), or within the
/// range. Answers the offset of the first selected row too.
fn select<'r>(rows: &'r [Row], query: &Query) -> (usize, Vec<&'r Row>) {
    let ordered: Vec<&Row> = if query.descending {
        rows.iter().rev().collect()
    } else {
        rows.iter().collect()
    };
    if let Some(keys) = &query.keys {
        let picked = keys
            .iter()
            .flat_map(|key| {
                ordered
                    .iter()
                    .copied()
                    .filter(move |row| collate(&row.key, key).is_eq())
            })
            .collect();
        return (0, picked);
    }
    let forward = |o: Ordering| if query.descending { o.reverse() } else { o };
    let offset = ordered
        .iter()
        .take_while(|row| {
            query
                .start
                .as_ref()
                .is_some_and(|start| forward(collate(&row.key, start)).is_lt())
        })
        .count();
    let picked = ordered[offset..]
        .iter()
        .copied()
        .take_while(|row| match &query.end {
            None => true,
            Some(end) => match forward(collate(&row.key, end)) {
                Ordering::Less => true,
                Ordering::Equal => query.inclusive_end,
                Ordering::Greater => false,
            },
        })
        .collect();
    (offset, picked)
}

/// The key a row is grouped under.
fn group_key(key: &Value, group: Group) -> Value {
    match (group, key) {
        (Group::All, _) => Value::Null,
        (Group::Level(level), Value::Array(members)) => {
            Value::Array(members.iter().take(level).cloned().collect())
        }
        _ => key.clone(),
    }
}

/// A view's reduce, ready to run.
enum Reduce {
    Builtin(Builtin),
    Function,
}

fn reduce_values(
    functions: &Functions,
    reduce: &Reduce,
    rows: &[&Row],
) -> Result<Value, CouchError> {
    let values: Vec<&Value> = rows.iter().map(|row| &row.value).collect();
    match reduce {
        Reduce::Builtin(builtin) => builtin.reduce(&values),
        Reduce::Function => {
            let keys: Vec<Value> = rows.iter().map(|row| json!([row.key, row.id])).collect();
            let (keys, values) = (Value::Array(keys).to_string(), json!(values).to_string());
            functions
                .call("reduce", &[&keys, &values, "false"])
                .map_err(query_error)
        }
    }
}

/// Answers `query` on `view` over `sources` (the caller's readable documents), as CouchDB's
/// `GET /{db}/_design/{d}/_view/{v}` answers it.
pub fn answer(view: &ViewSource, sources: &[Source], query: &Query) -> Result<Value, CouchError> {
    let reduce = match (view.reduce.as_deref(), query.reduce) {
        (None, Some(true)) => {
            return Err(parse_error("Reduce is invalid for map-only views."));
        }
        (Some(_), Some(false)) | (None, _) => None,
        (Some(name), _) if name.starts_with('_') => Some(Reduce::Builtin(Builtin::parse(name)?)),
        (Some(_), _) => Some(Reduce::Function),
    };
    if reduce.is_none() && query.group != Group::All {
        return Err(parse_error("Invalid use of grouping on a map view."));
    }
    if reduce.is_some() && query.include_docs {
        return Err(parse_error("`include_docs` is invalid for reduce"));
    }
    let functions = Functions::new().map_err(query_error)?;
    functions.compile("map", &view.map).map_err(query_error)?;
    if let (Some(Reduce::Function), Some(source)) = (&reduce, &view.reduce) {
        functions.compile("reduce", source).map_err(query_error)?;
    }
    let rows = map_rows(&functions, sources)?;
    let (offset, picked) = select(&rows, query);
    let Some(reduce) = reduce else {
        let docs: HashMap<&str, &str> = if query.include_docs {
            sources
                .iter()
                .map(|s| (s.id.as_str(), s.doc.as_str()))
                .collect()
        } else {
            HashMap::new()
        };
        let out = picked
            .iter()
            .skip(query.skip)
            .take(query.limit)
            .map(|row| map_row(row, query.include_docs, &docs))
            .collect::<Vec<_>>();
        return Ok(json!({"total_rows": rows.len(), "offset": offset + query.skip, "rows": out}));
    };
    let mut groups: Vec<(Value, Vec<&Row>)> = Vec::new();
    for row in picked {
        let key = group_key(&row.key, query.group);
        match groups.last_mut() {
            Some((last, members)) if collate(last, &key).is_eq() => members.push(row),
            _ => groups.push((key, vec![row])),
        }
    }
    let out = groups
        .iter()
        .skip(query.skip)
        .take(query.limit)
        .map(|(key, members)| {
            Ok(json!({"key": key, "value": reduce_values(&functions, &reduce, members)?}))
        })
        .collect::<Result<Vec<_>, CouchError>>()?;
    Ok(json!({"rows": out}))
}

/// A map row: `id`, `key`, `value` and with `include_docs` the document (or the one the
/// value links to by `_id`, if the caller may read it; else null).
fn map_row(row: &Row, include_docs: bool, docs: &HashMap<&str, &str>) -> Value {
    let mut out = json!({"id": row.id, "key": row.key, "value": row.value});
    if include_docs {
        let linked = row
            .value
            .get("_id")
            .and_then(Value::as_str)
            .unwrap_or(&row.id);
        out["doc"] = docs
            .get(linked)
            .and_then(|doc| serde_json::from_str(doc).ok())
            .unwrap_or(Value::Null);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources() -> Vec<Source> {
        (0..6)
            .map(|n| Source {
                id: format!("d{n}"),
                doc: json!({"_id": format!("d{n}"), "n": n, "tag": if n % 2 == 0 { "a" } else { "b" }}).to_string(),
            })
            .collect()
    }

    fn view(reduce: Option<&str>) -> ViewSource {
        ViewSource {
            map: "function (doc) { emit([doc.tag, doc.n], doc.n); }".into(),
            reduce: reduce.map(str::to_owned),
        }
    }

    fn ask(pairs: &[(&str, &str)]) -> Query {
        let params: Params = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Query::parse(&params, None).expect("parses")
    }

    fn ids(answer: &Value) -> Vec<String> {
        answer["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| r["id"].as_str().unwrap_or("").to_owned())
            .collect()
    }

    #[test]
    fn map_rows_sort_by_key_and_a_range_selects_with_inclusive_end() {
        let all = answer(&view(None), &sources(), &ask(&[])).expect("answers");
        assert_eq!(ids(&all), ["d0", "d2", "d4", "d1", "d3", "d5"]);
        assert_eq!(all["total_rows"], 6);
        let range = ask(&[
            ("startkey", r#"["a",2]"#),
            ("endkey", r#"["b",3]"#),
            ("inclusive_end", "false"),
        ]);
        let some = answer(&view(None), &sources(), &range).expect("answers");
        assert_eq!(ids(&some), ["d2", "d4", "d1"]);
        assert_eq!(some["offset"], 1);
        let down = ask(&[
            ("startkey", r#"["b",3]"#),
            ("endkey", r#"["a",2]"#),
            ("descending", "true"),
            ("limit", "2"),
            ("skip", "1"),
        ]);
        assert_eq!(
            ids(&answer(&view(None), &sources(), &down).expect("answers")),
            ["d1", "d4"]
        );
        let keyed = ask(&[("keys", r#"[["b",5],["a",0]]"#)]);
        assert_eq!(
            ids(&answer(&view(None), &sources(), &keyed).expect("answers")),
            ["d5", "d0"]
        );
    }

    #[test]
    fn count_sum_and_stats_reduce_and_group() {
        let count = answer(&view(Some("_count")), &sources(), &ask(&[])).expect("answers");
        assert_eq!(count["rows"], json!([{"key": null, "value": 6}]));
        let sum = answer(
            &view(Some("_sum")),
            &sources(),
            &ask(&[("group_level", "1")]),
        )
        .expect("answers");
        assert_eq!(
            sum["rows"],
            json!([{"key": ["a"], "value": 6}, {"key": ["b"], "value": 9}])
        );
        let stats = answer(
            &view(Some("_stats")),
            &sources(),
            &ask(&[("key", r#"["b",3]"#), ("group", "true")]),
        )
        .expect("answers");
        assert_eq!(
            stats["rows"],
            json!([{"key": ["b", 3], "value": {"sum": 3, "count": 1, "min": 3, "max": 3, "sumsqr": 9}}])
        );
        let function = answer(
            &view(Some(
                "function (keys, values) { return values.length * 10; }",
            )),
            &sources(),
            &ask(&[]),
        )
        .expect("answers");
        assert_eq!(function["rows"][0]["value"], 60);
        let unreduced = answer(
            &view(Some("_count")),
            &sources(),
            &ask(&[("reduce", "false")]),
        )
        .expect("answers");
        assert_eq!(unreduced["total_rows"], 6);
    }

    #[test]
    fn misuse_is_a_query_parse_error() {
        for (reduce, pairs) in [
            (None, vec![("reduce", "true")]),
            (None, vec![("group", "true")]),
            (Some("_count"), vec![("include_docs", "true")]),
        ] {
            let refused = answer(&view(reduce), &sources(), &ask(&pairs)).expect_err("refused");
            assert_eq!(refused.error, "query_parse_error");
        }
    }

    #[test]
    fn a_map_that_throws_skips_the_document_and_a_runaway_one_fails_the_query() {
        let throws = ViewSource {
            map: "function (doc) { if (doc.n === 1) throw new Error('x'); emit(doc.n); }".into(),
            reduce: None,
        };
        assert_eq!(
            answer(&throws, &sources(), &ask(&[])).expect("answers")["total_rows"],
            5
        );
        let spins = ViewSource {
            map: "function (doc) { while (true) {} }".into(),
            reduce: None,
        };
        assert_eq!(
            answer(&spins, &sources(), &ask(&[]))
                .expect_err("fails")
                .error,
            "os_process_error"
        );
    }
}
