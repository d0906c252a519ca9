//! Whether a payload schema can replace the one kept for the same event type and schema
//! version without breaking a consumer that relies on the kept one.
//!
//! A change breaks when a property is removed, retyped (a JSON type, constant or enumerated
//! value the kept schema allowed is no longer allowed) or becomes required, anywhere in the
//! payload (definitions are followed). Such a change needs a new schema version (a new file);
//! additions of optional properties and widenings do not. The check is structural, like the
//! compatibility rules of schema registries, not a proof: it errs on the side of reporting.

use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// One breaking difference: where (a JSON pointer-like path in the payload) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breaking {
    /// The property path, `/` for the payload itself.
    pub at: String,
    /// What changed.
    pub change: String,
}

impl std::fmt::Display for Breaking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.at, self.change)
    }
}

/// The breaking differences between the `kept` schema and the `new` one (empty: compatible).
pub fn breaking_changes(kept: &Value, new: &Value) -> Vec<Breaking> {
    let mut walk = Walk {
        kept_root: kept,
        new_root: new,
        found: Vec::new(),
        depth: 0,
    };
    walk.compare(kept, new, "");
    walk.found
}

struct Walk<'a> {
    kept_root: &'a Value,
    new_root: &'a Value,
    found: Vec<Breaking>,
    depth: usize,
}

/// Recursive definitions end somewhere: a depth past this is not followed.
const MAX_DEPTH: usize = 32;

impl Walk<'_> {
    fn compare(&mut self, kept: &Value, new: &Value, at: &str) {
        if self.depth > MAX_DEPTH {
            return;
        }
        self.depth += 1;
        let kept = resolve(self.kept_root, kept);
        let new = resolve(self.new_root, new);
        self.compare_values(kept, new, at);
        self.compare_properties(kept, new, at);
        for key in ["items", "additionalProperties"] {
            if let (Some(k), Some(n)) = (kept.get(key), new.get(key)) {
                self.compare(k, n, &format!("{at}/{key}"));
            }
        }
        self.compare_lists(kept, new, at, "prefixItems");
        self.compare_lists(kept, new, at, "oneOf");
        self.compare_lists(kept, new, at, "anyOf");
        self.depth -= 1;
    }

    fn report(&mut self, at: &str, change: String) {
        let at = if at.is_empty() { "/" } else { at };
        self.found.push(Breaking {
            at: at.to_owned(),
            change,
        });
    }

    /// JSON types, constants and enumerated values the kept schema allowed must stay allowed.
    fn compare_values(&mut self, kept: &Value, new: &Value, at: &str) {
        let (kt, nt) = (types(kept), types(new));
        if let (Some(kt), Some(nt)) = (&kt, &nt) {
            let lost: Vec<_> = kt.difference(nt).cloned().collect();
            // An integer is still a number.
            let lost: Vec<_> = lost
                .into_iter()
                .filter(|t| !(t == "integer" && nt.contains("number")))
                .collect();
            if !lost.is_empty() {
                self.report(at, format!("retyped: {kt:?} became {nt:?}"));
            }
        }
        match (allowed_values(kept), allowed_values(new)) {
            (Some(kv), Some(nv)) => {
                let lost: Vec<_> = kv.iter().filter(|v| !nv.contains(v)).collect();
                if !lost.is_empty() {
                    self.report(at, format!("values no longer allowed: {lost:?}"));
                }
            }
            (None, Some(_)) => self.report(at, "restricted to constant values".to_owned()),
            _ => {}
        }
    }

    fn compare_properties(&mut self, kept: &Value, new: &Value, at: &str) {
        let kept_props = properties(kept);
        let new_props = properties(new);
        for (name, k) in &kept_props {
            let path = format!("{at}/{name}");
            match new_props.get(name) {
                Some(n) => self.compare(k, n, &path),
                None => self.report(&path, "property removed".to_owned()),
            }
        }
        let kept_required = required(kept);
        for name in required(new).difference(&kept_required) {
            self.report(
                &format!("{at}/{name}"),
                "property became required".to_owned(),
            );
        }
    }

    /// `oneOf`, `anyOf`, `prefixItems`: fewer entries breaks; the common ones compare in order.
    fn compare_lists(&mut self, kept: &Value, new: &Value, at: &str, key: &str) {
        let (Some(k), Some(n)) = (
            kept.get(key).and_then(Value::as_array),
            new.get(key).and_then(Value::as_array),
        ) else {
            return;
        };
        if n.len() < k.len() {
            self.report(at, format!("{key}: {} entries became {}", k.len(), n.len()));
        }
        for (i, (k, n)) in k.iter().zip(n).enumerate() {
            self.compare(k, n, &format!("{at}/{key}[{i}]"));
        }
    }
}

