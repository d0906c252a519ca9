//! Reading a History Map SQLite database as the original's runtime migration (spec §7) would
//! leave it, without ever writing to the file.
//!
//! The file is opened read-only. Older shapes are repaired in memory, as `BackEnd/db/polygons.js`
//! repairs them in place at startup:
//!
//! - missing columns read as the defaults `ensureColumn` adds (`entities.status` 1,
//!   `entities.is_deleted` 0, `entities.type_id` `'country'`, `geometries.is_deleted` 0,
//!   `geometries.binding` NULL, `sections.user_id` NULL);
//! - the deprecated `kind` (entities, geometries) and `line_mode` (geometries) columns are not
//!   read, as the table rebuild drops them;
//! - a geometry whose `type` is empty (NULL or blank) or the legacy token `line`/`path` takes the `type_id` of
//!   the first active entity linked to it (left as it is when none is).
//!
//! Values are read as SQLite stores them (its columns are loosely typed): texts, integers and
//! reals are converted where the spec's type says so, never guessed.

// Commits and submissions are the spec's rows whichever database holds them.
use crate::read::rows::{CommitRow, SubmissionRow};
use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OpenFlags, Row};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// A row of `entities`.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceEntity {
    /// `id`.
    pub id: String,
    /// `name`.
    pub name: String,
    /// `slug`.
    pub slug: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `type_id`.
    pub type_id: String,
    /// `status` (NULL allowed).
    pub status: Option<i64>,
    /// `is_deleted`.
    pub is_deleted: i64,
    /// `created_at`.
    pub created_at: Option<String>,
    /// `updated_at`.
    pub updated_at: Option<String>,
}

/// A row of `geometries`, its `type` already repaired.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceGeometry {
    /// `id`.
    pub id: String,
    /// `type`.
    pub kind: Option<String>,
    /// `is_deleted`.
    pub is_deleted: i64,
    /// `draw_geometry` (JSON text).
    pub draw_geometry: String,
    /// `binding` (JSON text).
    pub binding: Option<String>,
    /// `time_start`.
    pub time_start: Option<i64>,
    /// `time_end`.
    pub time_end: Option<i64>,
    /// `bbox_min_lng`, `bbox_min_lat`, `bbox_max_lng`, `bbox_max_lat`.
    pub bbox: [Option<f64>; 4],
    /// `created_at`.
    pub created_at: Option<String>,
    /// `updated_at`.
    pub updated_at: Option<String>,
}

/// A row of `entity_geometries`.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceLink {
    /// `entity_id`.
    pub entity_id: String,
    /// `geometry_id`.
    pub geometry_id: String,
    /// `created_at`.
    pub created_at: Option<String>,
}

/// A row of `sections` with its `section_states` row.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceSection {
    /// `id`.
    pub id: String,
    /// `title`.
    pub title: String,
    /// `description`.
    pub description: Option<String>,
    /// `user_id`.
    pub user_id: Option<String>,
    /// `created_by`.
    pub created_by: Option<String>,
    /// `created_at`.
    pub created_at: String,
    /// `section_states.locked_by`.
    pub locked_by: Option<String>,
    /// `section_states.locked_at`.
    pub locked_at: Option<String>,
    /// `section_states.lock_expires_at`.
    pub lock_expires_at: Option<String>,
}

/// Everything the import carries, read from one database.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Source {
    /// Published entities, by id.
    pub entities: Vec<SourceEntity>,
    /// Published geometries, by id.
    pub geometries: Vec<SourceGeometry>,
    /// Entity links, in the order SQLite stored them.
    pub links: Vec<SourceLink>,
    /// Sections, by id.
    pub sections: Vec<SourceSection>,
    /// Commits, by section and number.
    pub commits: Vec<CommitRow>,
    /// Submissions, by section and time.
    pub submissions: Vec<SubmissionRow>,
    /// Geometries whose legacy `type` was repaired, by id.
    pub repaired_types: Vec<String>,
    /// Who the imported events name as their actor (`import:<file name>`; empty: [`super::ACTOR`]).
    pub importer: String,
}

