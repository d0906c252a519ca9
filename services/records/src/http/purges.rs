//! The purges "out of transaction" (admin): purgeAllDocs, purgeOrg, purgeOrgs, purgeDlvDocs.
//!
//! Candidates come from the row tables; each is then purged by a decision on its own stream
//! state (in commands of [`crate::http::chunks::CHUNK`] documents), so a document that changed
//! since it was listed is judged as it is now. Each purge is one call under its Idempotency-Key
//! ([`call`]): a repeat answers the first count and appends nothing.

use crate::class::{HDR, ORG, builtin};
use crate::document::{DocumentState, Purge, UniqueState, decide_purge};
use crate::http::auth::Caller;
use crate::http::body::args;
use crate::http::chunks::change_in_chunks;
use crate::http::classes;
use crate::http::context::Records;
use crate::http::failure::CodedError;
use crate::http::run::{call, encode};
use crate::projection::schema::table;
use palimpsest_events::records::ClassDeclaration;
use palimpsest_events::records::UniqueEvent;
use palimpsest_web::command::{CommandRequest, Steps};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_postgres::error::SqlState;

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
            && let Some(class) = builtin(clazz)
        {
            out.push(Arc::new(class));
        }
    }
    Ok(out)
}

/// `(org, pk)` of the rows `filter` selects in the class's table (none when it has no table).
pub(crate) async fn candidates(
    records: &Records,
    clazz: &str,
    filter: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<Vec<(String, String)>, CodedError> {
    let client = records.app.read.get().await?;
    let sql = format!(
        "SELECT DISTINCT org, pk FROM {} WHERE {filter} ORDER BY org, pk",
        table("records", clazz)
    );
    match client.query(&sql, params).await {
        Ok(rows) => Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect()),
        Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

/// Purges `targets` of `class` as `purge` says, a command per chunk (steps of the call);
/// answers how many documents changed.
pub async fn purge_docs(
    records: &Records,
    caller: &Caller,
    steps: &Steps,
    class: &Arc<ClassDeclaration>,
    targets: Vec<(String, String)>,
    purge: Purge,
) -> Result<u64, CodedError> {
    let class = &**class;
    change_in_chunks(
        records,
        caller,
        steps,
        &class.clazz,
        &targets,
        |attempt, key, mut decision| async move {
            let state: DocumentState = attempt.load(&key.stream()).await?;
            let (events, releases) = decide_purge(&key, class, &state, purge);
            if events.is_empty() {
                return Ok((decision, false));
            }
            let events = events.iter().map(encode).collect::<Result<Vec<_>, _>>()?;
            decision = decision.write(key.stream(), events);
            for (lock, release) in releases {
                let held: UniqueState = attempt.load(&lock.stream()).await?;
                if let UniqueEvent::UniqueReleased { owner } = &release
                    && held.owner.as_ref() == Some(owner)
                {
                    decision = decision.write(lock.stream(), vec![encode(&release)?]);
                }
            }
            Ok((decision, true))
        },
    )
    .await
}

/// `purgeAllDocs {org, cl}`.
#[derive(Deserialize)]
struct PurgeAllDocs {
    org: String,
    cl: String,
}

/// `purgeAllDocs` (admin): every document of a class in an org, physically.
pub async fn purge_all_docs(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("purgeAllDocs")?;
    let a: PurgeAllDocs = args(body)?;
    let org = caller.org(Some(&a.org))?;
    call(records, caller, request, |steps| async move {
        let class = classes::find(records, &a.cl).await?.class;
        let targets = candidates(records, &class.clazz, "org = $1", &[&org]).await?;
        let purged =
            purge_docs(records, caller, &steps, &class, targets, Purge::Everything).await?;
        Ok(json!({"purged": purged}))
    })
    .await
}

/// `purgeOrg {org, z?}`.
#[derive(Deserialize)]
struct PurgeOrg {
    org: String,
    z: Option<i64>,
}

/// `purgeOrg` (admin): with `z`, the org's zombies and `del` rows older than `z`; without, every
/// document of the org in every class (its `Org` document included).
pub async fn purge_org(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("purgeOrg")?;
    let a: PurgeOrg = args(body)?;
    let org = caller.org(Some(&a.org))?;
    call(records, caller, request, |steps| async move {
        let mut purged = 0;
        for class in all_classes(records).await? {
            let (targets, purge) = match a.z {
                Some(z) => (
                    candidates(records, &class.clazz, "org = $1 AND z < $2", &[&org, &z]).await?,
                    Purge::Before(z),
                ),
                None => (
                    candidates(records, &class.clazz, "org = $1", &[&org]).await?,
                    Purge::Everything,
                ),
            };
            purged += purge_docs(records, caller, &steps, &class, targets, purge).await?;
        }
        Ok(json!({"purged": purged}))
    })
    .await
}

/// `purgeOrgs {z}`.
#[derive(Deserialize)]
struct PurgeOrgs {
    z: i64,
}

/// `purgeOrgs` (admin): zombies and `del` rows older than `z` in every organisation.
pub async fn purge_orgs(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("purgeOrgs")?;
    let a: PurgeOrgs = args(body)?;
    call(records, caller, request, |steps| async move {
        let mut purged = 0;
        for class in all_classes(records).await? {
            let targets = candidates(records, &class.clazz, "z < $1", &[&a.z]).await?;
            purged +=
                purge_docs(records, caller, &steps, &class, targets, Purge::Before(a.z)).await?;
        }
        Ok(json!({"purged": purged}))
    })
    .await
}

/// `purgeDlvDocs {org, cl, ix, comp, val, lsp?}`.
#[derive(Deserialize)]
struct PurgeDlvDocs {
    org: String,
    cl: String,
    ix: Value,
    comp: String,
    val: Value,
    lsp: Option<Vec<String>>,
}

/// `purgeDlvDocs` (admin): the org's documents whose index compares with `val` (typically a
/// validity date past), restricted to the pks `lsp` when given.
pub async fn purge_dlv_docs(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("purgeDlvDocs")?;
    let a: PurgeDlvDocs = args(body)?;
    let org = caller.org(Some(&a.org))?;
    call(records, caller, request, |steps| async move {
        dlv_docs(records, caller, &steps, org, &a).await
    })
    .await
}

/// `purgeDlvDocs` once its arguments are checked.
async fn dlv_docs(
    records: &Records,
    caller: &Caller,
    steps: &Steps,
    org: String,
    a: &PurgeDlvDocs,
) -> Result<Value, CodedError> {
    let class = classes::find(records, &a.cl).await?.class;
    let found = crate::http::reads::by_index(
        records,
        &class,
        Some(org.clone()),
        &a.ix,
        &a.comp,
        &a.val,
        None,
    )
    .await?;
    let targets: Vec<(String, String)> = found["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|r| r["pk"].as_str().map(str::to_owned))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .filter(|pk| a.lsp.as_ref().is_none_or(|keep| keep.contains(pk)))
        .map(|pk| (org.clone(), pk))
        .collect();
    let purged = purge_docs(records, caller, steps, &class, targets, Purge::Everything).await?;
    Ok(json!({"purged": purged}))
}
