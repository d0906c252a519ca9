//! Finding a class's declaration: built in (`Hdr`, `Org` until declared), recorded on its class
//! stream (cached: a recorded declaration never changes), or from the schema file — then the
//! first operation that uses it records it in the same append.

use crate::class::{self, HDR, ORG};
use crate::coded_error::CodedError;
use crate::context::Records;
use crate::streams;
use palimpsest_events::DomainEvent;
use palimpsest_events::records::{ClassDeclaration, ClassEvent};
use serde_json::{Map, Value};
use std::sync::Arc;

/// A class as an operation finds it.
#[derive(Debug, Clone)]
pub struct Found {
    /// The declaration.
    pub class: Arc<ClassDeclaration>,
    /// True when it is not recorded yet: the operation appends its `ClassDeclared`.
    pub pending: bool,
}

/// The recorded declaration of `clazz`, if any.
pub async fn recorded(
    records: &Records,
    clazz: &str,
) -> Result<Option<Arc<ClassDeclaration>>, CodedError> {
    if let Some(found) = cached(records, clazz) {
        return Ok(Some(found));
    }
    let events = records
        .app
        .store
        .read_stream(&streams::class(clazz), 0, 1)
        .await?;
    let Some(event) = events.first() else {
        return Ok(None);
    };
    let ClassEvent::ClassDeclared { declaration } =
        ClassEvent::decode(event).map_err(CodedError::internal)?;
    let declaration = Arc::new(declaration);
    if let Ok(mut map) = records.classes.write() {
        map.insert(clazz.to_owned(), declaration.clone());
    }
    Ok(Some(declaration))
}

fn cached(records: &Records, clazz: &str) -> Option<Arc<ClassDeclaration>> {
    records.classes.read().ok()?.get(clazz).cloned()
}

/// The class named `clazz` for an operation or a read; an unknown class is a bad request.
pub async fn find(records: &Records, clazz: &str) -> Result<Found, CodedError> {
    if !class::is_class_name(clazz) {
        return Err(CodedError::bad(format!("`{clazz}` is not a class name")));
    }
    if clazz == HDR {
        return Ok(builtin(clazz));
    }
    if let Some(class) = recorded(records, clazz).await? {
        return Ok(Found {
            class,
            pending: false,
        });
    }
    if let Some(declared) = records.settings.schema.iter().find(|d| d.clazz == clazz) {
        return Ok(Found {
            class: Arc::new(declared.clone()),
            pending: true,
        });
    }
    if clazz == ORG {
        return Ok(builtin(clazz));
    }
    Err(CodedError::bad(format!(
        "class {clazz} is not declared (declareClass or the schema file)"
    )))
}

fn builtin(clazz: &str) -> Found {
    Found {
        class: Arc::new(class::builtin(clazz).unwrap_or_else(|| ClassDeclaration {
            clazz: clazz.to_owned(),
            sync: true,
            pk: Vec::new(),
            collections: Vec::new(),
            indexes: Vec::new(),
        })),
        pending: false,
    }
}

/// Every class with a row table: the declared ones, `Hdr` and `Org`.
pub async fn all_classes(records: &Records) -> Result<Vec<Arc<ClassDeclaration>>, CodedError> {
    let client = records.app.read.get().await?;
    let rows = client
        .query(
            "SELECT declaration FROM records.classes ORDER BY clazz",
            &[],
        )
        .await?;
    let mut out: Vec<Arc<ClassDeclaration>> = Vec::new();
    for row in rows {
        let declaration: ClassDeclaration =
            serde_json::from_value(row.get(0)).map_err(CodedError::internal)?;
        out.push(Arc::new(declaration));
    }
    for clazz in [HDR, ORG] {
        if !out.iter().any(|c| c.clazz == clazz)
            && let Some(class) = class::builtin(clazz)
        {
            out.push(Arc::new(class));
        }
    }
    Ok(out)
}

/// The class a document's `data` names (`data.clazz`, required): what a write or an import
/// looks up first.
pub fn clazz_of(data: &Map<String, Value>) -> Result<String, CodedError> {
    match data.get("clazz") {
        Some(Value::String(c)) => Ok(c.clone()),
        Some(_) => Err(CodedError::bad("data.clazz must be a string")),
        None => Err(CodedError::bad("data.clazz is required")),
    }
}
