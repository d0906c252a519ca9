//! Who may call an operation ([`Policy`]), and what each kind of principal must then be
//! answered ([`Expected`]).

use super::Principal;
use std::fmt;

/// Who may call an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Anyone, without a credential.
    Public,
    /// Any authenticated user (the other user included).
    AnyUser,
    /// A user on their own objects (their document, org, file, property, section), or the
    /// admin; another user is refused.
    Owner,
    /// A user holding this role (atlas' `editor`, `reviewer`), or the admin.
    Role(&'static str),
    /// The request names the user as the one acting (atlas' `created_by`, `user_id`,
    /// `submitted_by`): only that user, holding this role, may send it; anyone else, the admin
    /// included, is refused (403), since the acting user is the caller.
    Actor(&'static str),
    /// The administrator only.
    Admin,
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Policy::Public => f.write_str("Public"),
            Policy::AnyUser => f.write_str("AnyUser"),
            Policy::Owner => f.write_str("Owner"),
            Policy::Role(role) => write!(f, "Role({role})"),
            Policy::Actor(role) => write!(f, "Actor({role})"),
            Policy::Admin => f.write_str("Admin"),
        }
    }
}

/// What a principal must be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// Not refused: no 401 or 403 (nor the context's own refusal), no 5xx.
    Allowed,
    /// Refused with one of these statuses, in the context's refusal format, appending nothing.
    Refused(&'static [u16]),
    /// Anything but a 5xx (a wrong credential on a public route: CouchDB answers 401 to bad
    /// Basic credentials even where none is needed).
    Unchecked,
}

/// Refusals of a missing or wrong credential.
const UNAUTHENTICATED: &[u16] = &[401];
/// Refusals of another user's objects: forbidden, or not found (not even their existence shown).
const NOT_YOURS: &[u16] = &[403, 404];
/// Refusals of a request acting as someone else.
const FORBIDDEN: &[u16] = &[403];
/// Refusals of a valid credential without the right: forbidden (the admin API of `/v1` and
/// Sync Gateway answer 401 to a credential that is not the admin's).
const NOT_ALLOWED: &[u16] = &[401, 403];

impl Policy {
    /// What `principal` must be answered; `holds(role)` says whether it holds a role.
    pub fn expected(self, principal: Principal, holds: impl Fn(&str) -> bool) -> Expected {
        match (self, principal) {
            (Policy::Public, Principal::Wrong) => Expected::Unchecked,
            (Policy::Public, _) => Expected::Allowed,
            (_, Principal::Nobody | Principal::Wrong) => Expected::Refused(UNAUTHENTICATED),
            (Policy::Actor(role), Principal::User) if holds(role) => Expected::Allowed,
            (Policy::Actor(_), _) => Expected::Refused(FORBIDDEN),
            (_, Principal::Admin) => Expected::Allowed,
            (Policy::AnyUser, _) => Expected::Allowed,
            (Policy::Owner, Principal::User) => Expected::Allowed,
            (Policy::Owner, _) => Expected::Refused(NOT_YOURS),
            (Policy::Role(role), _) if holds(role) => Expected::Allowed,
            (Policy::Role(_), _) => Expected::Refused(NOT_ALLOWED),
            (Policy::Admin, _) => Expected::Refused(NOT_ALLOWED),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_operation_refuses_the_other_user_and_admits_the_user_and_admin() {
        let expect = |p| Policy::Owner.expected(p, |_| false);
        assert_eq!(expect(Principal::Nobody), Expected::Refused(&[401]));
        assert_eq!(expect(Principal::Wrong), Expected::Refused(&[401]));
        assert_eq!(expect(Principal::OtherUser), Expected::Refused(&[403, 404]));
        assert_eq!(expect(Principal::User), Expected::Allowed);
        assert_eq!(expect(Principal::Admin), Expected::Allowed);
    }

    #[test]
    fn a_role_admits_whoever_holds_it() {
        let reviewer = Policy::Role("reviewer");
        assert_eq!(
            reviewer.expected(Principal::User, |r| r == "reviewer"),
            Expected::Allowed
        );
        assert_eq!(
            reviewer.expected(Principal::OtherUser, |r| r == "editor"),
            Expected::Refused(&[401, 403])
        );
    }

    #[test]
    fn an_actor_operation_is_the_named_users_alone() {
        let commit = Policy::Actor("editor");
        let editor = |r: &str| r == "editor";
        assert_eq!(commit.expected(Principal::User, editor), Expected::Allowed);
        assert_eq!(
            commit.expected(Principal::OtherUser, editor),
            Expected::Refused(&[403])
        );
        assert_eq!(
            commit.expected(Principal::Admin, editor),
            Expected::Refused(&[403])
        );
        assert_eq!(
            commit.expected(Principal::User, |_| false),
            Expected::Refused(&[403])
        );
    }

    #[test]
    fn a_public_operation_refuses_nobody() {
        assert_eq!(
            Policy::Public.expected(Principal::Nobody, |_| false),
            Expected::Allowed
        );
        assert_eq!(
            Policy::Admin.expected(Principal::User, |_| false),
            Expected::Refused(&[401, 403])
        );
    }
}
