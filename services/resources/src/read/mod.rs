//! Read queries over the read model (schema `resources`): what the GET routes answer. Each is
//! one indexed lookup or one scan of one parent's rows; none replays history.

use chrono::{DateTime, NaiveDateTime, Utc};
use palimpsest_events::resources::{ContentRef, Parent, ResourceType, Revision};
use palimpsest_web::read_pool::ReadPool;
use tokio_postgres::Row;

/// A revision as the read model has it, with what the API shows beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionRow {
    /// The revision's columns.
    pub revision: Revision,
    /// Hidden (admin only).
    pub hidden: bool,
    /// The resource's head revision number.
    pub head_rev: i64,
    /// When the resource's first revision was made.
    pub created: DateTime<Utc>,
    /// Who made the first revision.
    pub created_by: i64,
    /// The resource is deleted now (its head is a delete).
    pub resource_deleted: bool,
}

/// Where a content's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentBody {
    /// In the row.
    Inline(Vec<u8>),
    /// In the store, at this location.
    Location(String),
}

/// Why a read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// No connection.
    #[error(transparent)]
    Pool(#[from] deadpool_postgres::PoolError),
    /// A query failed.
    #[error(transparent)]
    Db(#[from] tokio_postgres::Error),
}

const REV_COLUMNS: &str = "v.resrev_id, v.resrev_res_id, v.resrev_rev, r.res_type, v.resrev_change_mask, \
    v.resrev_name, v.resrev_parent_id, v.resrev_parent_page_id, v.resrev_parent_user_id, \
    v.resrev_language, v.resrev_meta, v.resrev_mimetype, v.resrev_content_id, v.resrev_size, \
    v.resrev_change_description, v.resrev_user_id, v.resrev_timestamp, v.resrev_changeset_id, \
    v.resrev_deleted, v.resrev_is_hidden, r.res_headrev, r.res_create_timestamp, r.res_create_user_id, r.res_deleted";

const HEAD_COLUMNS: &str = "r.res_id, r.res_id, r.resrev_rev, r.res_type, r.resrev_change_mask, \
    r.resrev_name, r.resrev_parent_id, r.resrev_parent_page_id, r.resrev_parent_user_id, \
    r.resrev_language, r.resrev_meta, r.resrev_mimetype, r.resrev_content_id, r.resrev_size, \
    r.resrev_change_description, r.resrev_user_id, r.resrev_timestamp, r.resrev_changeset_id, \
    r.resrev_deleted, 0::smallint, r.res_headrev, r.res_create_timestamp, r.res_create_user_id, r.res_deleted";

fn parent_of(row: &Row) -> Parent {
    let page: Option<i64> = row.get(7);
    let user: Option<i64> = row.get(8);
    let resource: i64 = row.get(6);
    match (page, user) {
        (Some(page), _) => Parent::Page(page),
        (None, Some(user)) => Parent::User(user),
        (None, None) if resource > 0 => Parent::File(resource),
        (None, None) => Parent::Site,
    }
}

fn utc(at: NaiveDateTime) -> DateTime<Utc> {
    at.and_utc()
}

fn to_row(row: &Row) -> RevisionRow {
    let res_type: i16 = row.get(3);
    let mask: i16 = row.get(4);
    RevisionRow {
        revision: Revision {
            resrev_id: row.get(0),
            res_id: row.get(1),
            rev: i64::from(row.get::<_, i32>(2)),
            res_type: if res_type == ResourceType::Property.code() {
                ResourceType::Property
            } else {
                ResourceType::File
            },
            change_mask: mask as u8,
            name: row.get(5),
            parent: parent_of(row),
            language: row.get(9),
            meta: row.get(10),
            mimetype: row.get(11),
            content: ContentRef {
                rescontent_id: row.get(12),
                sha256: String::new(),
                size: row.get(13),
            },
            change_description: row.get(14),
            user_id: row.get(15),
            timestamp: utc(row.get(16)),
            changeset_id: row.get(17),
            deleted: row.get::<_, i16>(18) != 0,
        },
        hidden: row.get::<_, i16>(19) != 0,
        head_rev: i64::from(row.get::<_, i32>(20)),
        created: utc(row.get(21)),
        created_by: row.get(22),
        resource_deleted: row.get::<_, i16>(23) != 0,
    }
}

/// The read model's queries.
#[derive(Clone)]
pub struct Reader {
    pool: ReadPool,
}

impl Reader {
    /// Queries on `pool`.
    pub fn new(pool: ReadPool) -> Self {
        Reader { pool }
    }

    async fn rows(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<RevisionRow>, ReadError> {
        let client = self.pool.get().await?;
        let rows = client.query(sql, params).await?;
        Ok(rows.iter().map(to_row).collect())
    }

    /// The head of resource `res_id` (deleted or not).
    pub async fn head(&self, res_id: i64) -> Result<Option<RevisionRow>, ReadError> {
        let sql = format!("SELECT {HEAD_COLUMNS} FROM resources.resources r WHERE r.res_id = $1");
        Ok(self.rows(&sql, &[&res_id]).await?.into_iter().next())
    }

    /// Revision `rev` of resource `res_id`.
    pub async fn revision(&self, res_id: i64, rev: i64) -> Result<Option<RevisionRow>, ReadError> {
        let sql = format!(
            "SELECT {REV_COLUMNS} FROM resources.resourcerevs v JOIN resources.resources r \
             ON r.res_id = v.resrev_res_id WHERE v.resrev_res_id = $1 AND v.resrev_rev = $2"
        );
        let rev = rev as i32;
        Ok(self.rows(&sql, &[&res_id, &rev]).await?.into_iter().next())
    }

    /// Every revision of `res_id` whose change mask has a bit of `filter` (all when 0), oldest first.
    pub async fn revisions(&self, res_id: i64, filter: u8) -> Result<Vec<RevisionRow>, ReadError> {
        let sql = format!(
            "SELECT {REV_COLUMNS} FROM resources.resourcerevs v JOIN resources.resources r \
             ON r.res_id = v.resrev_res_id WHERE v.resrev_res_id = $1 \
             AND ($2::integer = 0 OR (v.resrev_change_mask::integer & $2::integer) <> 0) ORDER BY v.resrev_rev"
        );
        self.rows(&sql, &[&res_id, &i32::from(filter)]).await
    }

    /// The live resources of a type under a parent, by name.
    pub async fn children(
        &self,
        res_type: ResourceType,
        parent: Parent,
    ) -> Result<Vec<RevisionRow>, ReadError> {
        self.live_under(res_type, parent, None).await
    }

    /// The live resource of a type named `name` under a parent.
    pub async fn child(
        &self,
        res_type: ResourceType,
        parent: Parent,
        name: &str,
    ) -> Result<Option<RevisionRow>, ReadError> {
        Ok(self
            .live_under(res_type, parent, Some(name))
            .await?
            .into_iter()
            .next())
    }

    async fn live_under(
        &self,
        res_type: ResourceType,
        parent: Parent,
        name: Option<&str>,
    ) -> Result<Vec<RevisionRow>, ReadError> {
        let (clause, id) = match parent {
            Parent::Page(id) => ("r.resrev_parent_page_id = $2", id),
            Parent::User(id) => ("r.resrev_parent_user_id = $2", id),
            Parent::File(id) => ("r.resrev_parent_id = $2", id),
            Parent::Site => (
                "r.resrev_parent_page_id IS NULL AND r.resrev_parent_user_id IS NULL AND r.resrev_parent_id = $2",
                0,
            ),
        };
        let sql = format!(
            "SELECT {HEAD_COLUMNS} FROM resources.resources r WHERE r.res_type = $1 AND {clause} \
             AND r.res_deleted = 0 AND ($3::text IS NULL OR lower(r.resrev_name) = lower($3)) \
             ORDER BY r.resrev_name, r.res_id"
        );
        self.rows(&sql, &[&res_type.code(), &id, &name]).await
    }

    /// Deleted files: the archive.
    pub async fn archive(&self) -> Result<Vec<RevisionRow>, ReadError> {
        let sql = format!(
            "SELECT {HEAD_COLUMNS} FROM resources.resources r WHERE r.res_deleted = 1 \
             AND r.res_type = $1 ORDER BY r.res_id"
        );
        self.rows(&sql, &[&ResourceType::File.code()]).await
    }

    /// Where content `rescontent_id` is.
    pub async fn content(&self, rescontent_id: i64) -> Result<Option<ContentBody>, ReadError> {
        let client = self.pool.get().await?;
        let row = client
            .query_opt(
                "SELECT rescontent_value, rescontent_location FROM resources.resourcecontents \
                 WHERE rescontent_id = $1",
                &[&rescontent_id],
            )
            .await?;
        Ok(row.map(|row| match row.get::<_, Option<String>>(1) {
            Some(location) => ContentBody::Location(location),
            None => ContentBody::Inline(row.get::<_, Option<Vec<u8>>>(0).unwrap_or_default()),
        }))
    }
}
