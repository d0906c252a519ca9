//! The kept contract (`events/schemas/`, `events/asyncapi.yaml`) is what the types generate,
//! and no kept schema changes in a way that breaks consumers.

use palimpsest_events::schema::{self, compat};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const REGENERATE: &str = "regenerate with `cargo run -p palimpsest-events --example write-schemas`";

fn events_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every file under `dir`, by path relative to it.
fn files_under(dir: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).expect("read the schema folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative = path.strip_prefix(dir).expect("inside").to_string_lossy();
                let text = std::fs::read_to_string(&path).expect("read a kept file");
                files.insert(relative.into_owned(), text);
            }
        }
    }
    files
}

fn kept_schemas() -> BTreeMap<String, Value> {
    files_under(&events_dir().join("schemas"))
        .into_iter()
        .map(|(path, text)| {
            let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
            (path, value)
        })
        .collect()
}

#[test]
fn the_kept_files_are_what_the_types_generate() {
    let generated = schema::generated_files();
    let mut stale = Vec::new();
    for (path, text) in &generated {
        match std::fs::read_to_string(events_dir().join(path)) {
            Ok(kept) if &kept == text => {}
            Ok(_) => stale.push(format!("events/{path} differs")),
            Err(_) => stale.push(format!("events/{path} is missing")),
        }
    }
    assert!(stale.is_empty(), "{}; {REGENERATE}", stale.join(", "));
}

#[test]
fn no_kept_schema_is_broken_by_the_types() {
    let problems = compat::check_kept(&kept_schemas(), &schema::catalogue());
    assert!(
        problems.is_empty(),
        "breaking schema changes:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_deliberately_incompatible_schema_fails_the_check() {
    let kept = kept_schemas();
    let path = "pads/RevisionAppended.v1.json";
    let mut broken = schema::catalogue();
    let schema = broken.get_mut(path).expect("RevisionAppended");
    let properties = schema["properties"].as_object_mut().expect("properties");
    properties.remove("changeset");
    properties.insert("rev".into(), json!({"type": "string"}));
    properties.insert("pool_size".into(), json!({"type": "integer"}));
    schema["required"]
        .as_array_mut()
        .expect("required")
        .push(json!("pool_size"));
    let problems = compat::check_kept(&kept, &broken);
    let about = |what: &str| {
        problems
            .iter()
            .any(|p| p.starts_with(path) && p.contains(what))
    };
    assert!(about("/changeset: property removed"), "{problems:?}");
    assert!(about("/rev: retyped"), "{problems:?}");
    assert!(
        about("/pool_size: property became required"),
        "{problems:?}"
    );
    assert_eq!(problems.len(), 3, "{problems:?}");
    // The same change under a new schema version is no problem: the old file stays kept.
    let mut versioned = schema::catalogue();
    let v2 = versioned.remove(path).expect("v1");
    versioned.insert("pads/RevisionAppended.v2.json".into(), v2);
    assert_eq!(compat::check_kept(&kept, &versioned), Vec::<String>::new());
    // A kept event type that is no longer generated at all is reported.
    let mut removed = schema::catalogue();
    removed.remove(path);
    assert_eq!(compat::check_kept(&kept, &removed).len(), 1);
}
