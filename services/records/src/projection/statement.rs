//! The projector's writes as planned statements, sent pipelined: a batch of events becomes a
//! list of statements (SQL text + values) in event order, each SQL text prepared once per
//! connection, then every statement sent at once on the batch's connection. Postgres runs them
//! in the order sent, so the rows are the same as applying the events one by one, without a
//! round trip (or two: parse, then execute) per statement.
//!
//! Statements that create tables (a class declared) cannot be prepared before the table exists:
//! they are [`Statement::Ddl`] and end the pipeline they follow.

use deadpool_postgres::Transaction;
use futures::future::try_join_all;
use palimpsest_projections::ProjectionError;
use tokio_postgres::types::ToSql;

/// One value of a statement.
pub type Param = Box<dyn ToSql + Sync + Send>;

/// One planned write of the read model.
pub enum Statement {
    /// A DML statement with its values: prepared (cached per connection) and pipelined.
    Dml {
        /// The SQL text.
        sql: String,
        /// Its values, `$1`, `$2`, ….
        params: Vec<Param>,
    },
    /// DDL run as a simple-query batch, after every statement before it.
    Ddl(String),
}

impl Statement {
    /// A DML statement.
    pub fn dml(sql: String, params: Vec<Param>) -> Statement {
        Statement::Dml { sql, params }
    }
}

/// Runs `statements` in order on `tx`: each run of DML pipelined, DDL between them.
pub async fn run(tx: &Transaction<'_>, statements: Vec<Statement>) -> Result<(), ProjectionError> {
    let mut pending = Vec::new();
    for statement in statements {
        match statement {
            Statement::Dml { sql, params } => pending.push((sql, params)),
            Statement::Ddl(sql) => {
                pipeline(tx, std::mem::take(&mut pending)).await?;
                tx.batch_execute(&sql).await?;
            }
        }
    }
    pipeline(tx, pending).await
}

/// Prepares each distinct SQL text (once per connection), then sends every statement before
/// reading any answer.
async fn pipeline(
    tx: &Transaction<'_>,
    statements: Vec<(String, Vec<Param>)>,
) -> Result<(), ProjectionError> {
    let mut prepared = std::collections::HashMap::new();
    for (sql, _) in &statements {
        if !prepared.contains_key(sql) {
            let statement = tx.prepare_cached(sql).await?;
            prepared.insert(sql.clone(), statement);
        }
    }
    let mut sends = Vec::with_capacity(statements.len());
    for (sql, params) in &statements {
        let statement = prepared.get(sql).ok_or_else(|| {
            ProjectionError::Invalid(format!("statement `{sql}` was not prepared"))
        })?;
        let refs: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
        sends.push(async move { tx.execute(statement, &refs).await });
    }
    try_join_all(sends).await?;
    Ok(())
}
