//! The names of the resources context's streams.

use palimpsest_events::resources::{Parent, ResourceType};
use palimpsest_events::{StreamName, StreamNameError};

/// The context's name: the `context` of its streams, its URL prefix and its Postgres schema.
pub const CONTEXT: &str = "resources";

/// `resources/resource/<res_id>`.
pub fn resource(res_id: i64) -> Result<StreamName, StreamNameError> {
    StreamName::new(CONTEXT, "resource", res_id.to_string())
}

/// `resources/content/<sha256>`.
pub fn content(sha256: &str) -> Result<StreamName, StreamNameError> {
    StreamName::new(CONTEXT, "content", sha256)
}

/// `resources/name/<type>@<parent>/<name>`.
pub fn name(
    res_type: ResourceType,
    parent: Parent,
    name: &str,
) -> Result<StreamName, StreamNameError> {
    StreamName::new(CONTEXT, "name", crate::name::key(res_type, parent, name))
}

/// `resources/ids/counters`.
pub fn ids() -> Result<StreamName, StreamNameError> {
    StreamName::new(CONTEXT, "ids", "counters")
}