/// Why a database could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// SQLite refused (not a database, locked, a query failed).
    #[error("reading the SQLite database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A table the import needs is not there.
    #[error("the database has no `{0}` table: not a History Map database")]
    MissingTable(&'static str),
    /// A value has a type the spec's column cannot hold.
    #[error("{table} row {id}: column {column} holds {found}, not {wanted}")]
    Type {
        /// The table.
        table: &'static str,
        /// The row's id (or rowid).
        id: String,
        /// The column.
        column: &'static str,
        /// What the spec says.
        wanted: &'static str,
        /// What is there.
        found: &'static str,
    },
}

/// Reads `path` (opened read-only: the file is never written) and repairs its shape in memory.
pub fn read(path: &Path) -> Result<Source, SourceError> {
    let db = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let mut source = Source {
        entities: entities(&db)?,
        geometries: geometries(&db)?,
        links: links(&db)?,
        sections: sections(&db)?,
        commits: commits(&db)?,
        submissions: submissions(&db)?,
        repaired_types: Vec::new(),
        importer: super::actor_for(path),
    };
    repair_types(&mut source);
    Ok(source)
}

/// The columns a table has; `None` when the table does not exist.
fn columns(db: &Connection, table: &str) -> Result<Option<HashSet<String>>, SourceError> {
    let mut stmt = db.prepare(&format!("PRAGMA table_info(\"{table}\")"))?;
    let names = stmt
        .query_map([], |row| row.get::<_, String>(1))?
        .collect::<Result<HashSet<_>, _>>()?;
    Ok((!names.is_empty()).then_some(names))
}

