//! `Document.toRow`: from a document's data and its class, the properties the host sees —
//! the primary key, the collection keys and the index values. Pure: sealing `data` is
//! [`crate::seal`]'s job.

use crate::class::{HDR, ORG};
use crate::error::RecordsError;
use crate::hash::sha16;
use palimpsest_events::records::{
    ClassDeclaration, CollectionDeclaration, CollectionKey, IndexDeclaration, IndexKind, IndexValue,
};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The visible part of a row, computed from data.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// The primary key.
    pub pk: String,
    /// Collection columns (absent when a property is).
    pub collections: BTreeMap<String, CollectionKey>,
    /// Index columns (absent when the property is).
    pub indexes: BTreeMap<String, IndexValue>,
}

/// The primary key of a document of `class` in `org` with `data`.
pub fn primary_key(
    class: &ClassDeclaration,
    org: &str,
    data: &Map<String, Value>,
) -> Result<String, RecordsError> {
    match class.clazz.as_str() {
        HDR => Ok("1".to_owned()),
        ORG => Ok(org.to_owned()),
        _ => {
            let mut parts = Vec::with_capacity(class.pk.len());
            for p in &class.pk {
                parts.push(string_prop(data, p)?.ok_or_else(|| {
                    RecordsError::bad(format!(
                        "data.{p} is required: it is part of the primary key"
                    ))
                })?);
            }
            Ok(sha16(&parts.join("/")))
        }
    }
}

/// `toRow` without the sealed data: pk, collections, indexes.
pub fn shape(
    class: &ClassDeclaration,
    org: &str,
    data: &Map<String, Value>,
) -> Result<Shape, RecordsError> {
    let pk = primary_key(class, org, data)?;
    let mut collections = BTreeMap::new();
    for c in &class.collections {
        if let Some(key) = collection_key(c, data)? {
            collections.insert(c.name.clone(), key);
        }
    }
    let mut indexes = BTreeMap::new();
    for ix in &class.indexes {
        if let Some(value) = index_value(ix, data)? {
            indexes.insert(ix.name.clone(), value);
        }
    }
    Ok(Shape {
        pk,
        collections,
        indexes,
    })
}

/// The key of one collection in data: sha16 of each list value, or of the values joined by `/`.
pub fn collection_key(
    c: &CollectionDeclaration,
    data: &Map<String, Value>,
) -> Result<Option<CollectionKey>, RecordsError> {
    if c.list {
        let prop = &c.props[0];
        return Ok(string_list(data, prop)?
            .map(|values| CollectionKey::Many(values.iter().map(|s| sha16(s)).collect())));
    }
    let mut parts = Vec::with_capacity(c.props.len());
    for p in &c.props {
        match string_prop(data, p)? {
            Some(s) => parts.push(s),
            None => return Ok(None),
        }
    }
    Ok(Some(CollectionKey::One(sha16(&parts.join("/")))))
}

/// The key a subscriber names in clear (`Hugo`, or `sujet/soussujet`), hashed as rows hold it.
pub fn collection_value_key(value: &Value) -> Result<String, RecordsError> {
    match value {
        Value::String(s) => Ok(sha16(s)),
        Value::Array(parts) => {
            let parts: Option<Vec<&str>> = parts.iter().map(Value::as_str).collect();
            parts
                .map(|p| sha16(&p.join("/")))
                .ok_or_else(|| RecordsError::bad("val must be a string or a list of strings"))
        }
        _ => Err(RecordsError::bad(
            "val must be a string or a list of strings",
        )),
    }
}

/// An index's column value from data.
pub fn index_value(
    ix: &IndexDeclaration,
    data: &Map<String, Value>,
) -> Result<Option<IndexValue>, RecordsError> {
    let name = &ix.name;
    Ok(match ix.kind {
        IndexKind::Uniq | IndexKind::Hash => {
            string_prop(data, name)?.map(|s| IndexValue::Text(sha16(&s)))
        }
        IndexKind::String => string_prop(data, name)?
            .map(|s| indexable(s, name))
            .transpose()?
            .map(IndexValue::Text),
        IndexKind::Int => match data.get(name) {
            None | Some(Value::Null) => None,
            Some(v) => Some(IndexValue::Int(v.as_i64().ok_or_else(|| {
                RecordsError::bad(format!("data.{name} must be an integer (index {name})"))
            })?)),
        },
        IndexKind::Float => match data.get(name) {
            None | Some(Value::Null) => None,
            Some(v) => Some(IndexValue::Float(v.as_f64().ok_or_else(|| {
                RecordsError::bad(format!("data.{name} must be a number (index {name})"))
            })?)),
        },
        IndexKind::List => match string_list(data, name)? {
            Some(items) if items.len() > MAX_LIST => {
                return Err(RecordsError::bad(format!(
                    "data.{name} holds {} values, at most {MAX_LIST} (index {name})",
                    items.len()
                )));
            }
            Some(items) => Some(IndexValue::List(
                items
                    .into_iter()
                    .map(|s| indexable(s, name))
                    .collect::<Result<_, _>>()?,
            )),
            None => None,
        },
    })
}

/// Longest string an index column holds (Postgres refuses index entries of a few kB).
pub const MAX_INDEXED: usize = 1024;
/// Most values a `list` index holds.
pub const MAX_LIST: usize = 1000;

