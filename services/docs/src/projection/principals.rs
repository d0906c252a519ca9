//! Users and roles into the key-value form: `user:<name>` and `role:<name>`, as the spec
//! writes them (`all_channels` null: derived when needed, from `admin_channels`, the roles'
//! channels and the documents' access grants).

use super::invalid;
use deadpool_postgres::Transaction;
use palimpsest_events::docs::{RoleEvent, UserEvent};
use palimpsest_projections::ProjectionError;
use serde_json::json;

async fn put(
    tx: &Transaction<'_>,
    s: &str,
    db: &str,
    key: &str,
    value: &serde_json::Value,
) -> Result<(), ProjectionError> {
    let text = serde_json::to_string(value).map_err(invalid)?;
    tx.execute(
        &format!(
            "INSERT INTO {s}.kv (db, key, value) VALUES ($1, $2, $3) \
             ON CONFLICT (db, key) DO UPDATE SET value = $3"
        ),
        &[&db, &key, &text],
    )
    .await?;
    Ok(())
}

async fn remove(tx: &Transaction<'_>, s: &str, db: &str, key: &str) -> Result<(), ProjectionError> {
    tx.execute(
        &format!("DELETE FROM {s}.kv WHERE db = $1 AND key = $2"),
        &[&db, &key],
    )
    .await?;
    Ok(())
}

/// Applies a user event.
pub async fn user(tx: &Transaction<'_>, s: &str, event: &UserEvent) -> Result<(), ProjectionError> {
    match event {
        UserEvent::UserSaved {
            db,
            name,
            password_hash,
            password_sealed,
            admin_channels,
            admin_roles,
            email,
            disabled,
        } => {
            let mut value = json!({
                "name": name,
                "admin_channels": admin_channels,
                "all_channels": null,
                "email": email,
                "disabled": disabled,
                "roles": admin_roles,
            });
            // A sealed hash stays sealed in the read model too (opened at login); an event
            // from before sealing still gives its hash in the clear.
            match (password_sealed, password_hash) {
                (Some(sealed), _) => value["passwordhash_sealed"] = json!(sealed),
                (None, plain) => value["passwordhash_bcrypt"] = json!(plain),
            }
            put(tx, s, db, &format!("user:{name}"), &value).await
        }
        UserEvent::SessionEnded {
            db,
            name,
            session,
            expires,
        } => {
            let value = json!({"name": name, "expires": expires});
            put(
                tx,
                s,
                db,
                &crate::principal::ended_session_key(session),
                &value,
            )
            .await
        }
        UserEvent::UserDeleted { db, name } => remove(tx, s, db, &format!("user:{name}")).await,
    }
}

/// Applies a role event.
pub async fn role(tx: &Transaction<'_>, s: &str, event: &RoleEvent) -> Result<(), ProjectionError> {
    match event {
        RoleEvent::RoleSaved {
            db,
            name,
            admin_channels,
        } => {
            let value =
                json!({"name": name, "admin_channels": admin_channels, "all_channels": null});
            put(tx, s, db, &format!("role:{name}"), &value).await
        }
        RoleEvent::RoleDeleted { db, name } => remove(tx, s, db, &format!("role:{name}")).await,
    }
}
