//! Applying an approved snapshot to the published map, as events.
//!
//! The order and rules are the original's: entities first, then geometries, then link scopes,
//! each in snapshot order, each step seeing the steps before it.
//!
//! - `reference` writes nothing; `create` needs the row absent; `update`/`replace` and `delete`
//!   need it present and not deleted.
//! - `base_updated_at` and `base_hash` (and a link scope's `base_links_hash`) are compared with
//!   the row as published *before* this approval: they say what the editor saw, and a change
//!   the same snapshot makes earlier must not count against it.
//! - deleting an entity removes its links (a `GeometryLinksReplaced` on each linked geometry);
//!   deleting a geometry removes its links and strips its id from every other live geometry's
//!   `binding` (a `GeometryUpdated` on each).
//! - a link scope replaces all links of its geometry, after checking that the geometry and
//!   every entity exist and are not deleted.
//! - every slug written must end up held by one entity only, deleted entities included.
//!
//! Any failure is a [`Conflict`]: the approval publishes nothing and marks the submission
//! `conflicted` with the message.

use crate::hashing::{entity_hash, geometry_hash, links_hash};
use crate::published::binding::strip_binding;
use crate::published::{EntityState, GeometryState, PublishedView};
use crate::snapshot::{Action, Base, EntityFields, GeometryFields, Snapshot};
use palimpsest_events::atlas::{
    EntityEvent, EntityRow, GeometryEvent, GeometryRow, PublicationSource, Timestamp,
};
use std::collections::BTreeMap;

/// Why a snapshot cannot be applied to the published map; stored as the submission's
/// `review_note`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Conflict: {0}")]
pub struct Conflict(pub String);

/// The events an approval appends to the published streams.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Publication {
    /// Per entity id, its new events in order.
    pub entities: BTreeMap<String, Vec<EntityEvent>>,
    /// Per geometry id, its new events in order.
    pub geometries: BTreeMap<String, Vec<GeometryEvent>>,
}

struct Work<'a> {
    view: &'a PublishedView,
    source: &'a PublicationSource,
    now: Timestamp,
    entities: BTreeMap<String, EntityState>,
    geometries: BTreeMap<String, GeometryState>,
    out: Publication,
}

/// Plans the events that apply `snapshot` to the published rows of `view`.
pub fn plan_publication(
    snapshot: &Snapshot,
    view: &PublishedView,
    source: &PublicationSource,
    now: Timestamp,
) -> Result<Publication, Conflict> {
    let mut work = Work {
        view,
        source,
        now,
        entities: view.entities.clone(),
        geometries: view.geometries.clone(),
        out: Publication::default(),
    };
    for change in &snapshot.entities {
        work.entity(&change.id, &change.action, &change.base)?;
    }
    work.check_slugs(snapshot)?;
    for change in &snapshot.geometries {
        work.geometry(&change.id, &change.action, &change.base)?;
    }
    for scope in snapshot.link_scopes.iter().filter(|s| s.replace) {
        work.link_scope(
            &scope.geometry_id,
            &scope.entity_ids,
            &scope.base_links_hash,
        )?;
    }
    Ok(work.out)
}

fn conflict<T>(message: String) -> Result<T, Conflict> {
    Err(Conflict(message))
}

fn check_base(
    kind: &str,
    id: &str,
    base: &Base,
    published: Option<(Timestamp, String)>,
) -> Result<(), Conflict> {
    if base.is_empty() {
        return Ok(());
    }
    let Some((updated_at, hash)) = published else {
        return conflict(format!("{kind} {id} has a base but no published row"));
    };
    if let Some(b) = &base.updated_at
        && Timestamp::parse(b) != Some(updated_at)
    {
        return conflict(format!(
            "{kind} {id} changed since base_updated_at {b} (published updated_at {updated_at})"
        ));
    }
    if let Some(b) = &base.hash
        && *b != hash
    {
        return conflict(format!(
            "{kind} {id} changed since base_hash {b} (published hash {hash})"
        ));
    }
    Ok(())
}

