//! The user decider: a command and the folded state in, the events to append (or why not) out.

use crate::user::command::UserCommand;
use crate::user::error::UserError;
use crate::user::role::Role;
use crate::user::state::UserState;
use palimpsest_events::atlas::UserEvent;

/// The actor name the administrator's events carry; no user may take it.
pub const ADMIN_ACTOR: &str = "admin";

/// Longest user id.
const MAX_USER_ID: usize = 64;

/// Decides a user command against the user's state.
pub fn decide(command: UserCommand, state: &UserState) -> Result<Vec<UserEvent>, UserError> {
    match command {
        UserCommand::Issue {
            user_id,
            roles,
            token_sha256,
            now,
        } => {
            if !valid_user_id(&user_id) {
                return Err(UserError::InvalidUserId(user_id));
            }
            Ok(vec![UserEvent::UserTokenIssued {
                user_id,
                roles: role_names(&roles)?,
                token_sha256,
                issued_at: now,
            }])
        }
        UserCommand::Revoke { now } => match &state.user_id {
            None => Err(UserError::NotFound),
            Some(_) if !state.active() => Ok(vec![]),
            Some(user_id) => Ok(vec![UserEvent::UserRevoked {
                user_id: user_id.clone(),
                revoked_at: now,
            }]),
        },
    }
}

/// Whether `id` may name a user: short, of characters that are safe in a stream key and in
/// the spec's columns, and not the administrator's or the importer's names (which carry `:`).
pub fn valid_user_id(id: &str) -> bool {
    (1..=MAX_USER_ID).contains(&id.len())
        && !id.eq_ignore_ascii_case(ADMIN_ACTOR)
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'))
}

/// The roles named, checked, sorted and without repeats.
fn role_names(names: &[String]) -> Result<Vec<String>, UserError> {
    let mut roles = names
        .iter()
        .map(|n| Role::parse(n).ok_or_else(|| UserError::UnknownRole(n.clone())))
        .collect::<Result<Vec<_>, _>>()?;
    roles.sort();
    roles.dedup();
    if roles.is_empty() {
        return Err(UserError::NoRoles);
    }
    Ok(roles.iter().map(|r| r.as_str().to_owned()).collect())
}
