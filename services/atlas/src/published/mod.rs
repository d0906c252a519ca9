//! The published map as the write side sees it: each entity and geometry folded from its own
//! stream, and the plan that applies an approved snapshot to them.

pub mod entity;
pub mod geometry;
pub mod plan;
pub mod view;

#[cfg(test)]
mod tests;

pub use entity::EntityState;
pub use geometry::GeometryState;
pub use plan::{Conflict, Publication, plan_publication};
pub use view::PublishedView;
