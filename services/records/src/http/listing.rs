//! A list's answer, written as JSON where its rows are opened: each row's `data` decrypted and
//! transcoded straight from msgpack ([`crate::transcode`]) on every core, the pieces each
//! thread wrote sent as the HTTP body one after another, never gathered into one buffer nor
//! one `Value` tree (a sync of 100,000 documents is 22 MB of JSON).

use crate::coded_error::CodedError;
use crate::context::Records;
use crate::http::stream::Reader;
use crate::read::column;
use crate::read::page::Page;
use crate::read::rows::{Found, StartedQuery};
use crate::seal::SiteKey;
use axum::body::{Body, Bytes};
use serde_json::{Value, json};
use std::convert::Infallible;

/// A list's answer: its rows (a page: already written as JSON, on the threads that opened
/// them; a list without `limit`: still being read), the version to store next, and where the
/// next page starts (`next`, `null` on the last page).
pub struct Listing {
    rows: Rows,
    /// The version to store next.
    v: i64,
    /// The cursor of the next page, or `null`.
    next: Value,
}

/// A list's rows: opened already (a page, bounded by `limit`), or read as they are sent.
enum Rows {
    /// The rows' JSON objects, comma-separated, in pieces (one per thread that wrote them, none
    /// empty): the inside of the `rows` array is the pieces joined by commas.
    Opened(Vec<Bytes>),
    /// Every row of a list without `limit`, read and opened while the body is sent.
    /// (Boxed: a started query is large, and the answer moves through a few functions.)
    Reading(Box<Reader>),
}

/// The start of every list's body.
pub const HEAD: &[u8] = b"{\"result\":{\"rows\":[";

impl Listing {
    /// The answer as a JSON value (for callers that look into the rows: the feed, purges).
    pub async fn into_value(self) -> Result<Value, CodedError> {
        let pieces = match self.rows {
            Rows::Opened(pieces) => pieces,
            Rows::Reading(reader) => {
                let tail = Bytes::from_static(b"]}}");
                let body = axum::body::to_bytes(reader.into_body(tail), usize::MAX)
                    .await
                    .map_err(CodedError::internal)?;
                let mut whole: Value =
                    serde_json::from_slice(&body).map_err(CodedError::internal)?;
                let rows = whole["result"]["rows"].take();
                return Ok(json!({"rows": rows, "v": self.v, "next": self.next}));
            }
        };
        let mut array = vec![b'['];
        for (i, piece) in pieces.iter().enumerate() {
            if i > 0 {
                array.push(b',');
            }
            array.extend_from_slice(piece);
        }
        array.push(b']');
        let rows: Value = serde_json::from_slice(&array).map_err(CodedError::internal)?;
        Ok(json!({"rows": rows, "v": self.v, "next": self.next}))
    }

    /// The HTTP body `{"result": {"rows": [...], "v": …, "next": …}}`, and its length in bytes
    /// when it is known before it is sent. A page's rows are opened already: its length goes
    /// out as `Content-Length`. A list without `limit` is sent as it is read ([`Reader`]),
    /// chunked: no length.
    pub fn into_body(self) -> (Option<u64>, Body) {
        let tail = Bytes::from(format!("],\"v\":{},\"next\":{}}}}}", self.v, self.next));
        let pieces = match self.rows {
            Rows::Opened(pieces) => pieces,
            Rows::Reading(reader) => return (None, reader.into_body(tail)),
        };
        let mut parts = Vec::with_capacity(2 * pieces.len() + 2);
        parts.push(Bytes::from_static(HEAD));
        for (i, piece) in pieces.into_iter().enumerate() {
            if i > 0 {
                parts.push(Bytes::from_static(b","));
            }
            parts.push(piece);
        }
        parts.push(tail);
        let length = parts.iter().map(|p| p.len() as u64).sum();
        let body = Body::from_stream(futures::stream::iter(
            parts.into_iter().map(Ok::<_, Infallible>),
        ));
        (Some(length), body)
    }
}

/// Which of a query's rows a list answers, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// Every row, in the query's order.
    All,
    /// Every row, in the query's order, each with its `org` (lists across organisations).
    AllWithOrg,
}

/// A list's answer from what its query found ([`crate::read`]): a page's rows, read whole, are
/// opened now; a list without `limit` is read and opened as its body is sent ([`Reader`]).
pub async fn answer(
    records: &Records,
    page: &Page,
    found: Found,
    pick: Pick,
) -> Result<Listing, CodedError> {
    match found {
        Found::Rows(rows) => list(records, page, rows, pick).await,
        Found::Started(query) => Ok(streamed(records, page, *query, pick)),
    }
}

/// A page's answer from the rows its query found. Rows are opened off the async threads; the
/// rows themselves are freed after the answer is built, on a blocking thread of their own.
async fn list(
    records: &Records,
    page: &Page,
    found: Vec<tokio_postgres::Row>,
    pick: Pick,
) -> Result<Listing, CodedError> {
    let with_org = pick == Pick::AllWithOrg;
    let next = page.next(&found, with_org);
    let key = records.key.clone();
    let pieces = tokio::task::spawn_blocking(move || {
        let pieces = open_rows(&key, &found.iter().collect::<Vec<_>>(), with_org);
        tokio::task::spawn_blocking(move || drop(found));
        pieces
    })
    .await
    .map_err(CodedError::internal)??;
    Ok(Listing {
        rows: Rows::Opened(pieces),
        v: page.started.saturating_sub(records.settings.delta_ms),
        next,
    })
}

