//! The connection a [`ReadingPlanner`] reads its rows through.
//!
//! A live batch of a reading planner runs on a bare pooled connection (its transaction is begun
//! and committed by the runtime's own pipeline, [`crate::planned`]); a replay or a rebuild runs
//! it inside a `Transaction`. Both give the same handle: the connection, and its cache of
//! prepared statements, so each read's SQL is prepared once per connection and every later read
//! is one round trip.
//!
//! [`ReadingPlanner`]: crate::ReadingPlanner

use crate::ProjectionError;
use deadpool_postgres::{ClientWrapper, StatementCache, Transaction};
use tokio_postgres::{Client, Row, Statement, types::ToSql};

/// Reads of a read model's own rows, on the batch's connection.
#[derive(Clone, Copy)]
pub struct Reads<'a> {
    client: &'a Client,
    cache: &'a StatementCache,
}

impl<'a> Reads<'a> {
    /// Reads on a pooled connection (inside whatever transaction it has open).
    pub fn of_client(client: &'a ClientWrapper) -> Self {
        Reads {
            client,
            cache: &client.statement_cache,
        }
    }

    /// Reads inside `tx`.
    pub fn of_transaction(tx: &'a Transaction<'_>) -> Self {
        Reads {
            client: tx.client(),
            cache: &tx.statement_cache,
        }
    }

    /// `sql`, prepared once per connection.
    pub async fn prepare(&self, sql: &str) -> Result<Statement, ProjectionError> {
        Ok(self.cache.prepare(self.client, sql).await?)
    }

    /// The rows `sql` gives with `params`.
    pub async fn query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, ProjectionError> {
        let statement = self.prepare(sql).await?;
        Ok(self.client.query(&statement, params).await?)
    }

    /// The row `sql` gives with `params`, if any (more than one is an error).
    pub async fn query_opt(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, ProjectionError> {
        let statement = self.prepare(sql).await?;
        Ok(self.client.query_opt(&statement, params).await?)
    }
}
