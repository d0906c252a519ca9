//! `setHTML` against what real Etherpad 2.5.3 stored for the same HTML
//! (`tests/fixtures/etherpad/set_html.json`): for each case, a new empty pad (as
//! `createPad(padID, text="")` leaves it), then `setHTML`; the pad's text, attributes, pool and
//! revision changesets must be Etherpad's, byte for byte.

use super::*;
use crate::outcome::Write;
use crate::pad::{empty_atext, pool_of};
use palimpsest_events::pads::{AText, Attribute, PadEvent};
use serde_json::Value;
use std::collections::HashMap;

fn fixture() -> Value {
    let text = include_str!("../../../tests/fixtures/etherpad/set_html.json");
    serde_json::from_str(text).expect("fixture json")
}

fn new_empty_pad() -> Pad {
    let mut pad = Pad::absent("p");
    pad.exists = true;
    pad.atext = empty_atext();
    pad.head = 0;
    pad
}

fn pad_events(outcome: &Outcome) -> Vec<PadEvent> {
    outcome
        .writes
        .iter()
        .flat_map(|w| match w {
            Write::Pad(_, events) => events.clone(),
            _ => Vec::new(),
        })
        .collect()
}

fn pool_attributes(pool: &Value) -> Vec<Attribute> {
    let map = pool["numToAttrib"].as_object().expect("numToAttrib");
    (0..map.len())
        .map(|i| {
            let a = &map[&i.to_string()];
            (
                a[0].as_str().expect("key").to_owned(),
                a[1].as_str().expect("value").to_owned(),
            )
        })
        .collect()
}

#[test]
fn set_html_stores_what_etherpad_stores() {
    let cases = fixture();
    assert_eq!(
        cases.as_object().map(|c| c.len()),
        Some(20),
        "every recorded case"
    );
    let mut failures = Vec::new();
    for (name, case) in cases.as_object().expect("cases") {
        let html = case["html_in"].as_str().expect("html");
        let pad = new_empty_pad();
        let outcome = match set_html(&pad, html, "", 1, Authors::new(HashMap::new())) {
            Ok(outcome) => outcome,
            Err(e) => {
                failures.push(format!("{name}: refused: {e}"));
                continue;
            }
        };
        let mut after = pad.clone();
        let events = pad_events(&outcome);
        for e in &events {
            after.apply(e);
        }
        let store = &case["store"];
        let want = AText {
            text: store["atext"]["text"].as_str().expect("text").to_owned(),
            attribs: store["atext"]["attribs"]
                .as_str()
                .expect("attribs")
                .to_owned(),
        };
        if after.atext != want {
            failures.push(format!(
                "{name}: atext {:?}, Etherpad {:?}",
                after.atext, want
            ));
        }
        let pool = attributes_of(&after.pool);
        if pool != pool_attributes(&store["pool"]) {
            failures.push(format!("{name}: pool {pool:?}"));
        }
        let changesets: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                PadEvent::RevisionAppended { changeset, .. } => Some(changeset.as_str()),
                _ => None,
            })
            .collect();
        let theirs: Vec<&str> = (1..=store["head"].as_i64().expect("head"))
            .map(|r| {
                case["store_revs"][r.to_string()]["changeset"]
                    .as_str()
                    .expect("changeset")
            })
            .collect();
        if changesets != theirs {
            failures.push(format!(
                "{name}: changesets {changesets:?}, Etherpad {theirs:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_import_attributes_join_the_pool_before_the_author_of_the_blanking_revision() {
    let mut pad = new_empty_pad();
    pad.atext = AText {
        text: "old\n".into(),
        attribs: "|1+4".into(),
    };
    pad.pool = pool_of(&[]);
    let outcome =
        set_html(&pad, "<b>x</b>", "a.ann", 1, Authors::new(HashMap::new())).expect("set");
    let mut after = pad.clone();
    for e in pad_events(&outcome) {
        after.apply(&e);
    }
    assert_eq!(
        attributes_of(&after.pool),
        vec![
            ("bold".to_owned(), "true".to_owned()),
            ("author".to_owned(), "a.ann".to_owned())
        ]
    );
    assert_eq!(after.atext.text, "x\n\n");
    assert_eq!(after.head, 2, "the blanking revision, then the import");
}

#[test]
fn html_etherpad_throws_on_is_malformed() {
    let pad = new_empty_pad();
    for html in ["<li>loose</li>", "<div class=\"ace-line\">x</div>"] {
        assert_eq!(
            set_html(&pad, html, "", 1, Authors::new(HashMap::new())),
            Err(DomainError::Invalid("HTML is malformed".into())),
            "{html}"
        );
    }
    assert_eq!(
        set_html(&Pad::absent("q"), "x", "", 1, Authors::new(HashMap::new())),
        Err(DomainError::PadMissing)
    );
}
