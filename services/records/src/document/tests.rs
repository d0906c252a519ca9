//! Given / when / then on the document decider, one test per rule.

use super::*;
use crate::hash::sha16;
use crate::seal::SiteKey;
use crate::streams::{DocKey, UniqueKey};
use palimpsest_events::records::{
    ClassDeclaration, CollectionKey, DocumentEvent, Scope, UniqueEvent,
};
use serde_json::{Map, Value, json};
use std::sync::Arc;

fn key() -> SiteKey {
    SiteKey::from_hex(&"42".repeat(32)).expect("key")
}

fn article(sync: bool) -> Arc<ClassDeclaration> {
    Arc::new(
        serde_json::from_value(json!({"clazz": "Article", "sync": sync, "pk": ["p1"],
            "collections": [{"name": "auteurs", "props": ["auteurs"], "list": true},
                            {"name": "auteur", "props": ["auteur"]}],
            "indexes": [{"name": "code", "type": "uniq"}, {"name": "isbn", "type": "uniq", "scope": "G"},
                        {"name": "taille", "type": "int"}]}))
        .expect("class"),
    )
}

fn data(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => panic!("object"),
    }
}

fn insert(org: &str, value: Value) -> Write {
    Write {
        class: article(true),
        org: org.into(),
        action: Action::Insert(data(value)),
    }
}

fn doc(org: &str, p1: &str) -> DocKey {
    DocKey {
        org: org.into(),
        clazz: "Article".into(),
        pk: sha16(p1),
    }
}

/// A world of streams: folds what each decision appended, like the log would.
#[derive(Default)]
struct Given {
    view: View,
}

impl Given {
    fn when(&self, time: i64, writes: Vec<Write>) -> Result<Outcome, crate::RecordsError> {
        let prepared = prepare(writes)?;
        decide(
            time,
            &prepared,
            &self.view,
            &key(),
            &mut crate::seal::Nonces::fresh(2 * prepared.len()),
        )
    }

    fn then(mut self, time: i64, writes: Vec<Write>) -> Given {
        let outcome = self.when(time, writes).expect("decided");
        self.apply(&outcome);
        self
    }

    fn apply(&mut self, outcome: &Outcome) {
        for (k, e) in &outcome.documents {
            let s = self.view.docs.remove(k).unwrap_or_default();
            self.view.docs.insert(k.clone(), evolve(s, e));
        }
        for (k, events) in &outcome.uniques {
            let mut s = self.view.uniques.remove(k).unwrap_or_default();
            for e in events {
                s = evolve_unique(s, e);
            }
            self.view.uniques.insert(k.clone(), s);
        }
    }
}

fn created(p1: &str, at: i64) -> Given {
    Given::default().then(at, vec![insert("demo", json!({"clazz": "Article", "p1": p1, "auteurs": ["Hugo"], "auteur": "Hugo", "code": "C-1", "isbn": "I-1", "titre": "secret"}))])
}

#[test]
fn create_writes_the_row_at_the_operation_time_with_sealed_data() {
    let outcome = Given::default()
        .when(
            1000,
            vec![insert(
                "demo",
                json!({"p1": "a1", "auteurs": ["Hugo"], "taille": 3, "titre": "Les Misérables"}),
            )],
        )
        .expect("created");
    let (k, DocumentEvent::DocumentCreated { row }) = &outcome.documents[0] else {
        panic!("created: {outcome:?}");
    };
    assert_eq!(k, &doc("demo", "a1"));
    assert_eq!(row.v, 1000);
    assert_eq!(
        row.collections["auteurs"],
        CollectionKey::Many(vec![sha16("Hugo")])
    );
    assert!(!serde_json::to_string(row).expect("json").contains("Mis"));
    let opened = key().open(&row.data).expect("open");
    assert_eq!(opened["titre"], "Les Misérables");
    assert_eq!(
        (
            opened["clazz"].clone(),
            opened["org"].clone(),
            opened["v"].clone(),
            opened["x"].clone()
        ),
        (json!("Article"), json!("demo"), json!(1000), json!(0))
    );
    assert_eq!(outcome.replies[0]["pk"], json!(sha16("a1")));
}

#[test]
fn a_stored_version_at_or_after_the_time_is_regver() {
    let given = created("a1", 2000);
    let update = |_time: i64| Write {
        class: article(true),
        org: "demo".into(),
        action: Action::Update(data(json!({"p1": "a1"})), 2000),
    };
    let err = given.when(2000, vec![update(2000)]).expect_err("regver");
    assert_eq!(err.code(), "REGVER");
    let err = given.when(1500, vec![update(1500)]).expect_err("regver");
    assert_eq!(err.code(), "REGVER");
    assert!(
        given.when(2001, vec![update(2001)]).is_ok(),
        "retried with a new time"
    );
}

