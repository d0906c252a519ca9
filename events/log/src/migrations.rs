//! Versioned schema migrations of the log, run by every process on start.

use crate::LogError;
use deadpool_postgres::Pool;

/// The log's migrations, in order: (version, name, SQL). Never edit one that has shipped; add one.
pub const MIGRATIONS: &[(i32, &str, &str)] = &[
    (1, "log", include_str!("migrations/0001_log.sql")),
    (
        2,
        "command_replies",
        include_str!("migrations/0002_command_replies.sql"),
    ),
    (
        3,
        "log_identity",
        include_str!("migrations/0003_log_identity.sql"),
    ),
    (
        4,
        "appender guard",
        include_str!("migrations/0004_appender_guard.sql"),
    ),
    (5, "tree", include_str!("migrations/0005_tree.sql")),
    (
        6,
        "tree size",
        include_str!("migrations/0006_tree_size.sql"),
    ),
    (
        7,
        "append call",
        include_str!("migrations/0007_append_call.sql"),
    ),
    (
        8,
        "relay positions",
        include_str!("migrations/0008_relay_positions.sql"),
    ),
];

/// Brings schema `log` up to date. Concurrent starters serialise on an advisory lock, and each
/// migration runs in its own transaction with its bookkeeping row.
pub async fn migrate(pool: &Pool) -> Result<(), LogError> {
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock(80455300)", &[])
        .await?;
    tx.batch_execute(
        "CREATE SCHEMA IF NOT EXISTS log;
         CREATE TABLE IF NOT EXISTS log.migrations (
             version integer PRIMARY KEY,
             name text NOT NULL,
             applied_at timestamptz NOT NULL DEFAULT now())",
    )
    .await?;
    let applied: Vec<i32> = tx
        .query("SELECT version FROM log.migrations", &[])
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    for (version, name, sql) in MIGRATIONS {
        if applied.contains(version) {
            continue;
        }
        tracing::info!(version, name, "applying log migration");
        tx.batch_execute(sql).await?;
        tx.execute(
            "INSERT INTO log.migrations (version, name) VALUES ($1, $2)",
            &[version, name],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}
