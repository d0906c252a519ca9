//! Given these events, when this pad command, then these events (or this error).

use super::decide::chat::append_chat_message;
use super::decide::creation::{create_group_pad, create_pad};
use super::decide::marks::{read_only_id, save_revision};
use super::decide::submission::submit_changeset;
use super::decide::text::{append_text, set_text};
use super::decide::transfer::{copy_pad, delete_pad, move_pad};
use super::*;
use crate::author::Authors;
use crate::changes::AttributePool;
use crate::error::DomainError;
use crate::given::{author_given, authors, created_author, created_pad, group_given, pad_given};
use crate::group::{Group, Groups};
use palimpsest_events::pads::{AuthorEvent, ChatTime, GroupEvent, PadEvent};
use std::collections::HashMap;

#[test]
fn creating_a_pad_appends_revision_zero_and_links_its_author() {
    let pad = Pad::absent("p");
    let a = author_given(&[created_author("a.x")]);
    let outcome = create_pad(&pad, Some("hi"), "a.x", 5, authors(&[("a.x", a)])).expect("decide");
    assert_eq!(
        outcome.pad_events("p"),
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
        outcome.author_events("a.x"),
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
    let outcome = create_group_pad(
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
        outcome.group_events("g.aaaaaaaaaaaaaaaa"),
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
    let outcome = set_text(&pad, "ho", "", 6, Authors::default()).expect("decide");
    assert!(matches!(
        &outcome.pad_events("p")[..],
        [PadEvent::RevisionAppended { rev: 1, .. }]
    ));
}

#[test]
fn append_text_inserts_before_the_final_newline() {
    let pad = pad_given("p", &created_pad("p", "Z:1>2+2$hi", ""));
    let outcome = append_text(&pad, "!", "", 6, Authors::default()).expect("decide");
    let [PadEvent::RevisionAppended { changeset, rev, .. }] = &outcome.pad_events("p")[..] else {
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
    let (outcome, rev) =
        submit_changeset(&pad, submission, &since, Authors::default()).expect("decide");
    assert_eq!(rev, 2);
    let mut after = pad.clone();
    for e in outcome.pad_events("p") {
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
    let outcome = delete_pad(&pad, groups, authors(&[("a.x", a)])).expect("decide");
    assert_eq!(
        outcome.pad_events(id),
        vec![PadEvent::PadDeleted { pad_id: id.into() }]
    );
    assert_eq!(
        outcome.group_events("g.aaaaaaaaaaaaaaaa"),
        vec![GroupEvent::GroupPadRemoved { pad_id: id.into() }]
    );
    assert_eq!(
        outcome.author_events("a.x"),
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
    let outcome = copy_pad(transfer(source.clone(), dest, true)).expect("decide");
    let events = outcome.pad_events("d");
    assert!(
        matches!(&events[..], [PadEvent::PadDeleted { .. }, PadEvent::PadCopied { source_id, .. }] if source_id == "s")
    );
    assert_eq!(
        outcome.checks,
        vec![("pad", "s".to_owned())],
        "the source must not move meanwhile"
    );
}

#[test]
fn a_move_writes_the_destination_before_deleting_the_source() {
    let source = pad_given("s", &created_pad("s", "Z:1>1+1$s", ""));
    let outcome = move_pad(transfer(source, Pad::absent("d"), false)).expect("decide");
    let order: Vec<&str> = outcome.writes.iter().map(|w| w.stream().1).collect();
    assert_eq!(order, vec!["d", "s"]);
    assert_eq!(
        outcome.pad_events("s"),
        vec![PadEvent::PadDeleted { pad_id: "s".into() }]
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
    let outcome = save_revision(&pad, None, api.clone(), "id".into(), 2).expect("decide");
    assert!(outcome.pad_events("p").is_empty());
    assert_eq!(outcome.author_events("a.api2").len(), 1);
    assert_eq!(
        save_revision(&pad, Some(4), api, "id".into(), 2),
        Err(DomainError::RevAboveHead)
    );
}

#[test]
fn a_read_only_id_is_given_once() {
    let pad = pad_given("p", &created_pad("p", "Z:1>1+1$x", ""));
    let (outcome, id) = read_only_id(&pad, "r.first".into()).expect("decide");
    assert_eq!(id, "r.first");
    let mut later = pad.clone();
    for e in outcome.pad_events("p") {
        later.apply(&e);
    }
    let (outcome, id) = read_only_id(&later, "r.second".into()).expect("decide");
    assert!(outcome.is_empty());
    assert_eq!(id, "r.first");
}

#[test]
fn a_chat_message_to_a_missing_pad_creates_it_first() {
    let message = ChatMessage {
        text: "hi".into(),
        author_id: None,
        time: ChatTime::Millis(7),
    };
    let outcome =
        append_chat_message(&Pad::absent("p"), message, 7, Authors::default()).expect("decide");
    let events = outcome.pad_events("p");
    assert!(matches!(events[0], PadEvent::PadCreated { .. }));
    assert!(matches!(
        events[1],
        PadEvent::RevisionAppended { rev: 0, .. }
    ));
    assert!(
        matches!(&events[2], PadEvent::ChatMessageAppended { index: 0, text, .. } if text == "hi")
    );
}
