//! The `SyncGatewaySession` cookie's value: a token this server signs (HMAC-SHA256 under its
//! secret) for one user of one database, bound to the session's random id (what a logout
//! records as ended) and to a digest of the user's password hash (so a new password ends it).

use base64::Engine;
use sha2::{Digest, Sha256};

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
fn hmac(key: &[u8], message: &[u8]) -> Vec<u8> {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let inner: Vec<u8> = block.iter().map(|b| b ^ 0x36).collect();
    let outer: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
    let inner_hash = Sha256::new()
        .chain_update(&inner)
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(&outer)
        .chain_update(inner_hash)
        .finalize()
        .to_vec()
}

/// A session token's parts: `<name, base64url>.<expires>.<id>.<signature>`, the signature an
/// HMAC-SHA256 under the server's secret of the database, the name, the expiry, the id and
/// the user's password tag ([`super::user::StoredUser::password_tag`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionClaim {
    /// The user.
    pub name: String,
    /// When it expires (unix seconds).
    pub expires: i64,
    /// The session's random id (what a logout records as ended).
    pub id: String,
    signature: String,
}

impl SessionClaim {
    /// A new signed session token.
    pub fn token(secret: &str, db: &str, name: &str, id: &str, tag: &str, expires: i64) -> String {
        let name64 = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(name);
        let signature = Self::sign(secret, db, name, id, tag, expires);
        format!("{name64}.{expires}.{id}.{signature}")
    }

    fn sign(secret: &str, db: &str, name: &str, id: &str, tag: &str, expires: i64) -> String {
        hex::encode(hmac(
            secret.as_bytes(),
            format!("{db}\n{name}\n{expires}\n{id}\n{tag}").as_bytes(),
        ))
    }

    /// The parts of a token, unchecked.
    pub fn parse(token: &str) -> Option<SessionClaim> {
        let mut parts = token.split('.');
        let name64 = parts.next()?;
        let expires: i64 = parts.next()?.parse().ok()?;
        let id = parts.next()?.to_owned();
        let signature = parts.next()?.to_owned();
        if parts.next().is_some() || id.is_empty() || !id.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let name = String::from_utf8(
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(name64)
                .ok()?,
        )
        .ok()?;
        Some(SessionClaim {
            name,
            expires,
            id,
            signature,
        })
    }

    /// Whether this server signed it for `db` under password tag `tag`, and it is unexpired at
    /// `now`.
    pub fn valid(&self, secret: &str, db: &str, tag: &str, now: i64) -> bool {
        let expected = Self::sign(secret, db, &self.name, &self.id, tag, self.expires);
        palimpsest_web::secret::equal(&expected, &self.signature) && self.expires > now
    }
}

/// A fresh session id.
pub fn new_session_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        assert_eq!(
            hex::encode(hmac(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_session_token_holds_only_for_its_database_secret_password_and_time() {
        let token = SessionClaim::token("secret", "db", "ann:x", "ab12", "tag", 100);
        let claim = SessionClaim::parse(&token).expect("parses");
        assert_eq!((claim.name.as_str(), claim.id.as_str()), ("ann:x", "ab12"));
        assert!(claim.valid("secret", "db", "tag", 99));
        assert!(!claim.valid("secret", "db", "tag", 100));
        assert!(!claim.valid("other", "db", "tag", 99));
        assert!(!claim.valid("secret", "db2", "tag", 99));
        assert!(!claim.valid("secret", "db", "new password", 99));
    }

    #[test]
    fn a_token_of_the_old_form_or_with_a_bad_id_does_not_parse() {
        assert_eq!(SessionClaim::parse("YW5u.100.abcdef"), None);
        assert_eq!(SessionClaim::parse("YW5u.100.xyz.abcdef"), None);
        assert_eq!(SessionClaim::parse("YW5u.100.ab.cd.ef"), None);
    }
}
