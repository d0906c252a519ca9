//! Users and roles, kept by the admin API: each a stream whose state is whether it exists and
//! the user's password hash. Passwords are hashed (bcrypt) and the hash sealed with the
//! server's password key by the handler before the command: events never hold a password, and
//! since sealing, never a hash in the clear (crypto-shredding: destroying the key shreds every
//! hash in every copy of the log).

pub mod command;
pub mod state;

use palimpsest_events::docs::{RoleEvent, UserEvent};

/// A user's password hash as its last event left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredPassword {
    /// Sealed with the password key (every event since sealing).
    Sealed(String),
    /// In the clear: an event written before sealing. The next save reseals it.
    Plain(String),
}

/// A user's or role's write-side state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrincipalState {
    /// Whether it exists.
    pub exists: bool,
    /// The current password hash (a save without a password keeps it).
    pub password: Option<StoredPassword>,
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
    /// A new password hash, sealed, or `None` to keep the current one.
    pub password_sealed: Option<String>,
    /// Channels granted by the administrator.
    pub admin_channels: Vec<String>,
    /// Roles granted by the administrator.
    pub admin_roles: Vec<String>,
    /// Email.
    pub email: Option<String>,
    /// Disabled users cannot log in.
    pub disabled: bool,
}

/// Saves a user (creating or replacing it; a missing password keeps the current one, which
/// the handler has resealed when the last event held it in the clear: the new event never
/// carries a hash in the clear).
pub fn save_user(fields: UserFields, state: &PrincipalState) -> Vec<UserEvent> {
    let kept = match &state.password {
        Some(StoredPassword::Sealed(sealed)) => Some(sealed.clone()),
        Some(StoredPassword::Plain(_)) | None => None,
    };
    vec![UserEvent::UserSaved {
        db: fields.db,
        name: fields.name,
        password_hash: None,
        password_sealed: fields.password_sealed.or(kept),
        admin_channels: fields.admin_channels,
        admin_roles: fields.admin_roles,
        email: fields.email,
        disabled: fields.disabled,
    }]
}

/// The read model's key of an ended session (beside the `user:` and `role:` entries): a
/// session cookie naming it is refused.
pub fn ended_session_key(session: &str) -> String {
    format!("_sync:session:{session}")
}

/// Ends session `session` of user `name` at its logout; nothing when the user is gone.
pub fn end_session(
    db: String,
    name: String,
    session: String,
    expires: i64,
    state: &PrincipalState,
) -> Vec<UserEvent> {
    if !state.exists {
        return Vec::new();
    }
    vec![UserEvent::SessionEnded {
        db,
        name,
        session,
        expires,
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
        UserEvent::UserSaved {
            password_hash,
            password_sealed,
            ..
        } => {
            state.exists = true;
            state.password = match (password_sealed, password_hash) {
                (Some(sealed), _) => Some(StoredPassword::Sealed(sealed.clone())),
                (None, Some(plain)) => Some(StoredPassword::Plain(plain.clone())),
                (None, None) => None,
            };
        }
        UserEvent::SessionEnded { .. } => {}
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

    fn fields(sealed: Option<&str>) -> UserFields {
        UserFields {
            db: "db".into(),
            name: "ann".into(),
            password_sealed: sealed.map(str::to_owned),
            admin_channels: vec!["a".into()],
            admin_roles: vec![],
            email: None,
            disabled: false,
        }
    }

    fn saved_sealed(events: &[UserEvent]) -> Option<&str> {
        match &events[0] {
            UserEvent::UserSaved {
                password_sealed,
                password_hash: None,
                ..
            } => password_sealed.as_deref(),
            other => panic!("expected a save without a clear hash, got {other:?}"),
        }
    }

    #[test]
    fn a_save_without_a_password_keeps_the_current_sealed_hash() {
        let state = save_user(fields(Some("s1")), &PrincipalState::default())
            .iter()
            .fold(PrincipalState::default(), evolve_user);
        assert_eq!(saved_sealed(&save_user(fields(None), &state)), Some("s1"));
    }

    #[test]
    fn given_an_old_event_with_a_clear_hash_then_it_loads_and_a_new_save_never_repeats_it() {
        let old = UserEvent::UserSaved {
            db: "db".into(),
            name: "ann".into(),
            password_hash: Some("$2b$10$clear".into()),
            password_sealed: None,
            admin_channels: vec![],
            admin_roles: vec![],
            email: None,
            disabled: false,
        };
        let state = evolve_user(PrincipalState::default(), &old);
        assert_eq!(
            state.password,
            Some(StoredPassword::Plain("$2b$10$clear".into()))
        );
        assert_eq!(saved_sealed(&save_user(fields(None), &state)), None);
        assert_eq!(
            saved_sealed(&save_user(fields(Some("resealed")), &state)),
            Some("resealed")
        );
    }

    #[test]
    fn a_logout_ends_a_session_of_an_existing_user_only() {
        let state = evolve_user(
            PrincipalState::default(),
            &save_user(fields(None), &PrincipalState::default())[0],
        );
        assert_eq!(
            end_session("db".into(), "ann".into(), "id".into(), 9, &state),
            vec![UserEvent::SessionEnded {
                db: "db".into(),
                name: "ann".into(),
                session: "id".into(),
                expires: 9
            }]
        );
        assert!(
            end_session(
                "db".into(),
                "x".into(),
                "id".into(),
                9,
                &PrincipalState::default()
            )
            .is_empty()
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
