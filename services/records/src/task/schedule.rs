//! What `setTask` must hold and when a task is due: its key `k0` and its time `i0`
//! (`AAAAMMJJhhmmssmmm`).

use crate::error::RecordsError;
use crate::hash::sha16;
use serde_json::{Map, Value};

/// A task time `AAAAMMJJhhmmssmmm` from epoch ms.
pub fn time_text(epoch_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(epoch_ms)
        .map(|t| t.format("%Y%m%d%H%M%S%3f").to_string())
        .unwrap_or_else(|| "00000000000000000".to_owned())
}

/// Whether `s` has the form `AAAAMMJJhhmmssmmm`.
pub fn is_time_text(s: &str) -> bool {
    s.len() == 17 && s.bytes().all(|b| b.is_ascii_digit())
}

/// What a task's data must hold; answers its `k0` and `i0`.
pub fn check(data: &Map<String, Value>) -> Result<(String, String), RecordsError> {
    let process = match data.get("process") {
        Some(Value::String(p)) if crate::class::is_class_name(p) => p.clone(),
        _ => {
            return Err(RecordsError::bad(
                "data.process must name the task's class (Upper-case name)",
            ));
        }
    };
    let pk: Vec<&str> = match data.get("pk") {
        Some(Value::Array(items)) => items
            .iter()
            .map(Value::as_str)
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| RecordsError::bad("data.pk must be a list of strings"))?,
        _ => {
            return Err(RecordsError::bad(
                "data.pk (the target's ids) is required, a list of strings",
            ));
        }
    };
    let start = match data.get("startTime") {
        Some(Value::String(t)) if is_time_text(t) => t.clone(),
        _ => {
            return Err(RecordsError::bad(
                "data.startTime must be AAAAMMJJhhmmssmmm (17 digits)",
            ));
        }
    };
    match data.get("nb") {
        None | Some(Value::Null) => {}
        Some(n) if n.as_i64().is_some() => {}
        Some(_) => return Err(RecordsError::bad("data.nb must be an integer")),
    }
    let mut key = vec![process.as_str()];
    key.extend(pk);
    Ok((sha16(&key.join("/")), start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn k0_is_sha16_of_process_and_pk_and_i0_the_start_time() {
        let data = json!({"process": "Nettoyage", "pk": ["a", "b"], "startTime": "20260101120000000", "nb": 3});
        let (k0, i0) = check(data.as_object().expect("object")).expect("task");
        assert_eq!(
            (k0, i0.as_str()),
            (sha16("Nettoyage/a/b"), "20260101120000000")
        );
    }

    #[test]
    fn a_task_needs_its_process_targets_and_time() {
        for bad in [
            json!({"pk": [], "startTime": "20260101120000000"}),
            json!({"process": "P", "startTime": "20260101120000000"}),
            json!({"process": "P", "pk": [], "startTime": "2026"}),
        ] {
            assert!(check(bad.as_object().expect("object")).is_err(), "{bad}");
        }
        assert_eq!(time_text(0), "19700101000000000");
    }
}
