//! The purges "out of transaction" (admin): purgeAllDocs, purgeOrg, purgeOrgs, purgeDlvDocs,
//! and the server's own zombie retention ([`crate::retention`]).
//!
//! Candidates come from the row tables; each is then purged by a decision on its own stream
//! state ([`crate::document::purge`], in commands of [`crate::bulk::CHUNK`] documents), so a
//! document that changed since it was listed is judged as it is now. Each purge is one call
//! under its Idempotency-Key ([`crate::command::call`], taken by the routes in
//! `http/purges.rs`): a repeat answers the first count and appends nothing.

use crate::bulk::change_in_chunks;
use crate::caller::Caller;
use crate::class::lookup::{all_classes, find};
use crate::coded_error::CodedError;
use crate::command::encode;
use crate::context::Records;
use crate::document::{DocumentState, Purge, UniqueState, decide_purge};
use crate::projection::schema::table;
use crate::read::index::{IndexFilter, matching_pks};
use palimpsest_events::records::ClassDeclaration;
use palimpsest_events::records::UniqueEvent;
use palimpsest_web::command::Steps;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_postgres::error::SqlState;

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

/// `purgeAllDocs`: every document of class `cl` in `org`, physically; answers `{"purged": n}`.
pub async fn all_docs(
    records: &Records,
    caller: &Caller,
    steps: &Steps,
    org: &str,
    cl: &str,
) -> Result<Value, CodedError> {
    let class = find(records, cl).await?.class;
    let targets = candidates(records, &class.clazz, "org = $1", &[&org]).await?;
    let purged = purge_docs(records, caller, steps, &class, targets, Purge::Everything).await?;
    Ok(json!({"purged": purged}))
}

/// `purgeOrg`: with `z`, the org's zombies and `del` rows older than `z`; without, every
/// document of the org in every class (its `Org` document included).
pub async fn org(
    records: &Records,
    caller: &Caller,
    steps: &Steps,
    org: &str,
    z: Option<i64>,
) -> Result<Value, CodedError> {
    let mut purged = 0;
    for class in all_classes(records).await? {
        let (targets, purge) = match z {
            Some(z) => (
                candidates(records, &class.clazz, "org = $1 AND z < $2", &[&org, &z]).await?,
                Purge::Before(z),
            ),
            None => (
                candidates(records, &class.clazz, "org = $1", &[&org]).await?,
                Purge::Everything,
            ),
        };
        purged += purge_docs(records, caller, steps, &class, targets, purge).await?;
    }
    Ok(json!({"purged": purged}))
}

/// `purgeOrgs` (and the retention): zombies and `del` rows older than `z` in every
/// organisation; answers `{"purged": n}`.
pub async fn every_org_before(
    records: &Records,
    caller: &Caller,
    steps: &Steps,
    z: i64,
) -> Result<Value, CodedError> {
    let mut purged = 0;
    for class in all_classes(records).await? {
        let targets = candidates(records, &class.clazz, "z < $1", &[&z]).await?;
        purged += purge_docs(records, caller, steps, &class, targets, Purge::Before(z)).await?;
    }
    Ok(json!({"purged": purged}))
}

/// `purgeDlvDocs {org, cl, ix, comp, val, lsp?}`: which documents of an org to purge by index.
#[derive(Deserialize)]
pub struct DlvDocs {
    /// The organisation.
    pub org: String,
    /// The class.
    pub cl: String,
    /// The index (a name, or names for a composite one).
    pub ix: Value,
    /// How the index compares with `val`.
    pub comp: String,
    /// The value compared with (typically a validity date).
    pub val: Value,
    /// Only these pks, when given.
    pub lsp: Option<Vec<String>>,
}

/// `purgeDlvDocs`: the documents of `org` whose index compares with `val` (typically a
/// validity date past), restricted to the pks `lsp` when given; answers `{"purged": n}`.
pub async fn dlv_docs(
    records: &Records,
    caller: &Caller,
    steps: &Steps,
    org: String,
    a: &DlvDocs,
) -> Result<Value, CodedError> {
    let class = find(records, &a.cl).await?.class;
    let filter = IndexFilter {
        ix: &a.ix,
        comp: &a.comp,
        val: &a.val,
        v: None,
    };
    let targets: Vec<(String, String)> = matching_pks(records, &class, Some(org.clone()), filter)
        .await?
        .into_iter()
        .filter(|pk| a.lsp.as_ref().is_none_or(|keep| keep.contains(pk)))
        .map(|pk| (org.clone(), pk))
        .collect();
    let purged = purge_docs(records, caller, steps, &class, targets, Purge::Everything).await?;
    Ok(json!({"purged": purged}))
}
