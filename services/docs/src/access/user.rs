//! A user as the read model keeps it (`user:<name>`): its stored entry, its password login
//! (throttled per user and per client address) and what it may read, derived on each request
//! from its `admin_channels`, its roles' `admin_channels`, the documents' access grants to it or
//! its roles, and the public channel `!`, so a revoked grant takes effect on the next request.

use super::auth::{Caller, unauthorized};
use super::password::verified;
use super::{Access, LoginKeys, scope};
use crate::http::error::CouchError;
use deadpool_postgres::Object;
use palimpsest_web::AppState;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

/// A user's `user:<name>` entry as the read model keeps it.
#[derive(serde::Deserialize)]
pub struct StoredUser {
    /// The channels the admin API gave it.
    #[serde(default)]
    pub admin_channels: Vec<String>,
    /// The roles the admin API gave it.
    #[serde(default)]
    pub roles: Vec<String>,
    /// A disabled user cannot log in.
    #[serde(default)]
    pub disabled: bool,
    /// The bcrypt hash sealed with the password key (every hash saved since they are sealed).
    #[serde(default)]
    passwordhash_sealed: Option<String>,
    /// The bcrypt hash in the clear (a user last saved by an event from before sealing).
    #[serde(default)]
    passwordhash_bcrypt: Option<String>,
}

impl StoredUser {
    /// The bcrypt hash, opened with the password keys when sealed.
    fn bcrypt_hash(&self, access: &Access) -> Result<Option<String>, CouchError> {
        match (&self.passwordhash_sealed, &self.passwordhash_bcrypt) {
            (Some(sealed), _) => {
                let plain = access.keys()?.open(sealed).map_err(CouchError::internal)?;
                String::from_utf8(plain)
                    .map(Some)
                    .map_err(CouchError::internal)
            }
            (None, plain) => Ok(plain.clone()),
        }
    }

    /// What a session is bound to: a digest of the stored password hash (sealed or not), so
    /// a new password (a new hash) ends the sessions made before it.
    pub fn password_tag(&self) -> String {
        let stored = self
            .passwordhash_sealed
            .as_deref()
            .or(self.passwordhash_bcrypt.as_deref())
            .unwrap_or_default();
        hex::encode(&Sha256::digest(stored.as_bytes())[..8])
    }
}

/// The stored entry of user `name` (disabled users included); `None` when there is none.
pub async fn stored_user(
    client: &Object,
    db: &str,
    name: &str,
) -> Result<Option<StoredUser>, CouchError> {
    // No user's name holds U+0000 (no event may carry it), and Postgres refuses it in text:
    // such a name is no user, not a server error.
    if name.contains('\0') {
        return Ok(None);
    }
    let Some(row) = client
        .query_opt(
            "SELECT value FROM docs.kv WHERE db = $1 AND key = $2",
            &[&db, &format!("user:{name}")],
        )
        .await?
    else {
        return Ok(None);
    };
    serde_json::from_str(row.get::<_, &str>(0))
        .map(Some)
        .map_err(CouchError::internal)
}

/// The enabled user `name`, else a 401.
pub async fn enabled_user(client: &Object, db: &str, name: &str) -> Result<StoredUser, CouchError> {
    stored_user(client, db, name)
        .await?
        .filter(|stored| !stored.disabled)
        .ok_or_else(|| unauthorized("Invalid login"))
}

/// A password login, throttled per user and per client address.
pub async fn password_login(
    client: &Object,
    access: &Access,
    db: &str,
    name: &str,
    password: &str,
) -> Result<Caller, CouchError> {
    let keys = LoginKeys::new(db, name, scope::peer());
    access.check_login(&keys)?;
    let stored = stored_user(client, db, name)
        .await?
        .filter(|stored| !stored.disabled);
    let matched = match &stored {
        Some(user) => match user.bcrypt_hash(access)? {
            Some(hash) => verified(&hash, password).await?,
            None => false,
        },
        None => false,
    };
    access.record_login(&keys, matched)?;
    match stored {
        Some(stored) if matched => {
            channels_of(client, db, name, stored.admin_channels, stored.roles).await
        }
        _ => Err(unauthorized("Invalid login")),
    }
}

/// A user's derived roles and channels (`all_channels`): its admin roles and the roles
/// documents grant it (`role()`); its admin channels, its roles' channels, the documents'
/// grants to it or its roles, and the public channel. Read on each request, so a revoked grant
/// (the granting document changed, deleted or purged) takes effect on the next one, and the
/// channels it took away are kept as lost.
pub async fn channels_of(
    client: &Object,
    db: &str,
    name: &str,
    admin_channels: Vec<String>,
    admin_roles: Vec<String>,
) -> Result<Caller, CouchError> {
    let mut channels: BTreeSet<String> = admin_channels.into_iter().collect();
    let mut roles: BTreeSet<String> = admin_roles.into_iter().collect();
    for row in client
        .query(
            "SELECT DISTINCT role FROM docs.role_access \
             WHERE db = $1 AND grantee = $2 AND revoked_seq IS NULL",
            &[&db, &name],
        )
        .await?
    {
        roles.insert(row.get(0));
    }
    let role_keys: Vec<String> = roles.iter().map(|r| format!("role:{r}")).collect();
    for row in client
        .query(
            "SELECT value FROM docs.kv WHERE db = $1 AND key = ANY($2)",
            &[&db, &role_keys],
        )
        .await?
    {
        let role: StoredUser =
            serde_json::from_str(row.get::<_, &str>(0)).map_err(CouchError::internal)?;
        channels.extend(role.admin_channels);
    }
    let mut grantees = role_keys;
    grantees.push(name.to_owned());
    for row in client
        .query(
            "SELECT DISTINCT channel FROM docs.access \
             WHERE db = $1 AND grantee = ANY($2) AND revoked_seq IS NULL",
            &[&db, &grantees],
        )
        .await?
    {
        channels.insert(row.get(0));
    }
    channels.insert("!".into());
    let lost = crate::revocation::lost(client, db, name, &roles, &channels).await?;
    Ok(Caller {
        admin: false,
        administrator: false,
        name: Some(name.to_owned()),
        roles: roles.into_iter().collect(),
        channels,
        lost,
    })
}

/// A user logged in through `POST /{db}/_session`: checks the password (throttled), returns
/// the caller and its password tag (what the session is bound to).
pub async fn login(
    state: &AppState,
    db: &str,
    name: &str,
    password: &str,
) -> Result<(Caller, String), CouchError> {
    let client = crate::read::client(state).await?;
    crate::read::database(&client, db).await?;
    let access = scope::access()?;
    let caller = password_login(&client, &access, db, name, password).await?;
    let tag = enabled_user(&client, db, name).await?.password_tag();
    scope::remember(db, &caller);
    Ok((caller, tag))
}
