//! Declaring a class through the platform's runner: load its stream, decide, append.

use crate::caller::Caller;
use crate::class::{ClassState, decide_declaration};
use crate::context::Records;
use crate::http::failure::CodedError;
use crate::http::run::{command, encode, failure, opened, rejected, sealed_for};
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
