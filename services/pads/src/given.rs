//! The states the aggregates' given/when/then tests start from: small event builders and the
//! folds of their events (each aggregate's `tests.rs` says when and then).

use crate::author::{Author, Authors};
use crate::group::Group;
use crate::pad::Pad;
use palimpsest_events::pads::{AuthorEvent, AuthorName, GroupEvent, PadEvent};

/// A pad after `events`.
pub(crate) fn pad_given(id: &str, events: &[PadEvent]) -> Pad {
    let mut pad = Pad::absent(id);
    for event in events {
        pad.apply(event);
    }
    pad
}

/// An author after `events`.
pub(crate) fn author_given(events: &[AuthorEvent]) -> Author {
    let mut author = Author::default();
    for event in events {
        author.apply(event);
    }
    author
}

/// A group after `events`.
pub(crate) fn group_given(events: &[GroupEvent]) -> Group {
    let mut group = Group::default();
    for event in events {
        group.apply(event);
    }
    group
}

/// The creation of author `id` (no name, color 1).
pub(crate) fn created_author(id: &str) -> AuthorEvent {
    AuthorEvent::AuthorCreated {
        author_id: id.into(),
        name: AuthorName::Null,
        color_id: 1,
        timestamp: 1,
    }
}

/// The creation of pad `id` whose revision 0 is `changeset` by `author`.
pub(crate) fn created_pad(id: &str, changeset: &str, author: &str) -> Vec<PadEvent> {
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

/// The authors a command read, by id.
pub(crate) fn authors(list: &[(&str, Author)]) -> Authors {
    Authors::new(
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    )
}
