//! Document events into their class's row table: the document's row (`ck` = `''`) replaced,
//! a `del` row added beside it when it left collections, every row gone on a purge. Each event
//! is planned as statements ([`Statement`]), which the projector sends pipelined.
//!
//! A document's rows are written only by the events of its own stream
//! (`records/doc/<org>:<clazz>:<pk>`), so the stream's first event finds no row of it: its row is
//! inserted without the `DELETE` a replacement needs (one statement less per new document).

use crate::projection::schema::table;
use crate::seal;
use palimpsest_events::records::{CollectionKey, DocumentEvent, IndexValue, LeftRow, Row};
use palimpsest_projections::ProjectionError;
use palimpsest_projections::statement::{Param, Statement};

/// Where a document event stands in its document's stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The stream's first event: no row of the document exists yet.
    First,
    /// A later event: the document may have rows.
    Later,
}

impl Place {
    /// The place of the event at `version` of its stream.
    pub fn at(version: i64) -> Place {
        if version == 1 {
            Place::First
        } else {
            Place::Later
        }
    }
}

/// The statements of one document event, appended to `out` in the order they must run.
pub fn plan(
    out: &mut Vec<Statement>,
    s: &str,
    event: &DocumentEvent,
    place: Place,
) -> Result<(), ProjectionError> {
    match event {
        DocumentEvent::DocumentCreated { row } => replace(out, s, row, 0, place),
        DocumentEvent::DocumentUpdated { row, left } => {
            replace(out, s, row, 0, place)?;
            match left {
                Some(left) => insert_left(out, s, row, left),
                None => Ok(()),
            }
        }
        DocumentEvent::DocumentZombified { row } => replace(out, s, row, 1, place),
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
            out.push(Statement::dml(
                format!("UPDATE {t} SET data = $3 WHERE org = $1 AND pk = $2 AND ck = ''"),
                vec![
                    Box::new(org.clone()),
                    Box::new(pk.clone()),
                    Box::new(bytes(data)?),
                ],
            ));
            for seal in left {
                out.push(Statement::dml(
                    format!("UPDATE {t} SET data = $4 WHERE org = $1 AND pk = $2 AND ck = $3"),
                    vec![
                        Box::new(org.clone()),
                        Box::new(pk.clone()),
                        Box::new(seal.v.to_string()),
                        Box::new(bytes(&seal.data)?),
                    ],
                ));
            }
            Ok(())
        }
        DocumentEvent::LeftRowsPurged {
            org,
            clazz,
            pk,
            before,
        } => {
            out.push(Statement::dml(
                format!(
                    "DELETE FROM {} WHERE org = $1 AND pk = $2 AND del = 1 AND z < $3",
                    table(s, clazz)
                ),
                vec![
                    Box::new(org.clone()),
                    Box::new(pk.clone()),
                    Box::new(*before),
                ],
            ));
            Ok(())
        }
        DocumentEvent::DocumentPurged { org, clazz, pk } => {
            out.push(Statement::dml(
                format!("DELETE FROM {} WHERE org = $1 AND pk = $2", table(s, clazz)),
                vec![Box::new(org.clone()), Box::new(pk.clone())],
            ));
            Ok(())
        }
    }
}

fn replace(
    out: &mut Vec<Statement>,
    s: &str,
    row: &Row,
    x: i16,
    place: Place,
) -> Result<(), ProjectionError> {
    let t = table(s, &row.clazz);
    if place == Place::Later {
        out.push(Statement::dml(
            format!("DELETE FROM {t} WHERE org = $1 AND pk = $2 AND ck = ''"),
            vec![Box::new(row.org.clone()), Box::new(row.pk.clone())],
        ));
    }
    let z = (x == 1).then_some(row.v);
    let columns = Columns::of(&row.collections, &row.indexes);
    insert(out, &t, row, x, z, String::new(), 0, columns, &row.data)
}

fn insert_left(
    out: &mut Vec<Statement>,
    s: &str,
    row: &Row,
    left: &LeftRow,
) -> Result<(), ProjectionError> {
    let t = table(s, &row.clazz);
    let columns = Columns::of(&left.collections, &Default::default());
    insert(
        out,
        &t,
        row,
        2,
        Some(row.v),
        row.v.to_string(),
        1,
        columns,
        &left.data,
    )
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
fn insert(
    out: &mut Vec<Statement>,
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
    out.push(Statement::row(format!("{t} ({names})"), params));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn created() -> DocumentEvent {
        DocumentEvent::DocumentCreated {
            row: Row {
                org: "demo".into(),
                clazz: "Article".into(),
                pk: "pk".into(),
                v: 1_000,
                collections: Default::default(),
                indexes: Default::default(),
                data: "AAAA".into(),
            },
        }
    }

    fn planned(event: &DocumentEvent, place: Place) -> Vec<String> {
        let mut out = Vec::new();
        plan(&mut out, "records", event, place).expect("plan");
        out.iter()
            .map(|s| match s {
                Statement::Dml { sql, .. } | Statement::Ddl(sql) => {
                    sql.split_whitespace().next().unwrap_or_default().to_owned()
                }
                Statement::Row { .. } => "INSERT".to_owned(),
            })
            .collect()
    }

    #[test]
    fn the_first_event_of_a_document_inserts_its_row_without_deleting() {
        assert_eq!(planned(&created(), Place::First), ["INSERT"]);
    }

    #[test]
    fn a_later_event_replaces_the_row_the_document_may_have() {
        assert_eq!(planned(&created(), Place::Later), ["DELETE", "INSERT"]);
        assert_eq!(Place::at(1), Place::First);
        assert_eq!(Place::at(2), Place::Later);
    }
}
