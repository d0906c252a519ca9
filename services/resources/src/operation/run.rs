//! Running an operation through the platform's command runner: one command per request, so
//! an operation is one append, retried from fresh state when another writer moved a stream it
//! read, answered once the read model shows it. The routes build the operation and the actor;
//! this is the only place an operation meets the runner.

use super::{Actor, Changeset, OperationFailure};
use crate::ids::IdSource;
use crate::projection::NAME;
use crate::streams::CONTEXT;
use palimpsest_events::Metadata;
use palimpsest_web::command::{Command, CommandRequest, CommandRunner, Reply};

/// Runs `operation` as one command for `actor` through `commands`: one append, the reply
/// after the read model shows it. `operation` gets a fresh [`Changeset`] (taking ids from
/// `ids`) on each try and gives it back with the reply.
pub async fn run<F, Fut>(
    commands: &CommandRunner,
    ids: &IdSource,
    request: &CommandRequest,
    actor: Actor,
    mut operation: F,
) -> Result<Reply, OperationFailure>
where
    F: FnMut(Changeset) -> Fut,
    Fut: Future<Output = Result<(Changeset, Reply), OperationFailure>>,
{
    let command = Command {
        request,
        context: CONTEXT,
        projections: &[NAME],
        metadata: Metadata {
            actor: Some(actor.name()),
            correlation_id: Some(uuid::Uuid::now_v7()),
            ..Metadata::default()
        },
    };
    commands
        .run(command, |attempt| {
            let done = operation(Changeset::new(attempt, actor, ids.clone()));
            async move {
                let (changeset, reply) = done.await?;
                changeset.finish(reply)
            }
        })
        .await
}
