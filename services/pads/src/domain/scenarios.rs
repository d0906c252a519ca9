//! Given these events, when this command, then these events (or this error).

use super::author_commands::{NewAuthor, create_author_for_mapper};
use super::group_commands::{GroupContents, create_group_for_mapper, delete_group};
use super::pad_changes::{Recorded, Submission, submit_changeset};
use super::pad_chat::{ChatMessage, append_chat_message};
use super::pad_creation::{create_group_pad, create_pad};
use super::pad_marks::{ApiAuthor, read_only_id, save_revision};
use super::pad_text::{append_text, set_text};
use super::pad_transfer::{Transfer, copy_pad, delete_pad, move_pad};
use super::session_commands::{create_session, delete_session};
use super::*;
use crate::changes::AttributePool;
use palimpsest_events::pads::{
    AuthorEvent, AuthorName, ChatTime, GroupEvent, GroupMapperEvent, PadEvent, SessionEvent,
};
use std::collections::HashMap;

fn pad_given(id: &str, events: &[PadEvent]) -> Pad {
    let mut p = Pad::absent(id);
    for e in events {
        p.apply(e);
    }
    p
}

fn author_given(events: &[AuthorEvent]) -> Author {
    let mut a = Author::default();
    for e in events {
        a.apply(e);
    }
    a
}

fn group_given(events: &[GroupEvent]) -> Group {
    let mut g = Group::default();
    for e in events {
        g.apply(e);
    }
    g
}

fn created_author(id: &str) -> AuthorEvent {
    AuthorEvent::AuthorCreated {
        author_id: id.into(),
        name: AuthorName::Null,
        color_id: 1,
        timestamp: 1,
    }
}

fn created_pad(id: &str, changeset: &str, author: &str) -> Vec<PadEvent> {
    vec![
        PadEvent::PadCreated { pad_id: id.into() },
        PadEvent::RevisionAppended {
            rev: 0,
            changeset: changeset.into(),
            author: author.into(),
            timestamp: 1,
            new_attributes: vec![],
        },
    ]
}

fn authors(list: &[(&str, Author)]) -> Authors {
    Authors::new(
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    )
}

#[test]
fn creating_a_pad_appends_revision_zero_and_links_its_author() {
    let pad = Pad::absent("p");
    let a = author_given(&[created_author("a.x")]);
    let d = create_pad(&pad, Some("hi"), "a.x", 5, authors(&[("a.x", a)])).expect("decide");
    assert_eq!(
        d.pad_events("p"),
        vec![
            PadEvent::PadCreated { pad_id: "p".into() },
            PadEvent::RevisionAppended {
                rev: 0,
                changeset: "Z:1>2+2$hi".into(),
                author: "a.x".into(),
                timestamp: 5,
                new_attributes: vec![],
            }
        ]
    );
    assert_eq!(
        d.author_events("a.x"),
        vec![AuthorEvent::AuthorPadLinked { pad_id: "p".into() }]
    );
}

#[test]
fn creating_an_existing_pad_is_refused() {
    let pad = pad_given("p", &created_pad("p", "Z:1>2+2$hi", ""));
    assert_eq!(
        create_pad(&pad, None, "", 5, Authors::default()),
        Err(DomainError::PadExists)
    );
}

#[test]
fn a_group_pad_needs_its_group() {
    let pad = Pad::absent("g.aaaaaaaaaaaaaaaa$x");
    assert_eq!(
        create_group_pad(
            "g.aaaaaaaaaaaaaaaa",
            &Group::default(),
            &pad,
            None,
            "",
            5,
            Authors::default()
        ),
        Err(DomainError::GroupMissing)
    );
    let g = group_given(&[GroupEvent::GroupCreated {
        group_id: "g.aaaaaaaaaaaaaaaa".into(),
    }]);
    let d = create_group_pad(
        "g.aaaaaaaaaaaaaaaa",
        &g,
        &pad,
        Some(""),
        "",
        5,
        Authors::default(),
    )
    .expect("decide");
    assert_eq!(
        d.group_events("g.aaaaaaaaaaaaaaaa"),
        vec![GroupEvent::GroupPadAdded {
            pad_id: "g.aaaaaaaaaaaaaaaa$x".into()
        }]
    );
}

#[test]
fn set_text_with_the_same_text_appends_nothing() {
    let pad = pad_given("p", &created_pad("p", "Z:1>2+2$hi", ""));
    assert_eq!(pad.atext.text, "hi\n");
    assert!(
        set_text(&pad, "hi\n", "", 6, Authors::default())
            .expect("decide")
            .is_empty()
    );
    let d = set_text(&pad, "ho", "", 6, Authors::default()).expect("decide");
    assert!(matches!(
        &d.pad_events("p")[..],
        [PadEvent::RevisionAppended { rev: 1, .. }]
    ));
}

