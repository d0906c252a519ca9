//! A bulk change over many documents (a purge, a key rotation), carried out as one command per
//! chunk of [`CHUNK`] documents, each a step of the call it belongs to and each document decided
//! on its own stream state (so one changed since it was listed is judged as it is now).

use crate::caller::Caller;
use crate::coded_error::CodedError;
use crate::command::{command, failure};
use crate::context::Records;
use crate::streams::DocKey;
use palimpsest_web::command::{Attempt, CommandError, Decision, Steps, count_of, count_reply};
use std::future::Future;

/// Documents changed per command.
pub const CHUNK: usize = 50;

/// Runs `change` on each document `(org, pk)` of `targets` (of class `clazz`), a command per
/// chunk; `change` adds a document's events to the decision and says whether it changed it.
/// Answers how many documents changed.
pub async fn change_in_chunks<F, Fut>(
    records: &Records,
    caller: &Caller,
    steps: &Steps,
    clazz: &str,
    targets: &[(String, String)],
    change: F,
) -> Result<u64, CodedError>
where
    F: Fn(Attempt, DocKey, Decision) -> Fut,
    Fut: Future<Output = Result<(Decision, bool), CommandError<CodedError>>>,
{
    let mut changed = 0;
    let change = &change;
    for chunk in targets.chunks(CHUNK) {
        let keys: Vec<DocKey> = chunk
            .iter()
            .map(|(org, pk)| DocKey {
                org: org.clone(),
                clazz: clazz.to_owned(),
                pk: pk.clone(),
            })
            .collect();
        let request = steps.next(&identity(&keys));
        let keys = &keys;
        let reply = records
            .app
            .commands
            .run(command(&request, caller), |attempt| async move {
                let mut decision = Decision::new(count_reply(0));
                let mut count = 0;
                for key in keys {
                    let (next, done) = change(attempt.clone(), key.clone(), decision).await?;
                    decision = next;
                    count += u64::from(done);
                }
                Ok(decision.with_reply(count_reply(count)))
            })
            .await
            .map_err(failure)?;
        changed += count_of(&reply).map_err(failure)?;
    }
    Ok(changed)
}

/// What a chunk is: its documents' keys, in order.
fn identity(keys: &[DocKey]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for key in keys {
        for part in [&key.org, &key.clazz, &key.pk] {
            bytes.extend_from_slice(part.as_bytes());
            bytes.push(0);
        }
    }
    bytes
}
