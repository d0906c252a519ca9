//! Declaring a class through the platform's runner: load its stream, decide, append; the
//! schema file's classes are declared so on start.

use crate::caller::{Caller, SCHEMA};
use crate::class::{ClassState, decide_declaration};
use crate::coded_error::CodedError;
use crate::command::{command, encode, failure, opened, rejected, sealed_for};
use crate::context::Records;
use crate::streams;
use palimpsest_events::records::ClassDeclaration;
use palimpsest_web::command::{CommandRequest, Decision};
use serde_json::{Value, json};

/// Records `declaration` unless the same is recorded; the schema file's classes come here on start.
pub async fn declare(
    records: &Records,
    request: &CommandRequest,
    caller: &Caller,
    declaration: ClassDeclaration,
) -> Result<Value, CodedError> {
    let stream = &streams::class(&declaration.clazz);
    let declaration = &declaration;
    let reply = records
        .app
        .commands
        .run(command(request, caller), |attempt| async move {
            let state: ClassState = attempt.load(stream).await?;
            let events = decide_declaration(declaration, &state).map_err(rejected)?;
            let events = events.iter().map(encode).collect::<Result<Vec<_>, _>>()?;
            Ok(
                Decision::new(sealed_for(records, caller, json!(declaration))?)
                    .write(stream.clone(), events),
            )
        })
        .await
        .map_err(failure)?;
    opened(&records.key, caller, reply)
}

/// Records the schema file's classes in the background (a write also records one on first use).
pub fn declare_schema(records: &Records) {
    if records.settings.schema.is_empty() {
        return;
    }
    let records = records.clone();
    let background = records.app.background.clone();
    background.spawn("records schema", move |_| async move {
        for class in records.settings.schema.clone() {
            let clazz = class.clazz.clone();
            let request = CommandRequest::none();
            if let Err(e) = declare(&records, &request, &SCHEMA, class).await {
                tracing::error!(
                    clazz,
                    code = e.code,
                    message = e.message,
                    "records: schema class not declared"
                );
            }
        }
    });
}
