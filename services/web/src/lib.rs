//! What every HTTP context of Palimpsest shares: the application state handed to each context's
//! router, errors as JSON responses, the admin bearer token, health and metrics endpoints, the
//! `/v1/events` API over the log, and read-your-writes.

pub mod admin;
pub mod background;
pub mod command;
pub mod consistency;
pub mod console;
pub mod content;
pub mod credentials;
pub mod error;
pub mod health;
pub mod limits;
pub mod log_routes;
pub mod login_throttle;
mod operations;
pub mod platform_error;
pub mod read_databases;
pub mod read_pool;
pub mod schemas;
pub mod seal;
pub mod secret;
pub mod state;
pub mod v1_openapi;

pub use error::ApiError;
pub use platform_error::{PlatformError, PlatformKind};
pub use state::{AppState, PlatformSettings};
