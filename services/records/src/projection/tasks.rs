//! Task events into `Task(org, k0, i0, data)`.

use crate::seal;
use deadpool_postgres::Transaction;
use palimpsest_events::records::TaskEvent;
use palimpsest_projections::ProjectionError;

/// Applies one task event.
pub async fn apply(
    tx: &Transaction<'_>,
    s: &str,
    event: &TaskEvent,
) -> Result<(), ProjectionError> {
    match event {
        TaskEvent::TaskScheduled { org, k0, i0, data } => {
            let data = seal::decode(data).map_err(|_| {
                ProjectionError::Invalid(format!("task {k0} holds data that is not base64url"))
            })?;
            tx.execute(
                &format!(
                    "INSERT INTO {s}.\"Task\" (org, k0, i0, data) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (org, k0) DO UPDATE SET i0 = EXCLUDED.i0, data = EXCLUDED.data"
                ),
                &[org, k0, i0, &data],
            )
            .await?;
        }
        TaskEvent::TaskDone { org, k0 } => {
            tx.execute(
                &format!("DELETE FROM {s}.\"Task\" WHERE org = $1 AND k0 = $2"),
                &[org, k0],
            )
            .await?;
        }
    }
    Ok(())
}
