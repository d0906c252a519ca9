//! Given these events, when this session command, then these events (or this error).

use super::decide::{create_session, delete_session};
use super::*;
use crate::error::DomainError;
use crate::given::{author_given, created_author, group_given};
use crate::group::Group;
use palimpsest_events::pads::{GroupEvent, SessionEvent};

#[test]
fn deleting_a_session_updates_both_lists_before_the_session() {
    let mut session = Session::default();
    session.apply(&SessionEvent::SessionCreated {
        session_id: "s.1".into(),
        group_id: "g.1".into(),
        author_id: "a.1".into(),
        valid_until: 10,
    });
    let g = group_given(&[GroupEvent::GroupCreated {
        group_id: "g.1".into(),
    }]);
    let outcome = delete_session("s.1", &session, &g).expect("decide");
    let order: Vec<&str> = outcome.writes.iter().map(|w| w.stream().0).collect();
    assert_eq!(order, vec!["group", "author", "session"]);
    assert_eq!(
        delete_session("s.2", &Session::default(), &g),
        Err(DomainError::SessionMissing)
    );
}

#[test]
fn sessions_need_group_author_and_a_future_end() {
    let g = group_given(&[GroupEvent::GroupCreated {
        group_id: "g.1".into(),
    }]);
    let a = author_given(&[created_author("a.1")]);
    assert_eq!(
        create_session("s.1", ("g.1", &g), ("a.1", &a), Ok(5), 10),
        Err(DomainError::ValidUntilInPast)
    );
    assert_eq!(
        create_session("s.1", ("g.1", &Group::default()), ("a.1", &a), Ok(50), 10),
        Err(DomainError::GroupMissing)
    );
    let outcome = create_session("s.1", ("g.1", &g), ("a.1", &a), Ok(50), 10).expect("decide");
    let order: Vec<&str> = outcome.writes.iter().map(|w| w.stream().0).collect();
    assert_eq!(order, vec!["session", "group", "author"]);
}
