//! A list's answer, written as JSON where its rows are opened: each row's `data` decrypted and
//! transcoded straight from msgpack ([`crate::transcode`]) on every core, the pieces each
//! thread wrote sent as the HTTP body one after another, never gathered into one buffer nor
//! one `Value` tree (a sync of 100,000 documents is 22 MB of JSON).

use crate::http::context::Records;
use crate::http::failure::Failure;
use crate::http::newest::newest_per_pk;
use crate::http::page::Page;
use crate::seal::SiteKey;
use axum::body::{Body, Bytes};
use serde_json::{Value, json};
use std::convert::Infallible;

/// The columns every list selects, in this order: rows are read by position ([`column`]),
/// since finding a column by name costs a search per value, 600,000 of them in a large sync.
pub const COLUMNS: &str = "org, pk, v, x, del, data";

/// The positions of [`COLUMNS`].
pub mod column {
    /// `org`.
    pub const ORG: usize = 0;
    /// `pk`.
    pub const PK: usize = 1;
    /// `v`.
    pub const V: usize = 2;
    /// `x`.
    pub const X: usize = 3;
    /// `del`.
    pub const DEL: usize = 4;
    /// `data`.
    pub const DATA: usize = 5;
}

/// A list's answer: its rows (already written as JSON, on the threads that opened them), the
/// version to store next, and where the next page starts (`next`, `null` on the last page).
pub struct Listing {
    /// The rows' JSON objects, comma-separated, in pieces (one per thread that wrote them, none
    /// empty): the inside of the `rows` array is the pieces joined by commas.
    pieces: Vec<Bytes>,
    /// The version to store next.
    v: i64,
    /// The cursor of the next page, or `null`.
    next: Value,
}

impl Listing {
    /// The answer as a JSON value (for callers that look into the rows: the feed, purges).
    pub fn into_value(self) -> Result<Value, Failure> {
        let mut array = vec![b'['];
        for (i, piece) in self.pieces.iter().enumerate() {
            if i > 0 {
                array.push(b',');
            }
            array.extend_from_slice(piece);
        }
        array.push(b']');
        let rows: Value = serde_json::from_slice(&array).map_err(Failure::internal)?;
        Ok(json!({"rows": rows, "v": self.v, "next": self.next}))
    }

    /// The HTTP body `{"result": {"rows": [...], "v": …, "next": …}}`, its rows sent as the
    /// pieces were written, and its length in bytes (for `Content-Length`: the client learns
    /// the size up front, and the body goes out unchunked).
    pub fn into_body(self) -> (u64, Body) {
        let tail = format!("],\"v\":{},\"next\":{}}}}}", self.v, self.next);
        let mut parts = Vec::with_capacity(2 * self.pieces.len() + 2);
        parts.push(Bytes::from_static(b"{\"result\":{\"rows\":["));
        for (i, piece) in self.pieces.into_iter().enumerate() {
            if i > 0 {
                parts.push(Bytes::from_static(b","));
            }
            parts.push(piece);
        }
        parts.push(Bytes::from(tail));
        let length = parts.iter().map(|p| p.len() as u64).sum();
        let body = Body::from_stream(futures::stream::iter(
            parts.into_iter().map(Ok::<_, Infallible>),
        ));
        (length, body)
    }
}

/// Which of a query's rows a list answers, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// Every row, in the query's order.
    All,
    /// Every row, in the query's order, each with its `org` (lists across organisations).
    AllWithOrg,
    /// The newest row of each pk ([`newest_per_pk`]), for a whole sync read in heap order.
    NewestPerPk,
}

/// A list's answer from the rows its query found. Rows are picked and opened off the async
/// threads; the rows themselves are freed after the answer is built, on a blocking thread of
/// their own (100,000 of them take ~10 ms to free, which the client need not wait for).
pub async fn list(
    records: &Records,
    page: &Page,
    found: Vec<tokio_postgres::Row>,
    pick: Pick,
) -> Result<Listing, Failure> {
    let with_org = pick == Pick::AllWithOrg;
    let next = page.next(&found, with_org);
    let key = records.key.clone();
    let pieces = tokio::task::spawn_blocking(move || {
        let pieces = match pick {
            Pick::NewestPerPk => open_rows(&key, &newest_per_pk(&found), with_org),
            Pick::All | Pick::AllWithOrg => {
                open_rows(&key, &found.iter().collect::<Vec<_>>(), with_org)
            }
        };
        tokio::task::spawn_blocking(move || drop(found));
        pieces
    })
    .await
    .map_err(Failure::internal)??;
    Ok(Listing {
        pieces,
        v: page.started.saturating_sub(records.settings.delta_ms),
        next,
    })
}

/// Rows opening (decrypt, decode) per thread at least: below it one thread does them all.
const ROWS_PER_THREAD: usize = 2_000;

/// A row as lists answer it.
pub fn row_json(
    key: &SiteKey,
    row: &tokio_postgres::Row,
    with_org: bool,
) -> Result<Value, Failure> {
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
) -> Result<(), Failure> {
    let pk: &str = row.get(column::PK);
    let del: i16 = row.get(column::DEL);
    out.push(b'{');
    if del == 0 {
        let sealed: &[u8] = row.get(column::DATA);
        key.open_plain_into(sealed, plain)
            .map_err(Failure::internal)?;
        out.extend_from_slice(b"\"data\":");
        let start = out.len();
        if crate::transcode::data_json(plain, pk, out).is_err() {
            // Maps not in sorted order (or bytes the Value path may still read, or refuse
            // with its own error): decode, sort, write.
            out.truncate(start);
            let data: Value = rmp_serde::from_slice(plain)
                .map_err(|_| Failure::internal(crate::seal::SealError::Open))?;
            serde_json::to_writer(&mut *out, &crate::document::decide::with_pk(data, pk))
                .map_err(Failure::internal)?;
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
) -> Result<(), Failure> {
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
    serde_json::to_writer(out, value).map_err(Failure::internal)
}

/// The rows as lists answer them, written as comma-separated JSON objects in one piece per
/// thread, opened and written on every core when there are many (decrypting and writing JSON
/// is most of a large sync's time).
fn open_rows(
    key: &SiteKey,
    found: &[&tokio_postgres::Row],
    with_org: bool,
) -> Result<Vec<Bytes>, Failure> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = cores.min(found.len() / ROWS_PER_THREAD).max(1);
    let write = |rows: &[&tokio_postgres::Row]| -> Result<Bytes, Failure> {
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
                        .map_err(|_| Failure::internal("a thread opening rows panicked"))?
                })
                .collect::<Result<Vec<_>, _>>()
        })?
    };
    Ok(pieces.into_iter().filter(|p| !p.is_empty()).collect())
}