/// Checks the generated schema files against the kept ones (both by path relative to the
/// schema folder, as [`super::catalogue`] names them): every kept file the types still
/// generate must take its new form without a breaking change, and a kept event type's file
/// may only stop being generated when a newer schema version of it is. Returns one line per
/// problem, naming the file.
pub fn check_kept(
    kept: &BTreeMap<String, Value>,
    generated: &BTreeMap<String, Value>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for (path, old) in kept.iter().filter(|(p, _)| p.as_str() != super::INDEX_PATH) {
        match generated.get(path) {
            Some(new) => problems.extend(breaking_changes(old, new).into_iter().map(|b| {
                format!("{path} {b}: raise the payload enum's SCHEMA_VERSION (a new file) instead")
            })),
            None if superseded(path, generated) => {}
            None => problems.push(format!(
                "{path}: no longer generated (an event type removed?)"
            )),
        }
    }
    problems
}

/// Whether a newer schema version of the event type of `path` (`ctx/Type.vN.json`) is generated.
fn superseded(path: &str, generated: &BTreeMap<String, Value>) -> bool {
    let Some((stem, version)) = split_version(path) else {
        return false;
    };
    generated
        .keys()
        .filter_map(|p| split_version(p))
        .any(|(s, v)| s == stem && v > version)
}

fn split_version(path: &str) -> Option<(&str, i32)> {
    let rest = path.strip_suffix(".json")?;
    let (stem, version) = rest.rsplit_once(".v")?;
    Some((stem, version.parse().ok()?))
}

/// `schema` with a `#/$defs/…` reference followed (within its own document).
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..MAX_DEPTH {
        let Some(name) = current
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
        else {
            break;
        };
        match root.pointer(&format!("/$defs/{name}")) {
            Some(def) => current = def,
            None => break,
        }
    }
    current
}

fn types(schema: &Value) -> Option<BTreeSet<String>> {
    match schema.get("type")? {
        Value::String(t) => Some([t.clone()].into()),
        Value::Array(ts) => Some(
            ts.iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect(),
        ),
        _ => None,
    }
}

fn allowed_values(schema: &Value) -> Option<Vec<Value>> {
    if let Some(c) = schema.get("const") {
        return Some(vec![c.clone()]);
    }
    schema.get("enum").and_then(Value::as_array).cloned()
}

fn properties(schema: &Value) -> Map<String, Value> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn required(schema: &Value) -> BTreeSet<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kept() -> Value {
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "n": {"type": "integer"},
                "when": {"$ref": "#/$defs/At"}
            },
            "required": ["id"],
            "$defs": {"At": {"type": "object", "properties": {"ms": {"type": "integer"}}}}
        })
    }

    #[test]
    fn the_same_schema_and_additions_are_compatible() {
        assert!(breaking_changes(&kept(), &kept()).is_empty());
        let mut wider = kept();
        wider["properties"]["extra"] = json!({"type": "string"});
        wider["properties"]["n"]["type"] = json!(["integer", "null"]);
        assert_eq!(breaking_changes(&kept(), &wider), vec![]);
    }

    #[test]
    fn removed_retyped_and_newly_required_properties_break() {
        let mut new = kept();
        new["properties"]
            .as_object_mut()
            .expect("props")
            .remove("n");
        new["$defs"]["At"]["properties"]["ms"]["type"] = json!("string");
        new["required"] = json!(["id", "when"]);
        let found: Vec<String> = breaking_changes(&kept(), &new)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            found,
            [
                "/n: property removed",
                "/when/ms: retyped: {\"integer\"} became {\"string\"}",
                "/when: property became required",
            ]
        );
    }
}
