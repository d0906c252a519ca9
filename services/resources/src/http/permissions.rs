//! What the path alone says about who may call a route, checked before the read model is
//! queried or a body is read: a user's properties are that user's and the administrator's (to
//! read as to write), the site's the administrator's (Deki: "A user may only read and write
//! their own properties. Admins can read/write anyone's"; "ADMIN access is required to see
//! site properties"). Pages and files are public to read. Whether a write to a page or a file
//! is allowed depends on who created what, which only the streams say: the command decides it
//! ([`crate::resource::access`]), and decides the user and site rules again from the streams.

use super::auth::Caller;
use crate::resource::access::{self, Write};
use axum::http::StatusCode;
use palimpsest_events::resources::Parent;
use palimpsest_web::ApiError;

/// Whether `parent` is one whose properties only some callers may see or write.
fn guarded(parent: Parent) -> bool {
    matches!(parent, Parent::User(_) | Parent::Site)
}

/// Refuses `caller` the properties of `parent` when they are another user's or the site's:
/// 401 without a key, 403 with one that does not own them.
pub fn properties_of(caller: Caller, parent: Parent) -> Result<(), ApiError> {
    if !guarded(parent) {
        return Ok(());
    }
    let caller = caller.writer()?;
    let write = Write::Under {
        parent,
        parent_file: None,
    };
    access::decide(caller.principal(), write)
        .map_err(|refusal| ApiError::new(StatusCode::FORBIDDEN, refusal.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(user_id: i64) -> Caller {
        Caller {
            user_id,
            admin: false,
            known: true,
        }
    }

    const ANONYMOUS: Caller = Caller {
        user_id: 0,
        admin: false,
        known: false,
    };

    const ADMIN: Caller = Caller {
        user_id: 1,
        admin: true,
        known: true,
    };

    fn status(result: Result<(), ApiError>) -> u16 {
        result.map_or_else(|e| e.status.as_u16(), |()| 200)
    }

    #[test]
    fn a_users_properties_are_that_users_and_the_administrators() {
        let parent = Parent::User(10);
        assert_eq!(status(properties_of(user(10), parent)), 200);
        assert_eq!(status(properties_of(ADMIN, parent)), 200);
        assert_eq!(status(properties_of(user(11), parent)), 403);
        assert_eq!(status(properties_of(ANONYMOUS, parent)), 401);
    }

    #[test]
    fn the_sites_properties_are_the_administrators() {
        assert_eq!(status(properties_of(ADMIN, Parent::Site)), 200);
        assert_eq!(status(properties_of(user(10), Parent::Site)), 403);
        assert_eq!(status(properties_of(ANONYMOUS, Parent::Site)), 401);
    }

    #[test]
    fn pages_and_files_are_left_to_the_streams() {
        for parent in [Parent::Page(3), Parent::File(4)] {
            assert_eq!(status(properties_of(ANONYMOUS, parent)), 200);
            assert_eq!(status(properties_of(user(11), parent)), 200);
        }
    }
}
