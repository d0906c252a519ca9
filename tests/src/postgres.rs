//! A plain Postgres connection for assertions beneath the app (read models, checkpoints,
//! the log's tables), shared by the end-to-end tests and the chaos harness.

use tokio_postgres::{Client, NoTls};

/// A connection to `url`, its connection task spawned; panics naming the URL when it fails.
pub async fn connect(url: &str) -> Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .unwrap_or_else(|e| panic!("connect {url}: {e}"));
    tokio::spawn(connection);
    client
}
