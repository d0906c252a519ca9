//! A snapshot as the approval applies it: the typed, validated reading of the JSON an editor
//! commits. The JSON itself is stored whole (unknown fields such as `editor_feature_collection`
//! included); this module is the part of it that publishing reads.

use palimpsest_events::atlas::Bbox;
use serde_json::Value;

/// What a snapshot item asks the approval to do with a published row.
#[derive(Debug, Clone, PartialEq)]
pub enum Action<F> {
    /// `create`: insert a new row.
    Create(F),
    /// `update` or `replace`: overwrite an existing row's fields.
    Update(F),
    /// `delete`: soft-delete the row (and what hangs on it).
    Delete,
    /// `reference`: the snapshot mentions the row but changes nothing.
    Reference,
}

/// The `base_*` values an editor sends back: what the published row looked like when the
/// editor read it. The approval compares them with the published row before writing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Base {
    /// `base_updated_at`: the row's `updated_at` as read.
    pub updated_at: Option<String>,
    /// `base_hash`: the row's hash as read (see [`crate::hashing`]).
    pub hash: Option<String>,
}

impl Base {
    /// Whether the editor sent any base value.
    pub fn is_empty(&self) -> bool {
        self.updated_at.is_none() && self.hash.is_none()
    }
}

/// The fields an entity `create`/`update` writes.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityFields {
    /// `name` (required, not blank).
    pub name: String,
    /// `slug` (blank counts as none).
    pub slug: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `type_id` (`country` when absent or blank).
    pub type_id: String,
    /// `status`: 1 when absent (the column's default), `None` when sent as null.
    pub status: Option<i64>,
    /// `is_deleted` as the snapshot sends it (0 when absent): the original writes the snapshot's
    /// flag on create and update.
    pub is_deleted: i64,
}

/// One item of the snapshot's `entities`.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityChange {
    /// Its place in the array, for messages.
    pub index: usize,
    /// The entity's id.
    pub id: String,
    /// What to do.
    pub action: Action<EntityFields>,
    /// The editor's base values.
    pub base: Base,
}

/// The fields a geometry `create`/`update` writes.
#[derive(Debug, Clone, PartialEq)]
pub struct GeometryFields {
    /// `type`.
    pub kind: Option<String>,
    /// `draw_geometry`, or `geometry` when `draw_geometry` is absent: a GeoJSON geometry object.
    pub draw_geometry: Value,
    /// `binding`, normalised (see [`crate::published::binding`]); `None` when absent.
    pub binding: Option<Vec<String>>,
    /// `time_start`.
    pub time_start: Option<i64>,
    /// `time_end`.
    pub time_end: Option<i64>,
    /// `bbox`, or the box computed from `draw_geometry` when absent.
    pub bbox: Option<Bbox>,
    /// `is_deleted` as the snapshot sends it (0 when absent).
    pub is_deleted: i64,
}

/// One item of the snapshot's `geometries`.
#[derive(Debug, Clone, PartialEq)]
pub struct GeometryChange {
    /// Its place in the array, for messages.
    pub index: usize,
    /// The geometry's id.
    pub id: String,
    /// What to do.
    pub action: Action<GeometryFields>,
    /// The editor's base values.
    pub base: Base,
}

/// One item of the snapshot's `link_scopes`: the complete list of a geometry's entities.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkScope {
    /// Its place in the array, for messages.
    pub index: usize,
    /// `false` for `operation: "reference"` (nothing written), `true` otherwise (replace).
    pub replace: bool,
    /// The geometry whose links are replaced.
    pub geometry_id: String,
    /// The entities it is linked to afterwards (duplicates removed, order kept).
    pub entity_ids: Vec<String>,
    /// `base_links_hash`: the hash of the geometry's links as the editor read them.
    pub base_links_hash: Option<String>,
}

/// The publishable content of a validated snapshot, in the order the approval applies it:
/// entities, then geometries, then link scopes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// `entities`.
    pub entities: Vec<EntityChange>,
    /// `geometries`.
    pub geometries: Vec<GeometryChange>,
    /// `link_scopes`.
    pub link_scopes: Vec<LinkScope>,
}

impl Snapshot {
    /// Ids of entities the approval must know the published state of: every entity item and
    /// every entity a link scope names.
    pub fn entity_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.entities.iter().map(|e| e.id.clone()).collect();
        for scope in self.link_scopes.iter().filter(|s| s.replace) {
            ids.extend(scope.entity_ids.iter().cloned());
        }
        ids.sort();
        ids.dedup();
        ids
    }

    /// Ids of geometries the snapshot itself names (items and link scopes).
    pub fn geometry_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.geometries.iter().map(|g| g.id.clone()).collect();
        ids.extend(
            self.link_scopes
                .iter()
                .filter(|s| s.replace)
                .map(|s| s.geometry_id.clone()),
        );
        ids.sort();
        ids.dedup();
        ids
    }

    /// Entities the snapshot deletes: the geometries linked to them lose those links.
    pub fn deleted_entity_ids(&self) -> Vec<String> {
        self.entities
            .iter()
            .filter(|e| e.action == Action::Delete)
            .map(|e| e.id.clone())
            .collect()
    }

    /// Geometries the snapshot deletes: other geometries' bindings lose their ids.
    pub fn deleted_geometry_ids(&self) -> Vec<String> {
        self.geometries
            .iter()
            .filter(|g| g.action == Action::Delete)
            .map(|g| g.id.clone())
            .collect()
    }

    /// Slugs the snapshot writes: each must end up unique among all entities.
    pub fn written_slugs(&self) -> Vec<String> {
        let mut slugs: Vec<String> = self
            .entities
            .iter()
            .filter_map(|e| match &e.action {
                Action::Create(f) | Action::Update(f) => f.slug.clone(),
                _ => None,
            })
            .collect();
        slugs.sort();
        slugs.dedup();
        slugs
    }
}
