//! User events into `users`: the token lookups' table.

use crate::projection::param;
use palimpsest_events::atlas::UserEvent;
use palimpsest_projections::statement::Statement;

/// Plans one user event: an issue replaces the row (roles, token hash), a revoke clears the
/// token hash so the token no longer finds a user.
pub fn plan(out: &mut Vec<Statement>, schema: &str, payload: &UserEvent) {
    match payload {
        UserEvent::UserTokenIssued {
            user_id,
            roles,
            token_sha256,
            issued_at,
        } => {
            out.push(Statement::dml(
                format!(
                    "INSERT INTO {schema}.users (user_id, roles, token_sha256, issued_at, revoked_at) \
                     VALUES ($1, $2, $3, $4, NULL) \
                     ON CONFLICT (user_id) DO UPDATE SET roles = EXCLUDED.roles, \
                     token_sha256 = EXCLUDED.token_sha256, issued_at = EXCLUDED.issued_at, \
                     revoked_at = NULL"
                ),
                vec![
                    param(user_id.clone()),
                    param(roles.clone()),
                    param(token_sha256.clone()),
                    param(issued_at.to_iso()),
                ],
            ));
        }
        UserEvent::UserRevoked {
            user_id,
            revoked_at,
        } => {
            out.push(Statement::dml(
                format!(
                    "UPDATE {schema}.users SET token_sha256 = NULL, revoked_at = $2 WHERE user_id = $1"
                ),
                vec![param(user_id.clone()), param(revoked_at.to_iso())],
            ));
        }
    }
}