#[test]
fn append_text_inserts_before_the_final_newline() {
    let pad = pad_given("p", &created_pad("p", "Z:1>2+2$hi", ""));
    let d = append_text(&pad, "!", "", 6, Authors::default()).expect("decide");
    let [PadEvent::RevisionAppended { changeset, rev, .. }] = &d.pad_events("p")[..] else {
        panic!("one revision expected");
    };
    assert_eq!((changeset.as_str(), *rev), ("Z:3>1=2+1$!", 1));
    assert_eq!(
        append_text(&Pad::absent("q"), "!", "", 6, Authors::default()),
        Err(DomainError::PadMissing)
    );
}

#[test]
fn a_late_changeset_is_transformed_over_the_revisions_since_its_base() {
    let mut events = created_pad("p", "Z:1>5+5$hello", "");
    events.push(PadEvent::RevisionAppended {
        rev: 1,
        changeset: "Z:6>1+1$A".into(),
        author: "".into(),
        timestamp: 2,
        new_attributes: vec![],
    });
    let pad = pad_given("p", &events);
    assert_eq!(pad.atext.text, "Ahello\n");
    let since = [Recorded {
        changeset: "Z:6>1+1$A".into(),
        author: "".into(),
    }];
    let submission = Submission {
        base_rev: 0,
        changeset: "Z:6>1=5+1$B".into(),
        pool: AttributePool::new(),
        author: "".into(),
        now: 3,
    };
    let (d, rev) = submit_changeset(&pad, submission, &since, Authors::default()).expect("decide");
    assert_eq!(rev, 2);
    let mut after = pad.clone();
    for e in d.pad_events("p") {
        after.apply(&e);
    }
    assert_eq!(after.atext.text, "AhelloB\n");
}

#[test]
fn a_changeset_naming_another_author_is_refused() {
    let pad = pad_given("p", &created_pad("p", "Z:1>5+5$hello", ""));
    let mut pool = AttributePool::new();
    pool.put_attrib("author", "a.other");
    let submission = Submission {
        base_rev: 0,
        changeset: "Z:6>1*0+1$x".into(),
        pool,
        author: "a.me".into(),
        now: 3,
    };
    let refused = submit_changeset(&pad, submission, &[], Authors::default());
    assert!(matches!(refused, Err(DomainError::BadChangeset(m)) if m.contains("a.other")));
}

#[test]
fn deleting_a_pad_deletes_it_unlists_it_and_unlinks_its_authors() {
    let id = "g.aaaaaaaaaaaaaaaa$doc";
    let pad = pad_given(id, &created_pad(id, "Z:1>2+2$hi", "a.x"));
    let g = group_given(&[
        GroupEvent::GroupCreated {
            group_id: "g.aaaaaaaaaaaaaaaa".into(),
        },
        GroupEvent::GroupPadAdded { pad_id: id.into() },
    ]);
    let a = author_given(&[
        created_author("a.x"),
        AuthorEvent::AuthorPadLinked { pad_id: id.into() },
    ]);
    let groups = Groups::new(HashMap::from([("g.aaaaaaaaaaaaaaaa".to_owned(), g)]));
    let d = delete_pad(&pad, groups, authors(&[("a.x", a)])).expect("decide");
    assert_eq!(
        d.pad_events(id),
        vec![PadEvent::PadDeleted { pad_id: id.into() }]
    );
    assert_eq!(
        d.group_events("g.aaaaaaaaaaaaaaaa"),
        vec![GroupEvent::GroupPadRemoved { pad_id: id.into() }]
    );
    assert_eq!(
        d.author_events("a.x"),
        vec![AuthorEvent::AuthorPadUnlinked { pad_id: id.into() }]
    );
}

fn transfer(source: Pad, destination: Pad, force: bool) -> Transfer {
    Transfer {
        source,
        destination,
        groups: Groups::default(),
        authors: Authors::default(),
        force,
    }
}

#[test]
fn copying_onto_an_existing_pad_needs_force_and_replaces_it() {
    let source = pad_given("s", &created_pad("s", "Z:1>1+1$s", ""));
    let dest = pad_given("d", &created_pad("d", "Z:1>1+1$d", ""));
    assert_eq!(
        copy_pad(transfer(source.clone(), dest.clone(), false)),
        Err(DomainError::DestinationExists)
    );
    let d = copy_pad(transfer(source.clone(), dest, true)).expect("decide");
    let events = d.pad_events("d");
    assert!(
        matches!(&events[..], [PadEvent::PadDeleted { .. }, PadEvent::PadCopied { source_id, .. }] if source_id == "s")
    );
    assert_eq!(
        d.checks,
        vec![("pad", "s".to_owned())],
        "the source must not move meanwhile"
    );
}

