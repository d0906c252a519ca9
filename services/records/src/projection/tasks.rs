//! Task events into `Task(org, k0, i0, data)`, planned as statements.

use crate::seal;
use palimpsest_events::records::TaskEvent;
use palimpsest_projections::ProjectionError;
use palimpsest_projections::statement::Statement;

/// The statements of one task event, appended to `out`.
pub fn plan(out: &mut Vec<Statement>, s: &str, event: &TaskEvent) -> Result<(), ProjectionError> {
    match event {
        TaskEvent::TaskScheduled { org, k0, i0, data } => {
            let data = seal::decode(data).map_err(|_| {
                ProjectionError::Invalid(format!("task {k0} holds data that is not base64url"))
            })?;
            out.push(Statement::dml(
                format!(
                    "INSERT INTO {s}.\"Task\" (org, k0, i0, data) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (org, k0) DO UPDATE SET i0 = EXCLUDED.i0, data = EXCLUDED.data"
                ),
                vec![
                    Box::new(org.clone()),
                    Box::new(k0.clone()),
                    Box::new(i0.clone()),
                    Box::new(data),
                ],
            ));
        }
        TaskEvent::TaskDone { org, k0 } => {
            out.push(Statement::dml(
                format!("DELETE FROM {s}.\"Task\" WHERE org = $1 AND k0 = $2"),
                vec![Box::new(org.clone()), Box::new(k0.clone())],
            ));
        }
    }
    Ok(())
}
