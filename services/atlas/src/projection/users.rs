//! User events into `users`: the token lookups' table.

use deadpool_postgres::Transaction;
use palimpsest_events::atlas::UserEvent;
use palimpsest_projections::ProjectionError;

/// Applies one user event: an issue replaces the row (roles, token hash), a revoke clears the
/// token hash so the token no longer finds a user.
pub async fn apply(
    tx: &Transaction<'_>,
    schema: &str,
    payload: &UserEvent,
) -> Result<(), ProjectionError> {
    match payload {
        UserEvent::UserTokenIssued {
            user_id,
            roles,
            token_sha256,
            issued_at,
        } => {
            tx.execute(
                &format!(
                    "INSERT INTO {schema}.users (user_id, roles, token_sha256, issued_at, revoked_at) \
                     VALUES ($1, $2, $3, $4, NULL) \
                     ON CONFLICT (user_id) DO UPDATE SET roles = EXCLUDED.roles, \
                     token_sha256 = EXCLUDED.token_sha256, issued_at = EXCLUDED.issued_at, \
                     revoked_at = NULL"
                ),
                &[user_id, roles, token_sha256, &issued_at.to_iso()],
            )
            .await?;
        }
        UserEvent::UserRevoked {
            user_id,
            revoked_at,
        } => {
            tx.execute(
                &format!(
                    "UPDATE {schema}.users SET token_sha256 = NULL, revoked_at = $2 WHERE user_id = $1"
                ),
                &[user_id, &revoked_at.to_iso()],
            )
            .await?;
        }
    }
    Ok(())
}
