//! The administrator's functions: declareClass and issueOrgToken.

use crate::class;
use crate::hash::sha32;
use crate::http::auth::Caller;
use crate::http::body::args;
use crate::http::classes;
use crate::http::context::Records;
use crate::http::failure::Failure;
use crate::projection::NAME;
use crate::streams;
use palimpsest_events::records::{ClassDeclaration, ClassEvent, TokenEvent};
use palimpsest_events::{DomainEvent, ExpectedVersion, Metadata};
use palimpsest_log::{AppendError, AppendRequest};
use serde::Deserialize;
use serde_json::{Value, json};

fn metadata(caller: &Caller, key: Option<String>) -> Metadata {
    Metadata {
        actor: Some(caller.actor()),
        correlation_id: Some(uuid::Uuid::now_v7()),
        idempotency_key: key.map(|k| format!("records:{}:{k}", caller.actor())),
        ..Metadata::default()
    }
}

/// `declareClass {clazz, sync, pk, collections, indexes}` (admin): records the class once; the
/// same declaration again is answered as is, a different one is a conflict.
pub async fn declare_class(
    records: &Records,
    caller: &Caller,
    key: Option<String>,
    body: &[u8],
) -> Result<Value, Failure> {
    caller.admin("declareClass")?;
    let declaration: ClassDeclaration = args(body)?;
    declare(records, declaration, metadata(caller, key)).await
}

/// Records `declaration` unless the same is recorded; the schema file's classes come here on start.
pub async fn declare(
    records: &Records,
    declaration: ClassDeclaration,
    metadata: Metadata,
) -> Result<Value, Failure> {
    class::validate(&declaration)?;
    if let Some(recorded) = classes::recorded(records, &declaration.clazz).await? {
        return if *recorded == declaration {
            Ok(json!(declaration))
        } else {
            Err(crate::RecordsError::Conflict(format!(
                "class {} is declared otherwise; a declaration never changes",
                declaration.clazz
            ))
            .into())
        };
    }
    let event = ClassEvent::ClassDeclared {
        declaration: declaration.clone(),
    }
    .encode()
    .map_err(Failure::internal)?;
    let request = AppendRequest::new()
        .stream(
            streams::class(&declaration.clazz),
            ExpectedVersion::NoStream,
            vec![event],
        )
        .metadata(metadata);
    match records.app.store.append(request).await {
        Ok(appended) => {
            records.app.wait_for(NAME, appended.last_position).await;
            Ok(json!(declaration))
        }
        // Declared meanwhile by another request: answer as if it had been there.
        Err(AppendError::WrongExpectedVersion { .. }) => {
            Box::pin(declare(records, declaration, Metadata::default())).await
        }
        Err(e) => Err(e.into()),
    }
}

/// `issueOrgToken {org}`.
#[derive(Deserialize)]
struct IssueToken {
    org: String,
}

/// `issueOrgToken` (admin): a new bearer token scoped to `org`, shown once; the log keeps its
/// sha32 only. A repeated `Idempotency-Key` is refused (the token cannot be shown again).
pub async fn issue_org_token(
    records: &Records,
    caller: &Caller,
    key: Option<String>,
    body: &[u8],
) -> Result<Value, Failure> {
    caller.admin("issueOrgToken")?;
    let a: IssueToken = args(body)?;
    let org = caller.org(Some(&a.org))?;
    let token = {
        use rand::Rng;
        let bytes: [u8; 32] = rand::rng().random();
        hex::encode(bytes)
    };
    let event = TokenEvent::OrgTokenIssued {
        org: org.clone(),
        hash: sha32(&token),
    }
    .encode()
    .map_err(Failure::internal)?;
    let request = AppendRequest::new()
        .stream(streams::token(&org), ExpectedVersion::Any, vec![event])
        .metadata(metadata(caller, key));
    let appended = records.app.store.append(request).await?;
    if appended.replayed {
        return Err(crate::RecordsError::Conflict(
            "a token was already issued under this Idempotency-Key; it is shown only once".into(),
        )
        .into());
    }
    records.app.wait_for(NAME, appended.last_position).await;
    Ok(json!({"token": token}))
}
