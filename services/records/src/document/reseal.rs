//! Key rotation for one document: everything of it sealed with a previous key is sealed again
//! with the current one, by a `DocumentResealed` event (old events are never edited).

use crate::document::state::DocumentState;
use crate::seal::{Nonces, SealError, SiteKey, decode};
use crate::streams::DocKey;
use palimpsest_events::records::{DocumentEvent, LeftSeal};

/// How many IVs resealing this document may take.
pub fn ivs_needed(state: &DocumentState) -> usize {
    1 + state.left.len()
}

/// The resealing event, or `None` when everything already opens with the current key.
pub fn decide_reseal(
    key: &DocKey,
    state: &DocumentState,
    site: &SiteKey,
    nonces: &mut Nonces,
) -> Result<Option<DocumentEvent>, SealError> {
    let Some(row) = &state.row else {
        return Ok(None);
    };
    let current = |sealed: &str| decode(sealed).map(|b| site.is_current(&b));
    let stale =
        !current(&row.data)? || state.left.iter().any(|(_, d)| !current(d).unwrap_or(false));
    if !stale {
        return Ok(None);
    }
    let again = |sealed: &str, nonces: &mut Nonces| -> Result<String, SealError> {
        let data = site.open(sealed)?;
        site.seal(&data, nonces.take()?)
    };
    let data = again(&row.data, nonces)?;
    let mut left = Vec::with_capacity(state.left.len());
    for (v, sealed) in &state.left {
        left.push(LeftSeal {
            v: *v,
            data: again(sealed, nonces)?,
        });
    }
    Ok(Some(DocumentEvent::DocumentResealed {
        org: key.org.clone(),
        clazz: key.clazz.clone(),
        pk: key.pk.clone(),
        data,
        left,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::evolve;
    use palimpsest_events::records::{LeftRow, Row};
    use serde_json::json;

    fn keys() -> (SiteKey, SiteKey) {
        let old = SiteKey::from_hex(&"01".repeat(32)).expect("old");
        let new = SiteKey::from_hex(&"02".repeat(32))
            .and_then(|k| k.with_previous([&*"01".repeat(32)]))
            .expect("new");
        (old, new)
    }

    #[test]
    fn a_document_sealed_with_an_old_key_is_resealed_once() {
        let (old, new) = keys();
        let key = DocKey {
            org: "o".into(),
            clazz: "A".into(),
            pk: "k".into(),
        };
        let row = |v, data: String| Row {
            org: "o".into(),
            clazz: "A".into(),
            pk: "k".into(),
            v,
            collections: Default::default(),
            indexes: Default::default(),
            data,
        };
        let mut state = evolve(
            DocumentState::default(),
            &DocumentEvent::DocumentCreated {
                row: row(1, old.seal(&json!({"t": 1}), [1; 12]).expect("seal")),
            },
        );
        state = evolve(
            state,
            &DocumentEvent::DocumentUpdated {
                row: row(2, old.seal(&json!({"t": 2}), [2; 12]).expect("seal")),
                left: Some(LeftRow {
                    collections: Default::default(),
                    data: old.seal(&json!({"del": 1}), [3; 12]).expect("seal"),
                }),
            },
        );
        let mut nonces = Nonces::fresh(ivs_needed(&state));
        let event = decide_reseal(&key, &state, &new, &mut nonces)
            .expect("reseal")
            .expect("event");
        let state = evolve(state, &event);
        let only_new = SiteKey::from_hex(&"02".repeat(32)).expect("new alone");
        assert_eq!(
            only_new.open(&state.row.as_ref().expect("row").data),
            Ok(json!({"t": 2}))
        );
        assert_eq!(only_new.open(&state.left[0].1), Ok(json!({"del": 1})));
        assert_eq!(
            decide_reseal(&key, &state, &new, &mut Nonces::fresh(2)),
            Ok(None)
        );
    }
}