#[test]
fn create_requires_absence_even_of_a_zombie() {
    let given = created("a1", 1000);
    assert_eq!(
        given
            .when(1001, vec![insert("demo", json!({"p1": "a1"}))])
            .expect_err("exists")
            .code(),
        "EXISTS"
    );
    let zombie = given.then(
        1002,
        vec![Write {
            class: article(true),
            org: "demo".into(),
            action: Action::Delete(sha16("a1")),
        }],
    );
    assert_eq!(
        zombie
            .when(1003, vec![insert("demo", json!({"p1": "a1"}))])
            .expect_err("exists")
            .code(),
        "EXISTS"
    );
}

#[test]
fn update_requires_the_version_read() {
    let given = created("a1", 1000);
    let stale = Write {
        class: article(true),
        org: "demo".into(),
        action: Action::Update(data(json!({"p1": "a1"})), 999),
    };
    assert_eq!(
        given.when(1001, vec![stale]).expect_err("conflict").code(),
        "CONFLICT"
    );
    let missing = Write {
        class: article(true),
        org: "demo".into(),
        action: Action::Update(data(json!({"p1": "zz"})), 1),
    };
    assert_eq!(
        given.when(1001, vec![missing]).expect_err("missing").code(),
        "NOTFOUND"
    );
}

#[test]
fn deleting_a_sync_document_leaves_a_zombie_with_minimal_data() {
    let given = created("a1", 1000);
    let outcome = given
        .when(
            1001,
            vec![Write {
                class: article(true),
                org: "demo".into(),
                action: Action::Delete(sha16("a1")),
            }],
        )
        .expect("deleted");
    let DocumentEvent::DocumentZombified { row } = &outcome.documents[0].1 else {
        panic!("zombie: {outcome:?}");
    };
    assert_eq!(row.v, 1001);
    assert!(row.indexes.is_empty(), "a zombie holds no index value");
    assert_eq!(
        row.collections["auteur"],
        CollectionKey::One(sha16("Hugo")),
        "subscribers still find it"
    );
    let opened = key().open(&row.data).expect("open");
    assert_eq!(
        opened,
        json!({"clazz": "Article", "org": "demo", "p1": "a1", "v": 1001, "x": 1})
    );
}

#[test]
fn deleting_a_nosync_document_purges_it() {
    let given = Given::default().then(
        1000,
        vec![Write {
            class: article(false),
            org: "demo".into(),
            action: Action::Insert(data(json!({"p1": "a1"}))),
        }],
    );
    let outcome = given
        .when(
            1001,
            vec![Write {
                class: article(false),
                org: "demo".into(),
                action: Action::Delete(sha16("a1")),
            }],
        )
        .expect("purged");
    assert!(matches!(
        outcome.documents[0].1,
        DocumentEvent::DocumentPurged { .. }
    ));
}

#[test]
fn changing_a_collection_value_writes_a_del_row_with_the_old_value() {
    let given = created("a1", 1000);
    let outcome = given
        .when(
            1001,
            vec![Write {
                class: article(true),
                org: "demo".into(),
                action: Action::Update(
                    data(json!({"p1": "a1", "auteurs": ["Hugo", "Zola"], "auteur": "Victor"})),
                    1000,
                ),
            }],
        )
        .expect("updated");
    let DocumentEvent::DocumentUpdated {
        row,
        left: Some(left),
    } = &outcome.documents[0].1
    else {
        panic!("del row: {outcome:?}");
    };
    assert_eq!(
        row.collections["auteur"],
        CollectionKey::One(sha16("Victor"))
    );
    assert_eq!(
        left.collections.get("auteur"),
        Some(&CollectionKey::One(sha16("Hugo")))
    );
    assert!(
        !left.collections.contains_key("auteurs"),
        "Hugo is still an author"
    );
    assert_eq!(
        key().open(&left.data).expect("open"),
        json!({"p1": "a1", "v": 1001, "del": 1})
    );
}

#[test]
fn removing_a_value_from_a_list_collection_names_only_the_removed_value() {
    let given = created("a1", 1000);
    let outcome = given
        .when(
            1001,
            vec![Write {
                class: article(true),
                org: "demo".into(),
                action: Action::Update(
                    data(json!({"p1": "a1", "auteurs": ["Zola"], "auteur": "Hugo"})),
                    1000,
                ),
            }],
        )
        .expect("updated");
    let DocumentEvent::DocumentUpdated {
        left: Some(left), ..
    } = &outcome.documents[0].1
    else {
        panic!("del row: {outcome:?}");
    };
    assert_eq!(
        left.collections["auteurs"],
        CollectionKey::Many(vec![sha16("Hugo")])
    );
    assert_eq!(left.collections.len(), 1);
}