/// The answer of a list without `limit` whose query has started: its rows are read, opened
/// and sent as the body goes out ([`Reader`]); there is no next page.
fn streamed(records: &Records, page: &Page, query: StartedQuery, pick: Pick) -> Listing {
    let reader = Reader::new(query, records.key.clone(), pick == Pick::AllWithOrg);
    Listing {
        rows: Rows::Reading(Box::new(reader)),
        v: page.started.saturating_sub(records.settings.delta_ms),
        next: Value::Null,
    }
}

/// Rows opening (decrypt, decode) per thread at least: below it one thread does them all.
pub const ROWS_PER_THREAD: usize = 2_000;

/// A row as lists answer it (and, its `data` alone, getDoc).
pub fn row_json(
    key: &SiteKey,
    row: &tokio_postgres::Row,
    with_org: bool,
) -> Result<Value, CodedError> {
    let pk: String = row.get("pk");
    let x: i16 = row.get("x");
    let del: i16 = row.get("del");
    let mut out = json!({"pk": pk, "v": row.get::<_, i64>("v"), "x": x, "del": del});
    if with_org {
        out["org"] = json!(row.get::<_, String>("org"));
    }
    if del == 0 {
        let data: Vec<u8> = row.get("data");
        let opened = key.open_bytes(&data).map_err(CodedError::internal)?;
        out["data"] = crate::document::decide::with_pk(opened, &pk);
    }
    Ok(out)
}

/// Appends the row as lists answer it to `out`: the bytes `serde_json` writes for
/// [`row_json`]'s value (keys in sorted order: `data del org pk v x`), with `data` opened into
/// `plain` and written straight from its msgpack ([`crate::transcode`]); data the transcoder
/// does not take (maps not in sorted order) goes the `Value` path, which sorts them.
fn write_row(
    key: &SiteKey,
    row: &tokio_postgres::Row,
    with_org: bool,
    plain: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<(), CodedError> {
    let pk: &str = row.get(column::PK);
    let del: i16 = row.get(column::DEL);
    out.push(b'{');
    if del == 0 {
        let sealed: &[u8] = row.get(column::DATA);
        key.open_plain_into(sealed, plain)
            .map_err(CodedError::internal)?;
        out.extend_from_slice(b"\"data\":");
        let start = out.len();
        if crate::transcode::data_json(plain, pk, out).is_err() {
            // Maps not in sorted order (or bytes the Value path may still read, or refuse
            // with its own error): decode, sort, write.
            out.truncate(start);
            let data: Value = rmp_serde::from_slice(plain)
                .map_err(|_| CodedError::internal(crate::seal::SealError::Open))?;
            serde_json::to_writer(&mut *out, &crate::document::decide::with_pk(data, pk))
                .map_err(CodedError::internal)?;
        }
        out.push(b',');
    }
    field(out, "del", &del)?;
    if with_org {
        out.push(b',');
        field(out, "org", &row.get::<_, &str>(column::ORG))?;
    }
    out.push(b',');
    field(out, "pk", &pk)?;
    out.push(b',');
    field(out, "v", &row.get::<_, i64>(column::V))?;
    out.push(b',');
    field(out, "x", &row.get::<_, i16>(column::X))?;
    out.push(b'}');
    Ok(())
}

/// `"name":value` into `out`.
fn field<T: serde::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    name: &str,
    value: &T,
) -> Result<(), CodedError> {
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
    serde_json::to_writer(out, value).map_err(CodedError::internal)
}

/// The rows as lists answer them, written as comma-separated JSON objects in one piece per
/// thread, opened and written on every core when there are many (decrypting and writing JSON
/// is most of a large sync's time).
pub fn open_rows(
    key: &SiteKey,
    found: &[&tokio_postgres::Row],
    with_org: bool,
) -> Result<Vec<Bytes>, CodedError> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = cores.min(found.len() / ROWS_PER_THREAD).max(1);
    let write = |rows: &[&tokio_postgres::Row]| -> Result<Bytes, CodedError> {
        let mut out = Vec::with_capacity(rows.len() * 256);
        let mut plain = Vec::with_capacity(1024);
        for (i, row) in rows.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_row(key, row, with_org, &mut plain, &mut out)?;
        }
        Ok(Bytes::from(out))
    };
    let pieces = if threads == 1 {
        vec![write(found)?]
    } else {
        let chunk = found.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = found
                .chunks(chunk)
                .map(|rows| scope.spawn(move || write(rows)))
                .collect();
            handles
                .into_iter()
                .map(|handle| {
                    handle
                        .join()
                        .map_err(|_| CodedError::internal("a thread opening rows panicked"))?
                })
                .collect::<Result<Vec<_>, _>>()
        })?
    };
    Ok(pieces.into_iter().filter(|p| !p.is_empty()).collect())
}
