//! Errors of the log's I/O.

/// Something went wrong talking to Postgres, or what it holds is not what the log wrote.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// No connection could be had from the pool.
    #[error("no database connection: {0}")]
    Pool(#[from] deadpool_postgres::PoolError),
    /// Postgres refused or failed a statement.
    #[error("database error: {0}")]
    Db(#[from] tokio_postgres::Error),
    /// The connection string or pool settings are unusable.
    #[error("bad database configuration: {0}")]
    Config(String),
    /// A stored row does not decode into an event (a bug or a tampered log).
    #[error("corrupt log row: {0}")]
    Corrupt(String),
    /// The append committed but could not be confirmed on disk; its outcome is unknown (retry
    /// with the same idempotency key).
    #[error("append not confirmed durable: {0}")]
    NotDurable(String),
    /// The stored tree is not whole (a node the right edge needs is missing).
    #[error("the log's tree: {0}")]
    Tree(String),
    /// The appender task is gone (the process is shutting down).
    #[error("the log writer has stopped")]
    WriterStopped,
}
