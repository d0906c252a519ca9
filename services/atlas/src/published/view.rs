//! What an approval knows of the published map when it decides.

use crate::published::{EntityState, GeometryState};
use std::collections::BTreeMap;

/// The published rows an approval reads, each folded from its stream at a known version.
///
/// The loader must include: every entity and geometry the snapshot names (items and link
/// scopes); every geometry linked to an entity the snapshot deletes; every geometry whose
/// binding holds a geometry the snapshot deletes; and, in `slug_owners`, the current owner of
/// every slug the snapshot writes. Rows not loaded are taken as absent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PublishedView {
    /// Entities by id (absent ones as the empty state).
    pub entities: BTreeMap<String, EntityState>,
    /// Geometries by id (absent ones as the empty state).
    pub geometries: BTreeMap<String, GeometryState>,
    /// For each slug the snapshot writes, the entity that holds it now (deleted ones included:
    /// `slug` is unique over the whole table).
    pub slug_owners: BTreeMap<String, String>,
}
