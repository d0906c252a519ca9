//! Class declarations: what a declaration must hold to be accepted, and the special classes the
//! spec defines (`Hdr`, `Org`, `Task`, `FTP`).

use crate::error::RecordsError;
use palimpsest_events::records::ClassDeclaration;
use std::collections::HashSet;

/// The singleton holding the service's global state: pk `1`, admin writes only.
pub const HDR: &str = "Hdr";
/// One document per organisation: pk is the org code.
pub const ORG: &str = "Org";
/// Deferred tasks (their own table `Task(org, k0, i0, data)`).
pub const TASK: &str = "Task";
/// Files to purge (their own table `FTP(org, path, p)`).
pub const FTP: &str = "FTP";

/// Row columns every class table has; no collection or index may take these names.
pub const TECHNICAL: [&str; 8] = ["org", "pk", "v", "x", "z", "ck", "del", "data"];

/// The declaration of a special class that needs none: `Hdr` always, `Org` until declared.
pub fn builtin(clazz: &str) -> Option<ClassDeclaration> {
    match clazz {
        HDR | ORG => Some(ClassDeclaration {
            clazz: clazz.to_owned(),
            sync: true,
            pk: Vec::new(),
            collections: Vec::new(),
            indexes: Vec::new(),
        }),
        _ => None,
    }
}

/// A class name: an upper-case letter then up to 62 letters, digits or `_` (it names a table).
pub fn is_class_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_uppercase())
        && name.len() <= 63
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An organisation code: 1-64 letters, digits, `_`, `-` or `.` (it stands in stream keys, where
/// `:` separates parts).
pub fn is_org_code(code: &str) -> bool {
    !code.is_empty()
        && code.len() <= 64
        && code
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

/// A property or column name: a lower-case letter then up to 62 letters, digits or `_`.
fn is_property_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && name.len() <= 63
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Checks a declaration before it is recorded.
pub fn validate(d: &ClassDeclaration) -> Result<(), RecordsError> {
    if !is_class_name(&d.clazz) {
        return Err(RecordsError::bad(format!(
            "clazz `{}` must start with an upper-case letter and hold only letters, digits and _",
            d.clazz
        )));
    }
    match d.clazz.as_str() {
        HDR | TASK | FTP => {
            return Err(RecordsError::bad(format!(
                "clazz {} is special and cannot be declared",
                d.clazz
            )));
        }
        ORG if !d.pk.is_empty() || !d.collections.is_empty() || !d.sync => {
            return Err(RecordsError::bad(
                "clazz Org is SYNC, keyed by the org code, without collections: only indexes may be declared",
            ));
        }
        ORG => {}
        _ if d.pk.is_empty() => {
            return Err(RecordsError::bad(format!(
                "{}.pk must name at least one property",
                d.clazz
            )));
        }
        _ => {}
    }
    for (i, p) in d.pk.iter().enumerate() {
        property(p, &format!("pk[{i}]"))?;
    }
    let mut columns = HashSet::new();
    for (i, c) in d.collections.iter().enumerate() {
        column(&c.name, &format!("collections[{i}].name"), &mut columns)?;
        if c.props.is_empty() || (c.list && c.props.len() != 1) {
            return Err(RecordsError::bad(format!(
                "collections[{i}].props must name one list property, or one or more string properties"
            )));
        }
        for (j, p) in c.props.iter().enumerate() {
            property(p, &format!("collections[{i}].props[{j}]"))?;
        }
    }
    for (i, ix) in d.indexes.iter().enumerate() {
        column(&ix.name, &format!("indexes[{i}].name"), &mut columns)?;
    }
    Ok(())
}

fn property(name: &str, field: &str) -> Result<(), RecordsError> {
    if is_property_name(name) {
        Ok(())
    } else {
        Err(RecordsError::bad(format!(
            "{field} `{name}` must start with a lower-case letter and hold only letters, digits and _"
        )))
    }
}

fn column<'a>(name: &'a str, field: &str, seen: &mut HashSet<&'a str>) -> Result<(), RecordsError> {
    property(name, field)?;
    if TECHNICAL.contains(&name) {
        return Err(RecordsError::bad(format!(
            "{field} `{name}` is a technical column of every row"
        )));
    }
    if !seen.insert(name) {
        return Err(RecordsError::bad(format!(
            "{field} `{name}` names a column twice"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn declaration(value: serde_json::Value) -> ClassDeclaration {
        serde_json::from_value(value).expect("declaration")
    }

    #[test]
    fn an_article_with_a_list_collection_and_indexes_is_accepted() {
        let d = declaration(json!({"clazz": "Article", "sync": true, "pk": ["p1"],
            "collections": [{"name": "auteurs", "props": ["auteurs"], "list": true},
                            {"name": "theme", "props": ["sujet", "soussujet"]}],
            "indexes": [{"name": "taille", "type": "int"}, {"name": "code", "type": "uniq", "scope": "G"}]}));
        assert_eq!(validate(&d), Ok(()));
    }

    #[test]
    fn a_class_needs_a_primary_key_and_an_upper_case_name() {
        assert!(validate(&declaration(json!({"clazz": "Article", "sync": true}))).is_err());
        assert!(
            validate(&declaration(
                json!({"clazz": "article", "sync": true, "pk": ["p1"]})
            ))
            .is_err()
        );
    }

    #[test]
    fn columns_are_unique_and_not_technical() {
        let twice = declaration(json!({"clazz": "A", "sync": true, "pk": ["p1"],
            "collections": [{"name": "x1", "props": ["a"]}], "indexes": [{"name": "x1", "type": "hash"}]}));
        assert!(validate(&twice).is_err());
        let technical = declaration(
            json!({"clazz": "A", "sync": true, "pk": ["p1"], "indexes": [{"name": "del", "type": "int"}]}),
        );
        let err = validate(&technical).expect_err("technical");
        assert!(err.to_string().contains("indexes[0].name"), "{err}");
    }

    #[test]
    fn a_list_collection_names_exactly_one_property() {
        let d = declaration(json!({"clazz": "A", "sync": true, "pk": ["p1"],
            "collections": [{"name": "c", "props": ["a", "b"], "list": true}]}));
        assert!(validate(&d).is_err());
    }

    #[test]
    fn special_classes_are_not_declared_except_org_indexes() {
        assert!(validate(&declaration(json!({"clazz": "Hdr", "sync": true}))).is_err());
        assert!(
            validate(&declaration(
                json!({"clazz": "Task", "sync": false, "pk": ["p"]})
            ))
            .is_err()
        );
        let org = declaration(
            json!({"clazz": "Org", "sync": true, "indexes": [{"name": "statut", "type": "string", "scope": "G"}]}),
        );
        assert_eq!(validate(&org), Ok(()));
        assert!(builtin(HDR).is_some() && builtin("Article").is_none());
    }
}
