//! Writing a task through the platform's runner: load its stream, then schedule it (its data
//! sealed with the site key) or finish it.

use crate::caller::Caller;
use crate::coded_error::CodedError;
use crate::command::{command, encode, failure, opened, rejected, sealed_for};
use crate::context::Records;
use crate::seal::Nonces;
use crate::streams;
use crate::task::TaskState;
use palimpsest_events::records::TaskEvent;
use palimpsest_web::command::{CommandRequest, Decision};
use serde_json::{Value, json};

/// Schedules (or finishes, with `due` = `None`) task `[org, k0]`.
pub async fn write(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    org: &str,
    k0: &str,
    due: Option<(String, Value)>,
) -> Result<(), CodedError> {
    let stream = &streams::task(org, k0);
    let due = &due;
    let reply = records
        .app
        .commands
        .run(command(request, caller), |attempt| async move {
            let state: TaskState = attempt.load(stream).await?;
            let event = match due {
                Some((i0, data)) => {
                    let iv = Nonces::fresh(1)
                        .take()
                        .map_err(|e| rejected(CodedError::internal(e)))?;
                    let sealed = records
                        .key
                        .seal(data, iv)
                        .map_err(|e| rejected(CodedError::internal(e)))?;
                    TaskEvent::TaskScheduled {
                        org: org.to_owned(),
                        k0: k0.to_owned(),
                        i0: i0.clone(),
                        data: sealed,
                    }
                }
                None if state.0.is_none() => {
                    return Ok(Decision::new(sealed_for(records, caller, json!({}))?));
                }
                None => TaskEvent::TaskDone {
                    org: org.to_owned(),
                    k0: k0.to_owned(),
                },
            };
            Ok(Decision::new(sealed_for(records, caller, json!({}))?)
                .write(stream.clone(), vec![encode(&event)?]))
        })
        .await
        .map_err(failure)?;
    opened(&records.key, caller, reply).map(|_| ())
}
