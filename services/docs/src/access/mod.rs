//! Who the caller is and what it may read: the credentials of a request ([`auth`]), checked
//! from its headers before the body ([`gate`]), carried through the request ([`scope`]); a
//! user's stored entry, password login and channels ([`user`], [`password`]); sessions
//! ([`session`]) and the cookie's signed token ([`session_token`]); which revisions a caller
//! may read ([`revisions`]).
//!
//! [`Access`] is what a docs router knows about its callers beyond the platform's state: the
//! administrator's Basic user name, the keys that open sealed password hashes, and the
//! failed-login throttles (per user of a database, per client address).

pub mod auth;
pub mod gate;
pub mod password;
pub mod revisions;
pub mod scope;
pub mod session;
pub mod session_token;
pub mod user;

use crate::http::error::CouchError;
use crate::settings::{PASSWORD_KEY_FILE, Settings};
use palimpsest_web::AppState;
use palimpsest_web::login_throttle::{LoginThrottle, ThrottlePolicy};
use palimpsest_web::seal::SealKeys;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Instant;

/// One router's access configuration and login throttles.
#[derive(Debug)]
pub struct Access {
    /// The administrator's Basic user name.
    pub admin_name: String,
    keys: Option<SealKeys>,
    users: Mutex<LoginThrottle>,
    addresses: Mutex<LoginThrottle>,
}

/// Which throttle keys a password try counts under.
#[derive(Debug, Clone)]
pub struct LoginKeys {
    user: String,
    address: Option<String>,
}

impl LoginKeys {
    /// The keys of a try as `name` of `db` from `peer`.
    pub fn new(db: &str, name: &str, peer: Option<IpAddr>) -> LoginKeys {
        LoginKeys {
            user: format!("{db}\n{name}"),
            address: peer.map(|p| p.to_string()),
        }
    }
}

impl Access {
    /// The access of a router built with `settings`; the password keys are loaded from the
    /// data directory when the settings hold none (a failure is logged, and sealing or opening
    /// a password hash then fails with a 500 that says nothing more).
    pub fn new(state: &AppState, settings: Settings) -> Access {
        let keys = settings.password_keys.or_else(|| {
            SealKeys::load(
                &state.data_dir,
                PASSWORD_KEY_FILE,
                settings.password_key.as_deref(),
            )
            .inspect_err(|e| tracing::error!(error = %e, "docs password key unavailable"))
            .ok()
        });
        Access {
            admin_name: settings.admin_name,
            keys,
            users: Mutex::new(LoginThrottle::new(ThrottlePolicy::per_user())),
            addresses: Mutex::new(LoginThrottle::new(ThrottlePolicy::per_address())),
        }
    }

    /// The password keys.
    pub fn keys(&self) -> Result<&SealKeys, CouchError> {
        self.keys
            .as_ref()
            .ok_or_else(|| CouchError::internal("the docs password key is unavailable"))
    }

    /// 429 while either key of a password try must wait.
    pub fn check_login(&self, keys: &LoginKeys) -> Result<(), CouchError> {
        let now = Instant::now();
        let user = lock(&self.users)?.check(&keys.user, now);
        let address = match &keys.address {
            Some(address) => lock(&self.addresses)?.check(address, now),
            None => Ok(()),
        };
        match user.and(address) {
            Ok(()) => Ok(()),
            Err(wait) => Err(CouchError::too_many_logins(wait.as_secs_f64().ceil() as u64)),
        }
    }

    /// Records a password try's outcome: a success forgets the user's failures (not the
    /// address's: one good account must not reset the count of guesses at others).
    pub fn record_login(&self, keys: &LoginKeys, ok: bool) -> Result<(), CouchError> {
        let now = Instant::now();
        if ok {
            lock(&self.users)?.succeeded(&keys.user);
            return Ok(());
        }
        lock(&self.users)?.failed(&keys.user, now);
        if let Some(address) = &keys.address {
            lock(&self.addresses)?.failed(address, now);
        }
        Ok(())
    }
}

fn lock(
    throttle: &Mutex<LoginThrottle>,
) -> Result<std::sync::MutexGuard<'_, LoginThrottle>, CouchError> {
    throttle
        .lock()
        .map_err(|_| CouchError::internal("the login throttle's lock is poisoned"))
}
