//! Given these events, when this author command, then these events.

use super::decide::create_author_for_mapper;
use super::*;
use crate::mapping::Mapping;
use palimpsest_events::pads::{AuthorEvent, AuthorName};

#[test]
fn an_author_mapper_answers_its_author_or_maps_a_new_one() {
    let new = NewAuthor {
        author_id: "a.new".into(),
        color_id: 3,
    };
    let (outcome, id) = create_author_for_mapper("app", &Mapping::default(), Some("zed"), &new, 9);
    assert_eq!(id, "a.new");
    assert_eq!(
        outcome.author_events("a.new"),
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
    let (outcome, id) = create_author_for_mapper("app", &mapped, None, &new, 9);
    assert_eq!(id, "a.old");
    assert_eq!(
        outcome.author_events("a.old"),
        vec![AuthorEvent::AuthorSeen { timestamp: 9 }]
    );
}