fn indexable(s: String, name: &str) -> Result<String, RecordsError> {
    if s.len() > MAX_INDEXED {
        Err(RecordsError::bad(format!(
            "data.{name} is {} bytes; an indexed string holds at most {MAX_INDEXED}",
            s.len()
        )))
    } else {
        Ok(s)
    }
}

/// A value given in clear for an index filter, as the index column holds it.
pub fn index_filter_value(
    ix: &IndexDeclaration,
    value: &Value,
) -> Result<IndexValue, RecordsError> {
    let mut data = Map::new();
    data.insert(ix.name.clone(), value.clone());
    let as_data = match ix.kind {
        IndexKind::List => {
            let Value::String(s) = value else {
                return Err(RecordsError::bad(format!(
                    "val must be a string: index {} is a list searched with `in`",
                    ix.name
                )));
            };
            return Ok(IndexValue::Text(text(s, "val")?));
        }
        _ => index_value(ix, &data)?,
    };
    as_data.ok_or_else(|| RecordsError::bad("val is required"))
}

fn string_prop(data: &Map<String, Value>, name: &str) -> Result<Option<String>, RecordsError> {
    match data.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => text(s, name).map(Some),
        Some(_) => Err(RecordsError::bad(format!("data.{name} must be a string"))),
    }
}

fn string_list(data: &Map<String, Value>, name: &str) -> Result<Option<Vec<String>>, RecordsError> {
    match data.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => text(s, &format!("{name}[{i}]")),
                _ => Err(RecordsError::bad(format!(
                    "data.{name}[{i}] must be a string"
                ))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(RecordsError::bad(format!(
            "data.{name} must be a list of strings"
        ))),
    }
}

/// Strings that reach a `text` column (or a hash) must not hold U+0000.
fn text(s: &str, name: &str) -> Result<String, RecordsError> {
    if s.contains('\0') {
        Err(RecordsError::bad(format!(
            "data.{name} must not contain U+0000"
        )))
    } else {
        Ok(s.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn article() -> ClassDeclaration {
        serde_json::from_value(json!({"clazz": "Article", "sync": true, "pk": ["p1", "p2"],
            "collections": [{"name": "auteurs", "props": ["auteurs"], "list": true},
                            {"name": "theme", "props": ["sujet", "soussujet"]}],
            "indexes": [{"name": "taille", "type": "int"}, {"name": "code", "type": "uniq"},
                        {"name": "titre", "type": "string"}, {"name": "tags", "type": "list"},
                        {"name": "prix", "type": "float"}]}))
        .expect("class")
    }

    fn data(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(m) => m,
            _ => panic!("object"),
        }
    }

    #[test]
    fn pk_is_sha16_of_the_key_properties_joined_by_slash() {
        let d = data(json!({"p1": "a", "p2": "b"}));
        assert_eq!(primary_key(&article(), "demo", &d), Ok(sha16("a/b")));
    }

    #[test]
    fn a_missing_key_property_is_named() {
        let err = primary_key(&article(), "demo", &data(json!({"p1": "a"}))).expect_err("p2");
        assert!(err.to_string().contains("data.p2"), "{err}");
    }

    #[test]
    fn collections_hash_each_list_value_or_the_joined_strings() {
        let s = shape(&article(), "demo", &data(json!({"p1": "a", "p2": "b", "auteurs": ["Hugo", "Zola"], "sujet": "x", "soussujet": "y"})))
            .expect("shape");
        assert_eq!(
            s.collections["auteurs"],
            CollectionKey::Many(vec![sha16("Hugo"), sha16("Zola")])
        );
        assert_eq!(s.collections["theme"], CollectionKey::One(sha16("x/y")));
    }

    #[test]
    fn indexes_keep_their_type_and_uniq_is_hashed() {
        let s = shape(&article(), "demo", &data(json!({"p1": "a", "p2": "b", "taille": 3, "code": "C1", "titre": "T", "tags": ["t"], "prix": 2.5})))
            .expect("shape");
        assert_eq!(s.indexes["taille"], IndexValue::Int(3));
        assert_eq!(s.indexes["code"], IndexValue::Text(sha16("C1")));
        assert_eq!(s.indexes["titre"], IndexValue::Text("T".into()));
        assert_eq!(s.indexes["tags"], IndexValue::List(vec!["t".into()]));
        assert_eq!(s.indexes["prix"], IndexValue::Float(2.5));
        assert!(!s.collections.contains_key("theme"));
    }

    #[test]
    fn a_mistyped_index_is_refused_by_name() {
        let err = shape(
            &article(),
            "demo",
            &data(json!({"p1": "a", "p2": "b", "taille": "big"})),
        )
        .expect_err("int");
        assert!(err.to_string().contains("data.taille"), "{err}");
        assert!(
            shape(
                &article(),
                "demo",
                &data(json!({"p1": "a\u{0}", "p2": "b"}))
            )
            .is_err()
        );
    }

    #[test]
    fn hdr_is_keyed_1_and_org_by_its_code() {
        let hdr = crate::class::builtin(HDR).expect("hdr");
        let org = crate::class::builtin(ORG).expect("org");
        assert_eq!(primary_key(&hdr, "", &Map::new()), Ok("1".into()));
        assert_eq!(primary_key(&org, "demo", &Map::new()), Ok("demo".into()));
    }
}
