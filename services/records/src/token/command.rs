//! Issuing an organisation's bearer token through the platform's runner.

use crate::caller::Caller;
use crate::coded_error::CodedError;
use crate::command::{command, encode, failure, opened, sealed_for};
use crate::context::Records;
use crate::hash::sha32;
use crate::streams;
use crate::token::TokenState;
use palimpsest_events::records::TokenEvent;
use palimpsest_web::command::{CommandError, CommandRequest, Decision};
use serde_json::{Value, json};

/// A new bearer token scoped to `org`, answered as `{"token"}`. The log keeps its sha32 only;
/// the reply stored for the Idempotency-Key is sealed like every records reply.
pub async fn issue(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    org: &str,
) -> Result<Value, CodedError> {
    let token = {
        use rand::Rng;
        let bytes: [u8; 32] = rand::rng().random();
        hex::encode(bytes)
    };
    let stream = &streams::token(org);
    let token = &token;
    let reply = records
        .app
        .commands
        .run(command(request, caller), |attempt| async move {
            // Read so the append expects the version seen: tokens of one org are appended in turn.
            let _: TokenState = attempt.load(stream).await?;
            let event = encode(&TokenEvent::OrgTokenIssued {
                org: org.to_owned(),
                hash: sha32(token),
            })?;
            Ok::<_, CommandError<CodedError>>(
                Decision::new(sealed_for(records, caller, json!({"token": token}))?)
                    .write(stream.clone(), vec![event]),
            )
        })
        .await
        .map_err(failure)?;
    opened(&records.key, caller, reply)
}
