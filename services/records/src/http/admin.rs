//! The administrator's functions: declareClass and issueOrgToken, through the command runner.

use crate::class;
use crate::hash::sha32;
use crate::http::auth::Caller;
use crate::http::body::args;
use crate::http::context::Records;
use crate::http::failure::CodedError;
use crate::http::run::{command, encode, failure, opened, rejected, sealed_for};
use crate::streams;
use palimpsest_events::records::{ClassDeclaration, ClassEvent, TokenEvent};
use palimpsest_web::command::{CommandError, CommandRequest, Decision};
use serde::Deserialize;
use serde_json::{Value, json};

/// State of a class stream: its recorded declaration.
#[derive(Debug, Clone, Default)]
pub struct ClassState(pub Option<ClassDeclaration>);

impl palimpsest_web::command::StreamState for ClassState {
    fn initial(_: &palimpsest_events::StreamName) -> Self {
        ClassState(None)
    }
    fn fold(
        &mut self,
        event: &palimpsest_events::RecordedEvent,
    ) -> Result<(), palimpsest_events::DecodeError> {
        use palimpsest_events::DomainEvent;
        let ClassEvent::ClassDeclared { declaration } = ClassEvent::decode(event)?;
        self.0 = Some(declaration);
        Ok(())
    }
}

/// The class decider: record a declaration once; the same again changes nothing, another is
/// a conflict (a declaration never changes).
pub fn decide_declaration(
    declaration: &ClassDeclaration,
    state: &ClassState,
) -> Result<Vec<ClassEvent>, crate::RecordsError> {
    class::validate(declaration)?;
    match &state.0 {
        Some(recorded) if recorded == declaration => Ok(Vec::new()),
        Some(_) => Err(crate::RecordsError::Conflict(format!(
            "class {} is declared otherwise; a declaration never changes",
            declaration.clazz
        ))),
        None => Ok(vec![ClassEvent::ClassDeclared {
            declaration: declaration.clone(),
        }]),
    }
}

/// `declareClass {clazz, sync, pk, collections, indexes}` (admin).
pub async fn declare_class(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("declareClass")?;
    let declaration: ClassDeclaration = args(body)?;
    declare(records, request, caller, declaration).await
}

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

/// `issueOrgToken {org}`.
#[derive(Deserialize)]
struct IssueToken {
    org: String,
}

/// `issueOrgToken` (admin): a new bearer token scoped to `org`. The log keeps its sha32 only;
/// the reply stored for the Idempotency-Key is sealed like every records reply.
pub async fn issue_org_token(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("issueOrgToken")?;
    let a: IssueToken = args(body)?;
    let org = caller.org(Some(&a.org))?;
    let token = {
        use rand::Rng;
        let bytes: [u8; 32] = rand::rng().random();
        hex::encode(bytes)
    };
    let stream = &streams::token(&org);
    let (org, token) = (&org, &token);
    let reply = records
        .app
        .commands
        .run(command(request, caller), |attempt| async move {
            // Read so the append expects the version seen: tokens of one org are appended in turn.
            let _: TokenState = attempt.load(stream).await?;
            let event = encode(&TokenEvent::OrgTokenIssued {
                org: org.clone(),
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

/// A token stream's state: nothing a decision needs beyond its version.
#[derive(Debug, Clone, Default)]
struct TokenState;

impl palimpsest_web::command::StreamState for TokenState {
    fn initial(_: &palimpsest_events::StreamName) -> Self {
        TokenState
    }
    fn fold(
        &mut self,
        _: &palimpsest_events::RecordedEvent,
    ) -> Result<(), palimpsest_events::DecodeError> {
        Ok(())
    }
}
