//! Purges "out of transaction": each document is purged by its own decision from its stream
//! state, so a document changed since the candidates were listed is judged as it is now.

use crate::document::state::DocumentState;
use crate::streams::{DocKey, UniqueKey};
use palimpsest_events::records::{
    ClassDeclaration, DocumentEvent, IndexKind, IndexValue, UniqueEvent,
};

/// What a purge removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purge {
    /// The document whatever its state (purgeAllDocs, purgeOrg without `z`, purgeDlvDocs).
    Everything,
    /// Zombies and `del` rows whose `z` is before this version (purgeOrg / purgeOrgs with `z`).
    Before(i64),
}

/// The events purging one document, and the unique values it releases.
pub fn decide_purge(
    key: &DocKey,
    class: &ClassDeclaration,
    state: &DocumentState,
    purge: Purge,
) -> (Vec<DocumentEvent>, Vec<(UniqueKey, UniqueEvent)>) {
    let Some(row) = &state.row else {
        return (Vec::new(), Vec::new());
    };
    let purged = DocumentEvent::DocumentPurged {
        org: key.org.clone(),
        clazz: key.clazz.clone(),
        pk: key.pk.clone(),
    };
    match purge {
        Purge::Everything => {
            let releases = class
                .indexes
                .iter()
                .filter(|ix| ix.kind == IndexKind::Uniq)
                .filter_map(|ix| match row.indexes.get(&ix.name) {
                    Some(IndexValue::Text(value)) => Some((
                        UniqueKey::new(ix.scope, &key.org, &key.clazz, &ix.name, value),
                        UniqueEvent::UniqueReleased { owner: key.owner() },
                    )),
                    _ => None,
                })
                .collect();
            (vec![purged], releases)
        }
        Purge::Before(before) if state.zombie && row.v < before => (vec![purged], Vec::new()),
        Purge::Before(before) if state.left.iter().any(|(z, _)| *z < before) => (
            vec![DocumentEvent::LeftRowsPurged {
                org: key.org.clone(),
                clazz: key.clazz.clone(),
                pk: key.pk.clone(),
                before,
            }],
            Vec::new(),
        ),
        Purge::Before(_) => (Vec::new(), Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::evolve;
    use palimpsest_events::records::Row;

    fn class() -> ClassDeclaration {
        serde_json::from_value(serde_json::json!({"clazz": "A", "sync": true, "pk": ["p1"], "indexes": [{"name": "u", "type": "uniq"}]}))
            .expect("class")
    }

    fn key() -> DocKey {
        DocKey {
            org: "o".into(),
            clazz: "A".into(),
            pk: "k".into(),
        }
    }

    fn row(v: i64) -> Row {
        Row {
            org: "o".into(),
            clazz: "A".into(),
            pk: "k".into(),
            v,
            collections: Default::default(),
            indexes: [("u".to_owned(), IndexValue::Text("h".into()))].into(),
            data: String::new(),
        }
    }

    #[test]
    fn an_old_zombie_is_purged_and_a_young_one_kept() {
        let zombie = evolve(
            DocumentState::default(),
            &DocumentEvent::DocumentZombified {
                row: Row {
                    indexes: Default::default(),
                    ..row(100)
                },
            },
        );
        assert_eq!(
            decide_purge(&key(), &class(), &zombie, Purge::Before(101))
                .0
                .len(),
            1
        );
        assert!(
            decide_purge(&key(), &class(), &zombie, Purge::Before(100))
                .0
                .is_empty()
        );
    }

    #[test]
    fn a_live_document_loses_only_its_old_del_rows() {
        let mut state = evolve(
            DocumentState::default(),
            &DocumentEvent::DocumentCreated { row: row(50) },
        );
        state = evolve(
            state,
            &DocumentEvent::DocumentUpdated {
                row: row(60),
                left: Some(palimpsest_events::records::LeftRow {
                    collections: Default::default(),
                    data: String::new(),
                }),
            },
        );
        let (events, _) = decide_purge(&key(), &class(), &state, Purge::Before(61));
        assert!(matches!(
            events[..],
            [DocumentEvent::LeftRowsPurged { before: 61, .. }]
        ));
        let state = evolve(state, &events[0]);
        assert!(
            decide_purge(&key(), &class(), &state, Purge::Before(61))
                .0
                .is_empty()
        );
    }

    #[test]
    fn purging_everything_releases_unique_values() {
        let state = evolve(
            DocumentState::default(),
            &DocumentEvent::DocumentCreated { row: row(50) },
        );
        let (events, releases) = decide_purge(&key(), &class(), &state, Purge::Everything);
        assert_eq!((events.len(), releases.len()), (1, 1));
        assert!(
            decide_purge(
                &key(),
                &class(),
                &DocumentState::default(),
                Purge::Everything
            )
            .0
            .is_empty()
        );
    }
}
