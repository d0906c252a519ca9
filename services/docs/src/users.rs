//! Users and roles, kept by the admin API: each a stream whose state is whether it exists.
//! Passwords are hashed (bcrypt) by the handler before the command; events never hold them.

use palimpsest_events::docs::{RoleEvent, UserEvent};

/// A user's or role's write-side state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrincipalState {
    /// Whether it exists.
    pub exists: bool,
    /// The current password hash (a save without a password keeps it).
    pub password_hash: Option<String>,
}

/// Why an admin command on a user or role was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrincipalError {
    /// Deleting one that does not exist.
    #[error("missing")]
    NotFound,
}

/// A user as the admin API saves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserFields {
    /// The database.
    pub db: String,
    /// The name.
    pub name: String,
    /// A new password hash, or `None` to keep the current one.
    pub password_hash: Option<String>,
    /// Channels granted by the administrator.
    pub admin_channels: Vec<String>,
    /// Roles granted by the administrator.
    pub admin_roles: Vec<String>,
    /// Email.
    pub email: Option<String>,
    /// Disabled users cannot log in.
    pub disabled: bool,
}

/// Saves a user (creating or replacing it; a missing password keeps the current one).
pub fn save_user(fields: UserFields, state: &PrincipalState) -> Vec<UserEvent> {
    vec![UserEvent::UserSaved {
        db: fields.db,
        name: fields.name,
        password_hash: fields.password_hash.or_else(|| state.password_hash.clone()),
        admin_channels: fields.admin_channels,
        admin_roles: fields.admin_roles,
        email: fields.email,
        disabled: fields.disabled,
    }]
}

/// Deletes a user.
pub fn delete_user(
    db: String,
    name: String,
    state: &PrincipalState,
) -> Result<Vec<UserEvent>, PrincipalError> {
    if !state.exists {
        return Err(PrincipalError::NotFound);
    }
    Ok(vec![UserEvent::UserDeleted { db, name }])
}

/// Folds a user event.
pub fn evolve_user(mut state: PrincipalState, event: &UserEvent) -> PrincipalState {
    match event {
        UserEvent::UserSaved { password_hash, .. } => {
            state.exists = true;
            state.password_hash = password_hash.clone();
        }
        UserEvent::UserDeleted { .. } => state = PrincipalState::default(),
    }
    state
}

/// Deletes a role.
pub fn delete_role(
    db: String,
    name: String,
    state: &PrincipalState,
) -> Result<Vec<RoleEvent>, PrincipalError> {
    if !state.exists {
        return Err(PrincipalError::NotFound);
    }
    Ok(vec![RoleEvent::RoleDeleted { db, name }])
}

/// Folds a role event.
pub fn evolve_role(mut state: PrincipalState, event: &RoleEvent) -> PrincipalState {
    state.exists = matches!(event, RoleEvent::RoleSaved { .. });
    state
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(hash: Option<&str>) -> UserFields {
        UserFields {
            db: "db".into(),
            name: "ann".into(),
            password_hash: hash.map(str::to_owned),
            admin_channels: vec!["a".into()],
            admin_roles: vec![],
            email: None,
            disabled: false,
        }
    }

    #[test]
    fn a_save_without_a_password_keeps_the_current_hash() {
        let state = save_user(fields(Some("h1")), &PrincipalState::default())
            .iter()
            .fold(PrincipalState::default(), evolve_user);
        let again = save_user(fields(None), &state);
        assert!(
            matches!(&again[0], UserEvent::UserSaved { password_hash: Some(h), .. } if h == "h1")
        );
    }

    #[test]
    fn deleting_a_missing_user_is_not_found() {
        assert_eq!(
            delete_user("db".into(), "x".into(), &PrincipalState::default()),
            Err(PrincipalError::NotFound)
        );
    }
}
