//! Read-model queries and the JSON shapes the routes answer with. Rows carry the spec's column
//! names; write routes build the same shapes from the decided state ([`rows`]), so a write's
//! answer and the next read agree.

pub mod entities;
pub mod error;
pub mod geometries;
pub mod history;
pub mod publication;
pub mod rows;
pub mod sections;
pub mod users;

pub use error::ReadError;

/// The schema the live read model lives in.
pub const SCHEMA: &str = crate::projection::NAME;

/// Escapes `%`, `_` and `\` so a user's text matches literally inside a `LIKE` pattern.
pub fn like_pattern(text: &str) -> String {
    let mut out = String::from("%");
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}
