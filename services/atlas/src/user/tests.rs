//! Given these events, when this command, then these events / this error.

use super::*;
use palimpsest_events::atlas::{Timestamp, UserEvent};

fn t(minutes: i64) -> Timestamp {
    Timestamp::parse("2026-04-19T10:00:00Z")
        .expect("time")
        .plus_seconds(minutes * 60)
}

fn given(events: &[UserEvent]) -> UserState {
    events.iter().fold(UserState::default(), evolve)
}

fn issued(user: &str, roles: &[&str], hash: &str, at: i64) -> UserEvent {
    UserEvent::UserTokenIssued {
        user_id: user.into(),
        roles: roles.iter().map(|r| (*r).to_owned()).collect(),
        token_sha256: hash.into(),
        issued_at: t(at),
    }
}

fn issue(user: &str, roles: &[&str], hash: &str, at: i64) -> UserCommand {
    UserCommand::Issue {
        user_id: user.into(),
        roles: roles.iter().map(|r| (*r).to_owned()).collect(),
        token_sha256: hash.into(),
        now: t(at),
    }
}

#[test]
fn given_nothing_when_issued_then_the_roles_are_sorted_and_deduplicated() {
    let events = decide(
        issue("ann", &["reviewer", "editor", "reviewer"], "h1", 0),
        &given(&[]),
    );
    assert_eq!(
        events,
        Ok(vec![issued("ann", &["editor", "reviewer"], "h1", 0)])
    );
}

#[test]
fn given_an_issued_user_when_reissued_then_the_new_hash_replaces_the_old() {
    let state = given(&[issued("ann", &["editor"], "h1", 0)]);
    let events = decide(issue("ann", &["reviewer"], "h2", 5), &state).expect("reissue");
    let after = events.iter().fold(state, evolve);
    assert_eq!(after.token_sha256.as_deref(), Some("h2"));
    assert_eq!(after.roles, vec!["reviewer".to_owned()]);
}

#[test]
fn given_nothing_when_issued_without_roles_then_refused() {
    assert_eq!(
        decide(issue("ann", &[], "h1", 0), &given(&[])),
        Err(UserError::NoRoles)
    );
}

#[test]
fn given_nothing_when_issued_an_unknown_role_then_refused() {
    assert_eq!(
        decide(issue("ann", &["editor", "admin"], "h1", 0), &given(&[])),
        Err(UserError::UnknownRole("admin".into()))
    );
}

#[test]
fn given_nothing_when_issued_to_a_reserved_or_malformed_id_then_refused() {
    for id in [
        "admin",
        "Admin",
        "",
        "import:x.sqlite",
        "a b",
        &"x".repeat(65),
    ] {
        assert_eq!(
            decide(issue(id, &["editor"], "h1", 0), &given(&[])),
            Err(UserError::InvalidUserId(id.to_owned())),
            "{id}"
        );
    }
}

#[test]
fn given_an_issued_user_when_revoked_then_its_token_no_longer_authenticates() {
    let state = given(&[issued("ann", &["editor"], "h1", 0)]);
    let events = decide(UserCommand::Revoke { now: t(1) }, &state).expect("revoke");
    assert_eq!(
        events,
        vec![UserEvent::UserRevoked {
            user_id: "ann".into(),
            revoked_at: t(1)
        }]
    );
    let after = events.iter().fold(state, evolve);
    assert!(!after.active());
    assert_eq!(after.token_sha256, None);
}

#[test]
fn given_a_revoked_user_when_revoked_again_then_nothing_is_appended() {
    let state = given(&[
        issued("ann", &["editor"], "h1", 0),
        UserEvent::UserRevoked {
            user_id: "ann".into(),
            revoked_at: t(1),
        },
    ]);
    assert_eq!(
        decide(UserCommand::Revoke { now: t(2) }, &state),
        Ok(vec![])
    );
}

#[test]
fn given_a_revoked_user_when_reissued_then_it_is_active_again() {
    let state = given(&[
        issued("ann", &["editor"], "h1", 0),
        UserEvent::UserRevoked {
            user_id: "ann".into(),
            revoked_at: t(1),
        },
    ]);
    let events = decide(issue("ann", &["editor"], "h2", 2), &state).expect("reissue");
    let after = events.iter().fold(state, evolve);
    assert!(after.active());
    assert_eq!(after.revoked_at, None);
}

#[test]
fn given_nothing_when_revoked_then_not_found() {
    assert_eq!(
        decide(UserCommand::Revoke { now: t(0) }, &given(&[])),
        Err(UserError::NotFound)
    );
}

#[test]
fn a_reviewer_may_not_approve_their_own_submission_but_the_administrator_may() {
    assert!(!policy::may_approve("ann", "ann", false));
    assert!(policy::may_approve("ann", "rev", false));
    assert!(policy::may_approve("admin", "admin", true));
}
