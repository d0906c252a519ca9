//! Running a row query on the read model: whole (one document, or a page, at most `limit`
//! rows), or started and read while the answer is sent (a list without `limit`, which may be a
//! whole organisation). A class whose table is not created yet has no rows.

use super::Param;
use super::page::Page;
use crate::coded_error::CodedError;
use crate::context::Records;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Row, RowStream};

/// What a list's query found: its rows, or the query started with its rows still to read.
pub enum Found {
    /// Every row, read whole (a page: at most `limit` of them).
    Rows(Vec<Row>),
    /// A list without `limit`: the rows are read as the answer is sent. (Boxed: a started
    /// query is large.)
    Started(Box<StartedQuery>),
}

/// A started query, with the connection its rows come over (held until the last is read).
pub struct StartedQuery {
    /// The connection the query runs on.
    pub client: deadpool_postgres::Object,
    /// Its rows, in the query's order.
    pub rows: RowStream,
}

/// Runs a row query and reads every row it finds.
pub async fn rows(
    records: &Records,
    sql: &str,
    params: Vec<Param>,
) -> Result<Vec<Row>, CodedError> {
    let client = records.app.read.get().await?;
    let refs: Vec<&(dyn ToSql + Sync)> =
        params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
    match client.query(sql, &refs).await {
        Ok(rows) => Ok(rows),
        Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

/// Runs a list's query: a page's rows are read whole (at most `limit`); a list without `limit`
/// starts its query here (a refused statement is still an error with its status) and is read
/// as its answer is sent.
pub async fn fetch(
    records: &Records,
    page: &Page,
    sql: &str,
    params: Vec<Param>,
) -> Result<Found, CodedError> {
    if page.limit.is_some() {
        return Ok(Found::Rows(rows(records, sql, params).await?));
    }
    let client = records.app.read.get().await?;
    let refs = params.iter().map(|p| &**p as &(dyn ToSql + Sync));
    match client.query_raw(sql, refs).await {
        Ok(rows) => Ok(Found::Started(Box::new(StartedQuery { client, rows }))),
        Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => Ok(Found::Rows(Vec::new())),
        Err(e) => Err(e.into()),
    }
}
