//! A geometry's `binding`: the ids of other geometries bound to it.
//!
//! Normal form, as the original wrote it: an array of strings, trimmed, no empty strings, no
//! duplicates (the first occurrence keeps its place), never the geometry's own id.

/// Brings a list of ids to the normal form of a geometry's binding.
pub fn normalize_binding(ids: impl IntoIterator<Item = String>, own_id: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in ids {
        let id = id.trim();
        if id.is_empty() || id == own_id || out.iter().any(|o| o == id) {
            continue;
        }
        out.push(id.to_owned());
    }
    out
}

/// The binding without `removed`, or `None` when it did not contain it (nothing to write).
pub fn strip_binding(binding: &[String], removed: &str) -> Option<Vec<String>> {
    if !binding.iter().any(|b| b == removed) {
        return None;
    }
    Some(binding.iter().filter(|b| *b != removed).cloned().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn normal_form_trims_drops_empties_duplicates_and_itself() {
        assert_eq!(
            normalize_binding(s(&[" b", "", "a", "b", "self", "  ", "c "]), "self"),
            s(&["b", "a", "c"])
        );
    }

    #[test]
    fn stripping_reports_whether_anything_changed() {
        assert_eq!(
            strip_binding(&s(&["a", "g", "b"]), "g"),
            Some(s(&["a", "b"]))
        );
        assert_eq!(strip_binding(&s(&["a"]), "g"), None);
    }
}