impl Work<'_> {
    fn entity_row(&self, id: &str) -> Option<&EntityRow> {
        self.entities.get(id).and_then(|s| s.row.as_ref())
    }

    fn geometry_state(&self, id: &str) -> GeometryState {
        self.geometries.get(id).cloned().unwrap_or_default()
    }

    fn push_entity(&mut self, id: &str, event: EntityEvent) {
        let state = self.entities.remove(id).unwrap_or_default();
        self.entities.insert(
            id.to_owned(),
            crate::published::entity::evolve(state, &event),
        );
        self.out
            .entities
            .entry(id.to_owned())
            .or_default()
            .push(event);
    }

    fn push_geometry(&mut self, id: &str, event: GeometryEvent) {
        let state = self.geometries.remove(id).unwrap_or_default();
        self.geometries.insert(
            id.to_owned(),
            crate::published::geometry::evolve(state, &event),
        );
        self.out
            .geometries
            .entry(id.to_owned())
            .or_default()
            .push(event);
    }

    fn entity_base(&self, id: &str, base: &Base) -> Result<(), Conflict> {
        let published = self
            .view
            .entities
            .get(id)
            .and_then(|s| s.row.as_ref())
            .map(|r| (r.updated_at, entity_hash(r)));
        check_base("entity", id, base, published)
    }

    fn geometry_base(&self, id: &str, base: &Base) -> Result<(), Conflict> {
        let published = self
            .view
            .geometries
            .get(id)
            .and_then(|s| s.row.as_ref())
            .map(|r| (r.updated_at, geometry_hash(r)));
        check_base("geometry", id, base, published)
    }

    fn live_entity(&self, id: &str) -> Result<&EntityRow, Conflict> {
        match self.entity_row(id) {
            None => conflict(format!("entity {id} does not exist")),
            Some(r) if r.is_deleted != 0 => conflict(format!("entity {id} is deleted")),
            Some(r) => Ok(r),
        }
    }

    fn live_geometry(&self, id: &str) -> Result<GeometryRow, Conflict> {
        match self.geometry_state(id).row {
            None => conflict(format!("geometry {id} does not exist")),
            Some(r) if r.is_deleted != 0 => conflict(format!("geometry {id} is deleted")),
            Some(r) => Ok(r),
        }
    }

    fn entity_row_from(&self, id: &str, f: &EntityFields, created_at: Timestamp) -> EntityRow {
        EntityRow {
            id: id.to_owned(),
            name: f.name.clone(),
            slug: f.slug.clone(),
            description: f.description.clone(),
            type_id: f.type_id.clone(),
            status: f.status,
            is_deleted: f.is_deleted,
            created_at,
            updated_at: self.now,
        }
    }

    fn entity(
        &mut self,
        id: &str,
        action: &Action<EntityFields>,
        base: &Base,
    ) -> Result<(), Conflict> {
        let source = self.source.clone();
        match action {
            Action::Reference => Ok(()),
            Action::Create(f) => {
                if self.entity_row(id).is_some() {
                    return conflict(format!("entity {id} already exists"));
                }
                let entity = self.entity_row_from(id, f, self.now);
                self.push_entity(id, EntityEvent::EntityCreated { entity, source });
                Ok(())
            }
            Action::Update(f) => {
                let created_at = self.live_entity(id)?.created_at;
                self.entity_base(id, base)?;
                let entity = self.entity_row_from(id, f, created_at);
                self.push_entity(id, EntityEvent::EntityUpdated { entity, source });
                Ok(())
            }
            Action::Delete => {
                self.live_entity(id)?;
                self.entity_base(id, base)?;
                self.push_entity(
                    id,
                    EntityEvent::EntityDeleted {
                        entity_id: id.to_owned(),
                        at: self.now,
                        source: source.clone(),
                    },
                );
                let linked: Vec<(String, Vec<String>)> = self
                    .geometries
                    .iter()
                    .filter(|(_, g)| g.links.iter().any(|e| e == id))
                    .map(|(gid, g)| {
                        (
                            gid.clone(),
                            g.links.iter().filter(|e| *e != id).cloned().collect(),
                        )
                    })
                    .collect();
                for (gid, entity_ids) in linked {
                    let event = GeometryEvent::GeometryLinksReplaced {
                        geometry_id: gid.clone(),
                        entity_ids,
                        at: self.now,
                        unlinked_entity: Some(id.to_owned()),
                        source: source.clone(),
                    };
                    self.push_geometry(&gid, event);
                }
                Ok(())
            }
        }
    }

    fn check_slugs(&self, snapshot: &Snapshot) -> Result<(), Conflict> {
        for slug in snapshot.written_slugs() {
            let holders: Vec<&String> = self
                .entities
                .iter()
                .filter(|(_, e)| e.row.as_ref().and_then(|r| r.slug.as_ref()) == Some(&slug))
                .map(|(id, _)| id)
                .collect();
            if holders.len() > 1 {
                return conflict(format!(
                    "slug {slug} would be held by entities {}",
                    holders
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            if let Some(owner) = self.view.slug_owners.get(&slug)
                && !self.entities.contains_key(owner)
            {
                return conflict(format!("slug {slug} is already used by entity {owner}"));
            }
        }
        Ok(())
    }

    fn geometry_row_from(
        &self,
        id: &str,
        f: &GeometryFields,
        created_at: Timestamp,
    ) -> GeometryRow {
        GeometryRow {
            id: id.to_owned(),
            kind: f.kind.clone(),
            is_deleted: f.is_deleted,
            draw_geometry: f.draw_geometry.clone(),
            binding: f.binding.clone(),
            time_start: f.time_start,
            time_end: f.time_end,
            bbox: f.bbox,
            created_at,
            updated_at: self.now,
        }
    }

    fn geometry(
        &mut self,
        id: &str,
        action: &Action<GeometryFields>,
        base: &Base,
    ) -> Result<(), Conflict> {
        let source = self.source.clone();
        match action {
            Action::Reference => Ok(()),
            Action::Create(f) => {
                if self.geometry_state(id).row.is_some() {
                    return conflict(format!("geometry {id} already exists"));
                }
                let geometry = self.geometry_row_from(id, f, self.now);
                self.push_geometry(id, GeometryEvent::GeometryCreated { geometry, source });
                Ok(())
            }
            Action::Update(f) => {
                let created_at = self.live_geometry(id)?.created_at;
                self.geometry_base(id, base)?;
                let geometry = self.geometry_row_from(id, f, created_at);
                let event = GeometryEvent::GeometryUpdated {
                    geometry,
                    stripped_binding: None,
                    source,
                };
                self.push_geometry(id, event);
                Ok(())
            }
            Action::Delete => {
                self.live_geometry(id)?;
                self.geometry_base(id, base)?;
                let event = GeometryEvent::GeometryDeleted {
                    geometry_id: id.to_owned(),
                    at: self.now,
                    source: source.clone(),
                };
                self.push_geometry(id, event);
                let bound: Vec<GeometryRow> = self
                    .geometries
                    .values()
                    .filter_map(|g| g.row.as_ref())
                    .filter(|r| r.is_deleted == 0 && r.id != id)
                    .filter_map(|r| {
                        let stripped = strip_binding(r.binding.as_deref().unwrap_or(&[]), id)?;
                        Some(GeometryRow {
                            binding: Some(stripped),
                            updated_at: self.now,
                            ..r.clone()
                        })
                    })
                    .collect();
                for geometry in bound {
                    let gid = geometry.id.clone();
                    let event = GeometryEvent::GeometryUpdated {
                        geometry,
                        stripped_binding: Some(id.to_owned()),
                        source: source.clone(),
                    };
                    self.push_geometry(&gid, event);
                }
                Ok(())
            }
        }
    }

    fn link_scope(
        &mut self,
        geometry_id: &str,
        entity_ids: &[String],
        base_links_hash: &Option<String>,
    ) -> Result<(), Conflict> {
        if let Some(b) = base_links_hash {
            let published = self
                .view
                .geometries
                .get(geometry_id)
                .map(|g| links_hash(&g.links))
                .unwrap_or_else(|| links_hash(&[]));
            if *b != published {
                return conflict(format!(
                    "links of geometry {geometry_id} changed since base_links_hash {b} (published {published})"
                ));
            }
        }
        self.live_geometry(geometry_id)?;
        for entity_id in entity_ids {
            self.live_entity(entity_id)?;
        }
        let event = GeometryEvent::GeometryLinksReplaced {
            geometry_id: geometry_id.to_owned(),
            entity_ids: entity_ids.to_vec(),
            at: self.now,
            unlinked_entity: None,
            source: self.source.clone(),
        };
        self.push_geometry(geometry_id, event);
        Ok(())
    }
}
