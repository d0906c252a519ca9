//! A projector's writes as planned statements, sent pipelined: a batch of events becomes a
//! list of statements (SQL text + values) in event order, each SQL text prepared once per
//! connection, then every statement sent at once on the batch's connection. Postgres runs them
//! in the order sent, so the rows are the same as applying the events one by one, without a
//! round trip (or two: parse, then execute) per statement.
//!
//! Statements that create tables cannot be prepared before the table exists: they are
//! [`Statement::Ddl`] and end the pipeline they follow.

use crate::ProjectionError;
use deadpool_postgres::GenericClient;
use futures::future::try_join_all;
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

/// Runs `statements` in order on `tx` (a transaction, or a connection in one): each run of DML
/// pipelined, DDL between them.
pub async fn run<C: GenericClient>(
    tx: &C,
    statements: Vec<Statement>,
) -> Result<(), ProjectionError> {
    let mut pending = Vec::new();
    for statement in statements {
        match statement {
            Statement::Dml { sql, params } => pending.push((sql, params)),
            Statement::Ddl(sql) => {
                let dml = std::mem::take(&mut pending);
                let prepared = prepare(tx, &dml).await?;
                send(tx, &prepared, &dml).await?;
                tx.batch_execute(&sql).await?;
            }
        }
    }
    let prepared = prepare(tx, &pending).await?;
    send(tx, &prepared, &pending).await
}

/// DML statements: SQL text and values.
pub(crate) type Dml = (String, Vec<Param>);

/// Splits planned statements into DML alone, or gives them back when one is DDL (which cannot
/// share a pipeline with what follows it).
pub(crate) fn only_dml(statements: Vec<Statement>) -> Result<Vec<Dml>, Vec<Statement>> {
    if statements.iter().any(|s| matches!(s, Statement::Ddl(_))) {
        return Err(statements);
    }
    Ok(statements
        .into_iter()
        .filter_map(|s| match s {
            Statement::Dml { sql, params } => Some((sql, params)),
            Statement::Ddl(_) => None,
        })
        .collect())
}

/// Each statement's prepared form, in order: every distinct SQL text is prepared once per
/// connection (a round trip only the first time a connection sees it).
pub(crate) async fn prepare<C: GenericClient>(
    tx: &C,
    statements: &[Dml],
) -> Result<Vec<tokio_postgres::Statement>, ProjectionError> {
    let mut prepared: Vec<tokio_postgres::Statement> = Vec::with_capacity(statements.len());
    let mut by_text = std::collections::HashMap::new();
    for (sql, _) in statements {
        let statement = match by_text.get(sql.as_str()) {
            Some(statement) => Clone::clone(statement),
            None => {
                let statement = tx.prepare_cached(sql).await?;
                by_text.insert(sql.as_str(), statement.clone());
                statement
            }
        };
        prepared.push(statement);
    }
    Ok(prepared)
}

/// Sends every statement with its values, then awaits their answers. All of them are queued on
/// the connection, in order, the first time the returned future is polled, so a caller may
/// queue more behind them (a `COMMIT`) by polling it once first.
pub(crate) fn send<'a, C: GenericClient>(
    tx: &'a C,
    prepared: &'a [tokio_postgres::Statement],
    statements: &'a [Dml],
) -> impl std::future::Future<Output = Result<(), ProjectionError>> + Send + 'a {
    let sends = prepared
        .iter()
        .zip(statements)
        .map(|(statement, (_, params))| {
            let refs: Vec<&(dyn ToSql + Sync)> =
                params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
            async move { tx.execute(statement, &refs).await }
        });
    let all = try_join_all(sends);
    async move {
        all.await?;
        Ok(())
    }
}
