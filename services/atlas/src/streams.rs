//! The names of the atlas context's streams.

use palimpsest_events::{StreamName, StreamNameError};

/// The context's name: the `context` of its streams and its Postgres schema.
pub const CONTEXT: &str = "atlas";

/// `atlas/section/<id>`.
pub fn section(id: &str) -> Result<StreamName, StreamNameError> {
    StreamName::new(CONTEXT, "section", id)
}

/// `atlas/entity/<id>`.
pub fn entity(id: &str) -> Result<StreamName, StreamNameError> {
    StreamName::new(CONTEXT, "entity", id)
}

/// `atlas/geometry/<id>`.
pub fn geometry(id: &str) -> Result<StreamName, StreamNameError> {
    StreamName::new(CONTEXT, "geometry", id)
}

/// `atlas/publication/map`: one event per approval that published.
pub fn publication() -> Result<StreamName, StreamNameError> {
    StreamName::new(CONTEXT, "publication", "map")
}

/// `atlas/user/<user id>`: a user's token hash and roles.
pub fn user(id: &str) -> Result<StreamName, StreamNameError> {
    StreamName::new(CONTEXT, "user", id)
}
