//! Writes the event schemas (`events/schemas/`) and the AsyncAPI document
//! (`events/asyncapi.yaml`) from the Rust types: `cargo run -p palimpsest-events --example
//! write-schemas`. It refuses (and writes nothing) when a kept schema would change in a way
//! that breaks consumers: raise the payload enum's `SCHEMA_VERSION` instead (a new file; the
//! old version's file stays, as events of it stay in the log).

use palimpsest_events::schema::{self, compat};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let events = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let problems = compat::check_kept(&kept(&events.join("schemas"))?, &schema::catalogue());
    if !problems.is_empty() {
        for p in &problems {
            eprintln!("breaking: {p}");
        }
        return Err("kept schemas left as they are".into());
    }
    for (path, text) in schema::generated_files() {
        let file = events.join(&path);
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&file, text)?;
        println!("wrote events/{path}");
    }
    Ok(())
}

/// The kept schema files by path relative to `dir` (none when it does not exist yet).
fn kept(dir: &Path) -> Result<BTreeMap<String, Value>, Box<dyn std::error::Error>> {
    let mut files = BTreeMap::new();
    let mut pending: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(relative) = path.strip_prefix(dir) {
                let text = std::fs::read_to_string(&path)?;
                files.insert(
                    relative.to_string_lossy().into_owned(),
                    serde_json::from_str(&text)?,
                );
            }
        }
    }
    Ok(files)
}
