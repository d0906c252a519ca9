//! The checkpoint that lives beside a projection's rows.

use crate::ProjectionError;
use deadpool_postgres::{GenericClient, Transaction};

/// Creates the checkpoint table in `schema` at position 0 for `version` of the projection.
pub async fn create(
    tx: &Transaction<'_>,
    schema: &str,
    name: &str,
    version: i32,
) -> Result<(), ProjectionError> {
    tx.batch_execute(&format!(
        "CREATE TABLE {schema}.projection_checkpoint (
             name text PRIMARY KEY,
             version integer NOT NULL,
             position bigint NOT NULL,
             updated_at timestamptz NOT NULL DEFAULT now(),
             stalled jsonb)"
    ))
    .await?;
    tx.execute(
        &format!("INSERT INTO {schema}.projection_checkpoint (name, version, position) VALUES ($1, $2, 0)"),
        &[&name, &version],
    )
    .await?;
    Ok(())
}

/// Adds the `stalled` column (see [`crate::stall`]) to a checkpoint table made before it existed.
pub async fn upgrade(tx: &Transaction<'_>, schema: &str) -> Result<(), ProjectionError> {
    tx.batch_execute(&format!(
        "ALTER TABLE {schema}.projection_checkpoint ADD COLUMN IF NOT EXISTS stalled jsonb"
    ))
    .await?;
    Ok(())
}

/// Records that the read model in `schema` is fed by the log `log_id`, or refuses when it was
/// built from another log: a checkpoint is a position in one log, and rows made of another
/// log's events would be extended with this one's (a read database given to the wrong log,
/// or a log recreated under it). The remedy is a fresh read database or a replay.
pub async fn claim(
    tx: &Transaction<'_>,
    schema: &str,
    name: &str,
    log_id: uuid::Uuid,
) -> Result<(), ProjectionError> {
    tx.batch_execute(&format!(
        "ALTER TABLE {schema}.projection_checkpoint ADD COLUMN IF NOT EXISTS log_id uuid"
    ))
    .await?;
    let row = tx
        .query_one(
            &format!(
                "UPDATE {schema}.projection_checkpoint SET log_id = coalesce(log_id, $2) \
                 WHERE name = $1 RETURNING log_id"
            ),
            &[&name, &log_id],
        )
        .await?;
    let fed_by: uuid::Uuid = row.get(0);
    if fed_by != log_id {
        return Err(ProjectionError::OtherLog {
            projection: name.to_owned(),
            fed_by,
            log_id,
        });
    }
    Ok(())
}

/// Reads the checkpoint (position and table version), locking the row for the transaction.
pub async fn read(
    tx: &Transaction<'_>,
    schema: &str,
    name: &str,
) -> Result<(i64, i32), ProjectionError> {
    let row = tx
        .query_one(
            &format!("SELECT position, version FROM {schema}.projection_checkpoint WHERE name = $1 FOR UPDATE"),
            &[&name],
        )
        .await?;
    Ok((row.get(0), row.get(1)))
}

/// Moves the checkpoint, in the same transaction as the rows it covers (and clears a stall: the
/// event it stopped on is applied).
pub async fn write(
    tx: &Transaction<'_>,
    schema: &str,
    name: &str,
    position: i64,
) -> Result<(), ProjectionError> {
    // Prepared once per connection and schema: a replay writes it once a batch.
    let write = tx
        .prepare_cached(&format!("UPDATE {schema}.projection_checkpoint SET position = $2, updated_at = now(), stalled = NULL WHERE name = $1"))
        .await?;
    tx.execute(&write, &[&name, &position]).await?;
    Ok(())
}

/// Takes the projection's transaction lock: one writer of its schema at a time.
pub async fn lock(tx: &Transaction<'_>, name: &str) -> Result<(), ProjectionError> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('palimpsest.projection:' || $1))",
        &[&name],
    )
    .await?;
    Ok(())
}

/// The schemas of every live read model in the database (those holding a
/// `projection_checkpoint` table; rebuilds in progress and retired read models left out).
pub async fn live_schemas(client: &impl GenericClient) -> Result<Vec<String>, ProjectionError> {
    Ok(client
        .query(
            "SELECT table_schema::text FROM information_schema.tables \
             WHERE table_name = 'projection_checkpoint' AND table_schema::text NOT LIKE '%\\_rebuild' \
             AND table_schema::text NOT LIKE '%\\_retired' ORDER BY 1",
            &[],
        )
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// One checkpoint row as an operator sees it: a read model's, or one of its partitions'.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Checkpoint {
    /// The read model, or the partition (`stream_heads/3-of-8`).
    pub name: String,
    /// The last position it applied.
    pub position: i64,
    /// When it last moved.
    pub updated_at: chrono::DateTime<chrono::Utc>,
    /// The event it is stopped on, if it is (the stall record as JSON).
    pub stalled: Option<serde_json::Value>,
}

/// Every checkpoint row of every live read model in the database, by name.
pub async fn all(client: &impl GenericClient) -> Result<Vec<Checkpoint>, ProjectionError> {
    let mut all = Vec::new();
    for schema in live_schemas(client).await? {
        let rows = client
            .query(
                &format!(
                    "SELECT name, position, updated_at, to_jsonb(c) -> 'stalled' \
                     FROM {schema}.projection_checkpoint c ORDER BY name"
                ),
                &[],
            )
            .await?;
        all.extend(rows.iter().map(|r| {
            Checkpoint {
                name: r.get(0),
                position: r.get(1),
                updated_at: r.get(2),
                stalled: r
                    .get::<_, Option<serde_json::Value>>(3)
                    .filter(|v| !v.is_null()),
            }
        }));
    }
    Ok(all)
}