/// A SELECT list: each column if present, else the default `ensureColumn` would have given it.
fn select(have: &HashSet<String>, wanted: &[(&str, &str)]) -> String {
    wanted
        .iter()
        .map(|(name, default)| {
            if have.contains(*name) {
                format!("\"{name}\"")
            } else {
                (*default).to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads every row of `table` (columns `wanted`, missing ones by default) with `map`.
fn rows<T>(
    db: &Connection,
    table: &'static str,
    required: bool,
    wanted: &[(&str, &str)],
    order: &str,
    map: impl Fn(&Cells<'_>) -> Result<T, SourceError>,
) -> Result<Vec<T>, SourceError> {
    let Some(have) = columns(db, table)? else {
        return if required {
            Err(SourceError::MissingTable(table))
        } else {
            Ok(Vec::new())
        };
    };
    let sql = format!(
        "SELECT {} FROM \"{table}\" ORDER BY {order}",
        select(&have, wanted)
    );
    let mut stmt = db.prepare(&sql)?;
    let mut out = Vec::new();
    let mut found = stmt.query([])?;
    while let Some(row) = found.next()? {
        out.push(map(&Cells::new(table, row)?)?);
    }
    Ok(out)
}

/// One row's values, converted as the spec's column types say.
struct Cells<'a> {
    table: &'static str,
    values: Vec<Sql>,
    _row: std::marker::PhantomData<&'a ()>,
}

impl<'a> Cells<'a> {
    fn new(table: &'static str, row: &Row<'a>) -> Result<Self, SourceError> {
        let n = row.as_ref().column_count();
        let values = (0..n)
            .map(|i| row.get::<_, Sql>(i))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Cells {
            table,
            values,
            _row: std::marker::PhantomData,
        })
    }

    fn id(&self) -> String {
        self.text(0).ok().flatten().unwrap_or_default()
    }

    fn wrong(&self, column: &'static str, wanted: &'static str, found: &Sql) -> SourceError {
        SourceError::Type {
            table: self.table,
            id: self.id(),
            column,
            wanted,
            found: match found {
                Sql::Null => "NULL",
                Sql::Integer(_) => "an integer",
                Sql::Real(_) => "a real",
                Sql::Text(_) => "a text",
                Sql::Blob(_) => "a blob",
            },
        }
    }

    fn value(&self, i: usize) -> &Sql {
        self.values.get(i).unwrap_or(&Sql::Null)
    }

    /// A TEXT column: numbers read as their text, as SQLite's own text affinity would.
    fn text(&self, i: usize) -> Result<Option<String>, &Sql> {
        match self.value(i) {
            Sql::Null => Ok(None),
            Sql::Text(t) => Ok(Some(t.clone())),
            Sql::Integer(n) => Ok(Some(n.to_string())),
            Sql::Real(r) => Ok(Some(r.to_string())),
            other @ Sql::Blob(_) => Err(other),
        }
    }

    fn opt_text(&self, i: usize, column: &'static str) -> Result<Option<String>, SourceError> {
        self.text(i).map_err(|v| self.wrong(column, "a text", v))
    }

    fn req_text(&self, i: usize, column: &'static str) -> Result<String, SourceError> {
        match self.opt_text(i, column)? {
            Some(t) => Ok(t),
            None => Err(self.wrong(column, "a text", &Sql::Null)),
        }
    }

    /// An INTEGER column: a whole real or a numeric text counts, as SQLite's affinity would.
    fn opt_int(&self, i: usize, column: &'static str) -> Result<Option<i64>, SourceError> {
        match self.value(i) {
            Sql::Null => Ok(None),
            Sql::Integer(n) => Ok(Some(*n)),
            Sql::Real(r) if r.fract() == 0.0 && r.abs() < 9.0e15 => Ok(Some(*r as i64)),
            Sql::Text(t) if t.trim().parse::<i64>().is_ok() => Ok(t.trim().parse().ok()),
            other => Err(self.wrong(column, "an integer", other)),
        }
    }

    fn req_int(&self, i: usize, column: &'static str) -> Result<i64, SourceError> {
        match self.opt_int(i, column)? {
            Some(n) => Ok(n),
            None => Err(self.wrong(column, "an integer", &Sql::Null)),
        }
    }

    /// A REAL column.
    fn opt_real(&self, i: usize, column: &'static str) -> Result<Option<f64>, SourceError> {
        match self.value(i) {
            Sql::Null => Ok(None),
            Sql::Integer(n) => Ok(Some(*n as f64)),
            Sql::Real(r) => Ok(Some(*r)),
            Sql::Text(t) if t.trim().parse::<f64>().is_ok() => Ok(t.trim().parse().ok()),
            other => Err(self.wrong(column, "a real", other)),
        }
    }
}

fn entities(db: &Connection) -> Result<Vec<SourceEntity>, SourceError> {
    let wanted = [
        ("id", "NULL"),
        ("name", "NULL"),
        ("slug", "NULL"),
        ("description", "NULL"),
        ("type_id", "'country'"),
        ("status", "1"),
        ("is_deleted", "0"),
        ("created_at", "NULL"),
        ("updated_at", "NULL"),
    ];
    rows(db, "entities", true, &wanted, "rowid", |c| {
        Ok(SourceEntity {
            id: c.req_text(0, "id")?,
            name: c.req_text(1, "name")?,
            slug: c.opt_text(2, "slug")?,
            description: c.opt_text(3, "description")?,
            // `type_id TEXT NOT NULL DEFAULT 'country'`: a NULL cannot be there after §7.
            type_id: c
                .opt_text(4, "type_id")?
                .unwrap_or_else(|| "country".into()),
            status: c.opt_int(5, "status")?,
            is_deleted: c.opt_int(6, "is_deleted")?.unwrap_or(0),
            created_at: c.opt_text(7, "created_at")?,
            updated_at: c.opt_text(8, "updated_at")?,
        })
    })
}

fn geometries(db: &Connection) -> Result<Vec<SourceGeometry>, SourceError> {
    let wanted = [
        ("id", "NULL"),
        ("type", "NULL"),
        ("is_deleted", "0"),
        ("draw_geometry", "NULL"),
        ("binding", "NULL"),
        ("time_start", "NULL"),
        ("time_end", "NULL"),
        ("bbox_min_lng", "NULL"),
        ("bbox_min_lat", "NULL"),
        ("bbox_max_lng", "NULL"),
        ("bbox_max_lat", "NULL"),
        ("created_at", "NULL"),
        ("updated_at", "NULL"),
    ];
    rows(db, "geometries", true, &wanted, "rowid", |c| {
        Ok(SourceGeometry {
            id: c.req_text(0, "id")?,
            kind: c.opt_text(1, "type")?,
            is_deleted: c.opt_int(2, "is_deleted")?.unwrap_or(0),
            draw_geometry: c.req_text(3, "draw_geometry")?,
            binding: c.opt_text(4, "binding")?,
            time_start: c.opt_int(5, "time_start")?,
            time_end: c.opt_int(6, "time_end")?,
            bbox: [
                c.opt_real(7, "bbox_min_lng")?,
                c.opt_real(8, "bbox_min_lat")?,
                c.opt_real(9, "bbox_max_lng")?,
                c.opt_real(10, "bbox_max_lat")?,
            ],
            created_at: c.opt_text(11, "created_at")?,
            updated_at: c.opt_text(12, "updated_at")?,
        })
    })
}

fn links(db: &Connection) -> Result<Vec<SourceLink>, SourceError> {
    let wanted = [
        ("geometry_id", "NULL"),
        ("entity_id", "NULL"),
        ("created_at", "NULL"),
    ];
    rows(db, "entity_geometries", true, &wanted, "rowid", |c| {
        Ok(SourceLink {
            geometry_id: c.req_text(0, "geometry_id")?,
            entity_id: c.req_text(1, "entity_id")?,
            created_at: c.opt_text(2, "created_at")?,
        })
    })
}

fn sections(db: &Connection) -> Result<Vec<SourceSection>, SourceError> {
    let wanted = [
        ("id", "NULL"),
        ("title", "NULL"),
        ("description", "NULL"),
        ("user_id", "NULL"),
        ("created_by", "NULL"),
        ("created_at", "NULL"),
    ];
    let mut found = rows(db, "sections", false, &wanted, "created_at, id", |c| {
        Ok(SourceSection {
            id: c.req_text(0, "id")?,
            title: c.req_text(1, "title")?,
            description: c.opt_text(2, "description")?,
            user_id: c.opt_text(3, "user_id")?,
            created_by: c.opt_text(4, "created_by")?,
            created_at: c.req_text(5, "created_at")?,
            locked_by: None,
            locked_at: None,
            lock_expires_at: None,
        })
    })?;
    let locks = rows(
        db,
        "section_states",
        false,
        &[
            ("section_id", "NULL"),
            ("locked_by", "NULL"),
            ("locked_at", "NULL"),
            ("lock_expires_at", "NULL"),
        ],
        "section_id",
        |c| {
            Ok((
                c.req_text(0, "section_id")?,
                [
                    c.opt_text(1, "locked_by")?,
                    c.opt_text(2, "locked_at")?,
                    c.opt_text(3, "lock_expires_at")?,
                ],
            ))
        },
    )?;
    let locks: HashMap<_, _> = locks.into_iter().collect();
    for section in &mut found {
        if let Some([by, at, expires]) = locks.get(&section.id) {
            section.locked_by = by.clone();
            section.locked_at = at.clone();
            section.lock_expires_at = expires.clone();
        }
    }
    Ok(found)
}

fn commits(db: &Connection) -> Result<Vec<CommitRow>, SourceError> {
    let wanted = [
        ("id", "NULL"),
        ("section_id", "NULL"),
        ("parent_commit_id", "NULL"),
        ("commit_no", "NULL"),
        ("kind", "'manual'"),
        ("restored_from_commit_id", "NULL"),
        ("created_by", "NULL"),
        ("created_at", "NULL"),
        ("title", "NULL"),
        ("note", "NULL"),
        ("snapshot_json", "NULL"),
        ("snapshot_hash", "NULL"),
    ];
    rows(
        db,
        "section_commits",
        false,
        &wanted,
        "section_id, commit_no",
        |c| {
            Ok(CommitRow {
                id: c.req_text(0, "id")?,
                section_id: c.req_text(1, "section_id")?,
                parent_commit_id: c.opt_text(2, "parent_commit_id")?,
                commit_no: c.req_int(3, "commit_no")?,
                kind: c.opt_text(4, "kind")?.unwrap_or_else(|| "manual".into()),
                restored_from_commit_id: c.opt_text(5, "restored_from_commit_id")?,
                created_by: c.req_text(6, "created_by")?,
                created_at: c.req_text(7, "created_at")?,
                title: c.opt_text(8, "title")?,
                note: c.opt_text(9, "note")?,
                snapshot_json: c.req_text(10, "snapshot_json")?,
                snapshot_hash: c.opt_text(11, "snapshot_hash")?,
            })
        },
    )
}

fn submissions(db: &Connection) -> Result<Vec<SubmissionRow>, SourceError> {
    let wanted = [
        ("id", "NULL"),
        ("section_id", "NULL"),
        ("commit_id", "NULL"),
        ("submitted_by", "NULL"),
        ("submitted_at", "NULL"),
        ("status", "'pending'"),
        ("reviewed_by", "NULL"),
        ("reviewed_at", "NULL"),
        ("review_note", "NULL"),
        ("snapshot_json", "NULL"),
        ("snapshot_hash", "NULL"),
    ];
    rows(
        db,
        "section_submissions",
        false,
        &wanted,
        "section_id, submitted_at, rowid",
        |c| {
            Ok(SubmissionRow {
                id: c.req_text(0, "id")?,
                section_id: c.req_text(1, "section_id")?,
                commit_id: c.req_text(2, "commit_id")?,
                submitted_by: c.req_text(3, "submitted_by")?,
                submitted_at: c.req_text(4, "submitted_at")?,
                status: c.opt_text(5, "status")?.unwrap_or_else(|| "pending".into()),
                reviewed_by: c.opt_text(6, "reviewed_by")?,
                reviewed_at: c.opt_text(7, "reviewed_at")?,
                review_note: c.opt_text(8, "review_note")?,
                snapshot_json: c.req_text(9, "snapshot_json")?,
                snapshot_hash: c.opt_text(10, "snapshot_hash")?,
            })
        },
    )
}

/// §7's last step: an empty or `line`/`path` geometry type becomes the `type_id` of the first
/// active entity linked to the geometry (links in stored order).
fn repair_types(source: &mut Source) {
    let active: HashMap<&str, &str> = source
        .entities
        .iter()
        .filter(|e| e.is_deleted == 0)
        .map(|e| (e.id.as_str(), e.type_id.as_str()))
        .collect();
    let mut first_type: HashMap<&str, &str> = HashMap::new();
    for link in &source.links {
        if let Some(type_id) = active.get(link.entity_id.as_str()) {
            first_type
                .entry(link.geometry_id.as_str())
                .or_insert(type_id);
        }
    }
    let mut repaired = Vec::new();
    for geometry in &mut source.geometries {
        let legacy = match geometry.kind.as_deref() {
            None => true,
            Some(t) => t.trim().is_empty() || t == "line" || t == "path",
        };
        if let (true, Some(type_id)) = (legacy, first_type.get(geometry.id.as_str())) {
            geometry.kind = Some((*type_id).to_owned());
            repaired.push(geometry.id.clone());
        }
    }
    source.repaired_types = repaired;
}