#[test]
fn a_unique_value_is_claimed_by_its_document_and_refused_to_another() {
    let given = created("a1", 1000);
    let lock = UniqueKey::new(Scope::O, "demo", "Article", "code", &sha16("C-1"));
    assert_eq!(
        given.view.uniques[&lock].owner,
        Some(doc("demo", "a1").owner())
    );
    let err = given
        .when(
            1001,
            vec![insert("demo", json!({"p1": "a2", "code": "C-1"}))],
        )
        .expect_err("unique");
    assert_eq!(err.code(), "UNIQUE");
    let holder = doc("demo", "a1").owner();
    assert!(
        err.to_string().contains(&holder[2]),
        "the holder is named within its organisation: {err}"
    );
    assert!(
        given
            .when(
                1001,
                vec![insert("other", json!({"p1": "a2", "code": "C-1"}))]
            )
            .is_ok(),
        "O scope: another org may hold it"
    );
    let err = given
        .when(
            1001,
            vec![insert("other", json!({"p1": "a2", "isbn": "I-1"}))],
        )
        .expect_err("global");
    assert_eq!(err.code(), "UNIQUE", "G scope holds across organisations");
    assert!(
        matches!(&err, crate::RecordsError::Unique { owner: None, .. }),
        "another organisation's holder is not named: {err:?}"
    );
    let text = err.to_string();
    assert!(
        !text.contains("\"demo\"") && !text.contains(&holder[2]),
        "another organisation's key is not revealed: {text}"
    );
}

#[test]
fn an_update_or_delete_releases_the_values_it_leaves() {
    let given = created("a1", 1000).then(
        1001,
        vec![Write {
            class: article(true),
            org: "demo".into(),
            action: Action::Update(data(json!({"p1": "a1", "code": "C-2"})), 1000),
        }],
    );
    let old = UniqueKey::new(Scope::O, "demo", "Article", "code", &sha16("C-1"));
    assert_eq!(given.view.uniques[&old].owner, None);
    let given = given.then(
        1002,
        vec![insert("demo", json!({"p1": "a2", "code": "C-1"}))],
    );
    let deleted = given.then(
        1003,
        vec![Write {
            class: article(true),
            org: "demo".into(),
            action: Action::Delete(sha16("a2")),
        }],
    );
    assert_eq!(deleted.view.uniques[&old].owner, None);
}

#[test]
fn an_update_keeping_its_unique_value_touches_no_lock() {
    let given = created("a1", 1000);
    let outcome = given
        .when(
            1001,
            vec![Write {
                class: article(true),
                org: "demo".into(),
                action: Action::Update(
                    data(json!({"p1": "a1", "code": "C-1", "isbn": "I-1"})),
                    1000,
                ),
            }],
        )
        .expect("updated");
    assert!(outcome.uniques.is_empty(), "{:?}", outcome.uniques);
}

#[test]
fn one_operation_writes_several_documents_at_one_version() {
    let outcome = Given::default()
        .when(
            1000,
            vec![
                insert("demo", json!({"p1": "a1"})),
                insert("demo", json!({"p1": "a2"})),
            ],
        )
        .expect("both");
    assert_eq!(outcome.documents.len(), 2);
    assert!(outcome.replies.iter().all(|r| r["v"] == json!(1000)));
    let err = Given::default()
        .when(
            1000,
            vec![
                insert("demo", json!({"p1": "a1"})),
                insert("demo", json!({"p1": "a1"})),
            ],
        )
        .expect_err("twice");
    assert_eq!(err.code(), "BADREQUEST");
}

#[test]
fn two_documents_claiming_one_value_in_one_operation_is_unique() {
    let err = Given::default()
        .when(
            1000,
            vec![
                insert("demo", json!({"p1": "a1", "code": "X"})),
                insert("demo", json!({"p1": "a2", "code": "X"})),
            ],
        )
        .expect_err("unique");
    assert_eq!(err.code(), "UNIQUE");
    let claimed = |o: &Outcome| {
        o.uniques
            .iter()
            .flat_map(|(_, e)| e)
            .filter(|e| matches!(e, UniqueEvent::UniqueClaimed { .. }))
            .count()
    };
    let ok = Given::default()
        .when(1000, vec![insert("demo", json!({"p1": "a1", "code": "X"}))])
        .expect("one");
    assert_eq!(claimed(&ok), 1);
}

#[test]
fn unique_locks_to_read_cover_new_and_old_values() {
    let given = created("a1", 1000);
    let prepared = prepare(vec![Write {
        class: article(true),
        org: "demo".into(),
        action: Action::Update(data(json!({"p1": "a1", "code": "C-2"})), 1000),
    }])
    .expect("prepared");
    let locks = unique_locks(&prepared, &given.view.docs);
    let values: Vec<&str> = locks.iter().map(|l| l.value.as_str()).collect();
    assert!(
        values.contains(&sha16("C-1").as_str())
            && values.contains(&sha16("C-2").as_str())
            && values.contains(&sha16("I-1").as_str())
    );
}
