//! The published map as the write side sees it: each entity and geometry folded from its own
//! stream, the plan that applies an approved snapshot to them, and a geometry's binding in
//! its normal form.

pub mod binding;
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