#[test]
fn a_move_writes_the_destination_before_deleting_the_source() {
    let source = pad_given("s", &created_pad("s", "Z:1>1+1$s", ""));
    let d = move_pad(transfer(source, Pad::absent("d"), false)).expect("decide");
    let order: Vec<&str> = d.writes.iter().map(|w| w.stream().1).collect();
    assert_eq!(order, vec!["d", "s"]);
    assert_eq!(
        d.pad_events("s"),
        vec![PadEvent::PadDeleted { pad_id: "s".into() }]
    );
}

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
    let d = delete_group(
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
        d.pad_events(&pad_id),
        vec![PadEvent::PadDeleted {
            pad_id: pad_id.clone()
        }]
    );
    assert_eq!(
        d.group_events(gid),
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
        d.author_events("a.x"),
        vec![AuthorEvent::AuthorSessionRemoved {
            session_id: "s.1".into()
        }]
    );
    assert!(d.writes.iter().any(|w| matches!(w, Write::Session(k, e) if k == "s.1" && e == &vec![SessionEvent::SessionDeleted { session_id: "s.1".into() }])));
    assert!(d.writes.iter().any(|w| matches!(w, Write::GroupMapper(k, e) if k == "m" && matches!(e[..], [GroupMapperEvent::GroupMappingRemoved { .. }]))));
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
    let d = delete_session("s.1", &session, &g).expect("decide");
    let order: Vec<&str> = d.writes.iter().map(|w| w.stream().0).collect();
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
    let d = create_session("s.1", ("g.1", &g), ("a.1", &a), Ok(50), 10).expect("decide");
    let order: Vec<&str> = d.writes.iter().map(|w| w.stream().0).collect();
    assert_eq!(order, vec!["session", "group", "author"]);
}

#[test]
fn mappers_return_what_they_already_name() {
    let mut mapping = Mapping::default();
    mapping.apply_group_mapper(&GroupMapperEvent::GroupMapped {
        group_id: "g.1".into(),
    });
    let g = group_given(&[GroupEvent::GroupCreated {
        group_id: "g.1".into(),
    }]);
    let (d, id) = create_group_for_mapper("m", &mapping, Some(&g), "g.new");
    assert!(d.is_empty());
    assert_eq!(id, "g.1");
    let (d, id) = create_group_for_mapper("m", &mapping, Some(&Group::default()), "g.new");
    assert_eq!(
        id, "g.new",
        "a mapping to a deleted group makes a new group"
    );
    assert!(!d.is_empty());

    let new = NewAuthor {
        author_id: "a.new".into(),
        color_id: 3,
    };
    let (d, id) = create_author_for_mapper("app", &Mapping::default(), Some("zed"), &new, 9);
    assert_eq!(id, "a.new");
    assert_eq!(
        d.author_events("a.new"),
        vec![
            AuthorEvent::AuthorCreated {
                author_id: "a.new".into(),
                name: AuthorName::Null,
                color_id: 3,
                timestamp: 9
            },
            AuthorEvent::AuthorNameSet { name: "zed".into() },
        ]
    );
    let mapped = Mapping {
        target: Some("a.old".into()),
    };
    let (d, id) = create_author_for_mapper("app", &mapped, None, &new, 9);
    assert_eq!(id, "a.old");
    assert_eq!(
        d.author_events("a.old"),
        vec![AuthorEvent::AuthorSeen { timestamp: 9 }]
    );
}

#[test]
fn saving_a_saved_revision_again_only_creates_the_api_author() {
    let mut events = created_pad("p", "Z:1>1+1$x", "");
    events.push(PadEvent::RevisionSaved {
        saved: palimpsest_events::pads::SavedRevision {
            rev_num: 0,
            saved_by_id: "a.api".into(),
            label: "Saved through API call".into(),
            timestamp: 1,
            id: "0123456789abcdef0123".into(),
        },
    });
    let pad = pad_given("p", &events);
    let api = ApiAuthor {
        author_id: "a.api2".into(),
        color_id: 0,
    };
    let d = save_revision(&pad, None, api.clone(), "id".into(), 2).expect("decide");
    assert!(d.pad_events("p").is_empty());
    assert_eq!(d.author_events("a.api2").len(), 1);
    assert_eq!(
        save_revision(&pad, Some(4), api, "id".into(), 2),
        Err(DomainError::RevAboveHead)
    );
}

#[test]
fn a_read_only_id_is_given_once() {
    let pad = pad_given("p", &created_pad("p", "Z:1>1+1$x", ""));
    let (d, id) = read_only_id(&pad, "r.first".into()).expect("decide");
    assert_eq!(id, "r.first");
    let mut later = pad.clone();
    for e in d.pad_events("p") {
        later.apply(&e);
    }
    let (d, id) = read_only_id(&later, "r.second".into()).expect("decide");
    assert!(d.is_empty());
    assert_eq!(id, "r.first");
}

#[test]
fn a_chat_message_to_a_missing_pad_creates_it_first() {
    let message = ChatMessage {
        text: "hi".into(),
        author_id: None,
        time: ChatTime::Millis(7),
    };
    let d = append_chat_message(&Pad::absent("p"), message, 7, Authors::default()).expect("decide");
    let events = d.pad_events("p");
    assert!(matches!(events[0], PadEvent::PadCreated { .. }));
    assert!(matches!(
        events[1],
        PadEvent::RevisionAppended { rev: 0, .. }
    ));
    assert!(
        matches!(&events[2], PadEvent::ChatMessageAppended { index: 0, text, .. } if text == "hi")
    );
}
