//! Document events into their class's row table: the document's row (`ck` = `''`) replaced,
//! a `del` row added beside it when it left collections, every row gone on a purge.

use crate::projection::schema::table;
use crate::seal;
use deadpool_postgres::Transaction;
use palimpsest_events::records::{CollectionKey, DocumentEvent, IndexValue, LeftRow, Row};
use palimpsest_projections::ProjectionError;
use tokio_postgres::types::ToSql;

type Param = Box<dyn ToSql + Sync + Send>;

/// Applies one document event.
pub async fn apply(
    tx: &Transaction<'_>,
    s: &str,
    event: &DocumentEvent,
) -> Result<(), ProjectionError> {
    match event {
        DocumentEvent::DocumentCreated { row } => replace(tx, s, row, 0).await,
        DocumentEvent::DocumentUpdated { row, left } => {
            replace(tx, s, row, 0).await?;
            match left {
                Some(left) => insert_left(tx, s, row, left).await,
                None => Ok(()),
            }
        }
        DocumentEvent::DocumentZombified { row } => replace(tx, s, row, 1).await,
        DocumentEvent::DocumentResealed {
            org,
            clazz,
            pk,
            data,
            left,
        } => {
            let t = table(s, clazz);
            let bytes = |sealed: &str| {
                seal::decode(sealed).map_err(|_| {
                    ProjectionError::Invalid(format!("row {pk} holds data that is not base64url"))
                })
            };
            tx.execute(
                &format!("UPDATE {t} SET data = $3 WHERE org = $1 AND pk = $2 AND ck = ''"),
                &[org, pk, &bytes(data)?],
            )
            .await?;
            for seal in left {
                tx.execute(
                    &format!("UPDATE {t} SET data = $4 WHERE org = $1 AND pk = $2 AND ck = $3"),
                    &[org, pk, &seal.v.to_string(), &bytes(&seal.data)?],
                )
                .await?;
            }
            Ok(())
        }
        DocumentEvent::LeftRowsPurged {
            org,
            clazz,
            pk,
            before,
        } => {
            tx.execute(
                &format!(
                    "DELETE FROM {} WHERE org = $1 AND pk = $2 AND del = 1 AND z < $3",
                    table(s, clazz)
                ),
                &[org, pk, before],
            )
            .await?;
            Ok(())
        }
        DocumentEvent::DocumentPurged { org, clazz, pk } => {
            tx.execute(
                &format!("DELETE FROM {} WHERE org = $1 AND pk = $2", table(s, clazz)),
                &[org, pk],
            )
            .await?;
            Ok(())
        }
    }
}

async fn replace(tx: &Transaction<'_>, s: &str, row: &Row, x: i16) -> Result<(), ProjectionError> {
    let t = table(s, &row.clazz);
    tx.execute(
        &format!("DELETE FROM {t} WHERE org = $1 AND pk = $2 AND ck = ''"),
        &[&row.org, &row.pk],
    )
    .await?;
    let z = (x == 1).then_some(row.v);
    let columns = Columns::of(&row.collections, &row.indexes);
    insert(tx, &t, row, x, z, String::new(), 0, columns, &row.data).await
}

async fn insert_left(
    tx: &Transaction<'_>,
    s: &str,
    row: &Row,
    left: &LeftRow,
) -> Result<(), ProjectionError> {
    let t = table(s, &row.clazz);
    let columns = Columns::of(&left.collections, &Default::default());
    insert(
        tx,
        &t,
        row,
        2,
        Some(row.v),
        row.v.to_string(),
        1,
        columns,
        &left.data,
    )
    .await
}

/// Named column values beyond the technical ones.
struct Columns {
    names: Vec<String>,
    values: Vec<Param>,
}

impl Columns {
    fn of(
        collections: &std::collections::BTreeMap<String, CollectionKey>,
        indexes: &std::collections::BTreeMap<String, IndexValue>,
    ) -> Columns {
        let mut names = Vec::new();
        let mut values: Vec<Param> = Vec::new();
        for (name, key) in collections {
            names.push(name.clone());
            values.push(match key {
                CollectionKey::One(k) => Box::new(k.clone()),
                CollectionKey::Many(ks) => Box::new(ks.clone()),
            });
        }
        for (name, value) in indexes {
            names.push(name.clone());
            values.push(match value {
                IndexValue::Text(t) => Box::new(t.clone()),
                IndexValue::Int(i) => Box::new(*i),
                IndexValue::Float(f) => Box::new(*f),
                IndexValue::List(l) => Box::new(l.clone()),
            });
        }
        Columns { names, values }
    }
}

#[allow(clippy::too_many_arguments)]
async fn insert(
    tx: &Transaction<'_>,
    t: &str,
    row: &Row,
    x: i16,
    z: Option<i64>,
    ck: String,
    del: i16,
    columns: Columns,
    sealed: &str,
) -> Result<(), ProjectionError> {
    let data = seal::decode(sealed).map_err(|_| {
        ProjectionError::Invalid(format!("row {} holds data that is not base64url", row.pk))
    })?;
    let mut params: Vec<Param> = vec![
        Box::new(row.org.clone()),
        Box::new(row.pk.clone()),
        Box::new(row.v),
        Box::new(x),
        Box::new(z),
        Box::new(ck),
        Box::new(del),
        Box::new(data),
    ];
    let mut names = String::from("org, pk, v, x, z, ck, del, data");
    for (name, value) in columns.names.iter().zip(columns.values) {
        names.push_str(&format!(", \"{name}\""));
        params.push(value);
    }
    let placeholders: Vec<String> = (1..=params.len()).map(|i| format!("${i}")).collect();
    let refs: Vec<&(dyn ToSql + Sync)> =
        params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
    tx.execute(
        &format!(
            "INSERT INTO {t} ({names}) VALUES ({})",
            placeholders.join(", ")
        ),
        &refs,
    )
    .await?;
    Ok(())
}
