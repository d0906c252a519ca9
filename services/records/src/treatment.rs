//! Per-class treatments of export / import: "effectuer si demandé un traitement spécifique de la
//! classe du document sur ce data" (spec, Export / import). A treatment is code registered by
//! class name (as task handlers are by `process` name) that turns one document's clear data
//! into its new data: the spec's "replacement after treatment" of a class (export A treated into
//! a clear dump T, purge A's class, import T into A) runs it on every document of the class.
//!
//! Pure: the handler sees and returns data; the HTTP edge decides when it is asked for.

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// A class's treatment: the document's clear data in, its treated data out; `Err(reason)`
/// refuses the document (the export or import stops with a BADREQUEST naming it).
pub type Treatment =
    Arc<dyn Fn(Map<String, Value>) -> Result<Map<String, Value>, String> + Send + Sync>;

/// Treatments by class name.
pub type Treatments = HashMap<String, Treatment>;

/// Why a document could not be treated.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TreatmentError {
    /// The call named a class to treat and no treatment is registered for it: treating it
    /// silently as is would let a replacement purge the class and import it back unchanged.
    #[error("class {0} has no treatment registered; export or import it without `treat`")]
    NoTreatment(String),
    /// The class's treatment refused the document.
    #[error("the treatment of class {clazz} refused a document: {reason}")]
    Refused {
        /// The document's class.
        clazz: String,
        /// What the treatment said.
        reason: String,
    },
    /// The treatment answered data of another class: a treatment transforms a class's
    /// documents, it does not move them to another class's table.
    #[error("the treatment of class {clazz} changed data.clazz to {to}")]
    ClassChanged {
        /// The document's class.
        clazz: String,
        /// The class the treatment answered.
        to: String,
    },
}

/// Whether a call asked for treatment, and of which class by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked<'a> {
    /// No treatment: data goes through as is.
    No,
    /// Treat every document whose class has a treatment; the others go through as is (a whole
    /// org holds classes that need none).
    EveryClass,
    /// Treat the documents of this class, named by the call: it must have a treatment.
    Class(&'a str),
}

/// Checks before any document is read that a named class has a treatment.
pub fn check(treatments: &Treatments, asked: Asked<'_>) -> Result<(), TreatmentError> {
    match asked {
        Asked::Class(clazz) if !treatments.contains_key(clazz) => {
            Err(TreatmentError::NoTreatment(clazz.to_owned()))
        }
        _ => Ok(()),
    }
}

/// `data` (of class `clazz`) treated as `asked` says.
pub fn treat(
    treatments: &Treatments,
    asked: Asked<'_>,
    clazz: &str,
    data: Map<String, Value>,
) -> Result<Map<String, Value>, TreatmentError> {
    if asked == Asked::No {
        return Ok(data);
    }
    check(treatments, asked)?;
    let Some(treatment) = treatments.get(clazz) else {
        return Ok(data);
    };
    let treated = treatment(data).map_err(|reason| TreatmentError::Refused {
        clazz: clazz.to_owned(),
        reason,
    })?;
    match treated.get("clazz") {
        Some(Value::String(to)) if to == clazz => Ok(treated),
        other => Err(TreatmentError::ClassChanged {
            clazz: clazz.to_owned(),
            to: other
                .map(Value::to_string)
                .unwrap_or_else(|| "nothing".into()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn data(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn upper_titles() -> Treatments {
        let mut t = Treatments::new();
        let upper: Treatment = Arc::new(|mut d: Map<String, Value>| {
            let titre = d
                .get("titre")
                .and_then(Value::as_str)
                .map(str::to_uppercase);
            match titre {
                Some(t) => {
                    d.insert("titre".into(), json!(t));
                    Ok(d)
                }
                None => Err("no titre".into()),
            }
        });
        t.insert("Article".into(), upper);
        t.insert(
            "Note".into(),
            Arc::new(|mut d: Map<String, Value>| {
                d.insert("clazz".into(), json!("Other"));
                Ok(d)
            }),
        );
        t
    }

    #[test]
    fn not_asked_leaves_data_as_is() {
        let d = data(json!({"clazz": "Article", "titre": "a"}));
        assert_eq!(
            treat(&upper_titles(), Asked::No, "Article", d.clone()),
            Ok(d)
        );
    }

    #[test]
    fn asked_applies_the_class_treatment() {
        let d = data(json!({"clazz": "Article", "titre": "a"}));
        let treated = treat(&upper_titles(), Asked::EveryClass, "Article", d);
        assert_eq!(treated, Ok(data(json!({"clazz": "Article", "titre": "A"}))));
    }

    #[test]
    fn every_class_leaves_a_class_without_treatment_as_is() {
        let d = data(json!({"clazz": "Livre"}));
        assert_eq!(
            treat(&upper_titles(), Asked::EveryClass, "Livre", d.clone()),
            Ok(d)
        );
    }

    #[test]
    fn a_named_class_without_treatment_is_refused() {
        let d = data(json!({"clazz": "Livre"}));
        assert_eq!(
            treat(&upper_titles(), Asked::Class("Livre"), "Livre", d),
            Err(TreatmentError::NoTreatment("Livre".into()))
        );
        assert!(check(&upper_titles(), Asked::Class("Article")).is_ok());
    }

    #[test]
    fn a_refusal_names_the_class_and_reason() {
        let d = data(json!({"clazz": "Article"}));
        assert_eq!(
            treat(&upper_titles(), Asked::Class("Article"), "Article", d),
            Err(TreatmentError::Refused {
                clazz: "Article".into(),
                reason: "no titre".into()
            })
        );
    }

    #[test]
    fn a_treatment_may_not_change_the_class() {
        let d = data(json!({"clazz": "Note"}));
        assert!(matches!(
            treat(&upper_titles(), Asked::EveryClass, "Note", d),
            Err(TreatmentError::ClassChanged { .. })
        ));
    }
}
