//! Given these events, when this group command, then these events (or this error).

use super::decide::{create_group_for_mapper, delete_group};
use super::*;
use crate::author::Authors;
use crate::error::DomainError;
use crate::given::{author_given, authors, created_author, created_pad, group_given, pad_given};
use crate::mapping::Mapping;
use crate::outcome::Write;
use crate::session::Session;
use palimpsest_events::pads::{AuthorEvent, GroupEvent, GroupMapperEvent, PadEvent, SessionEvent};
use std::collections::HashMap;

#[test]
fn deleting_a_group_deletes_pads_sessions_and_mappings_in_one_decision() {
    let gid = "g.aaaaaaaaaaaaaaaa";
    let pad_id = format!("{gid}$doc");
    let g = group_given(&[
        GroupEvent::GroupCreated {
            group_id: gid.into(),
        },
        GroupEvent::GroupMapperAdded { mapper: "m".into() },
        GroupEvent::GroupPadAdded {
            pad_id: pad_id.clone(),
        },
        GroupEvent::GroupSessionAdded {
            session_id: "s.1".into(),
        },
    ]);
    let pad = pad_given(&pad_id, &created_pad(&pad_id, "Z:1>1+1$x", ""));
    let mut session = Session::default();
    session.apply(&SessionEvent::SessionCreated {
        session_id: "s.1".into(),
        group_id: gid.into(),
        author_id: "a.x".into(),
        valid_until: 10,
    });
    let a = author_given(&[
        created_author("a.x"),
        AuthorEvent::AuthorSessionAdded {
            session_id: "s.1".into(),
        },
    ]);
    let outcome = delete_group(
        gid,
        &g,
        GroupContents {
            pads: HashMap::from([(pad_id.clone(), pad)]),
            sessions: HashMap::from([("s.1".to_owned(), session)]),
            authors: authors(&[("a.x", a)]),
        },
    )
    .expect("decide");
    assert_eq!(
        outcome.pad_events(&pad_id),
        vec![PadEvent::PadDeleted {
            pad_id: pad_id.clone()
        }]
    );
    assert_eq!(
        outcome.group_events(gid),
        vec![
            GroupEvent::GroupPadRemoved {
                pad_id: pad_id.clone()
            },
            GroupEvent::GroupSessionRemoved {
                session_id: "s.1".into()
            },
            GroupEvent::GroupDeleted {
                group_id: gid.into()
            },
        ]
    );
    assert_eq!(
        outcome.author_events("a.x"),
        vec![AuthorEvent::AuthorSessionRemoved {
            session_id: "s.1".into()
        }]
    );
    assert!(outcome.writes.iter().any(|w| matches!(w, Write::Session(k, e) if k == "s.1" && e == &vec![SessionEvent::SessionDeleted { session_id: "s.1".into() }])));
    assert!(outcome.writes.iter().any(|w| matches!(w, Write::GroupMapper(k, e) if k == "m" && matches!(e[..], [GroupMapperEvent::GroupMappingRemoved { .. }]))));
    assert_eq!(
        delete_group(
            gid,
            &Group::default(),
            GroupContents {
                pads: HashMap::new(),
                sessions: HashMap::new(),
                authors: Authors::default()
            }
        ),
        Err(DomainError::GroupMissing)
    );
}

#[test]
fn a_group_mapper_answers_the_group_it_names_while_it_exists() {
    let mut mapping = Mapping::default();
    mapping.apply_group_mapper(&GroupMapperEvent::GroupMapped {
        group_id: "g.1".into(),
    });
    let g = group_given(&[GroupEvent::GroupCreated {
        group_id: "g.1".into(),
    }]);
    let (outcome, id) = create_group_for_mapper("m", &mapping, Some(&g), "g.new");
    assert!(outcome.is_empty());
    assert_eq!(id, "g.1");
    let (outcome, id) = create_group_for_mapper("m", &mapping, Some(&Group::default()), "g.new");
    assert_eq!(
        id, "g.new",
        "a mapping to a deleted group makes a new group"
    );
    assert!(!outcome.is_empty());
}
