//! What one request must see: the log position its reads must reflect.
//!
//! A read model may be read from a streaming replica (`--read-replica-url`), which replays the
//! read database some time after it commits. A client that wrote must still read its write: a
//! write's answer says where its events are (header [`POSITION_HEADER`]), the client names that
//! position on its next requests (the same header), and the request's reads take a replica
//! connection only once that replica has replayed the read model's checkpoint past it
//! ([`crate::read_pool`]). A request's own appends raise what it must see, so a route that
//! reads after it wrote reads its write too.
//!
//! The request's needs live in a task-local value set by [`track`] around the routes: the
//! handlers and the command runner reach it without a parameter in every signature. Work
//! outside a request (background tasks) has none and reads the primary.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// The header carrying a log position: on a write's answer, where its events are; on a
/// request, the position its reads must reflect.
pub const POSITION_HEADER: &str = "palimpsest-position";

/// What the current request must see, and what it appended.
#[derive(Debug, Default)]
struct Needs {
    /// The position its reads must reflect (0: nothing in particular).
    position: AtomicI64,
    /// The last position it appended (0: none).
    appended: AtomicI64,
}

tokio::task_local! {
    static NEEDS: Arc<Needs>;
}

/// Runs the request in a scope holding the position it names, and answers the position it
/// appended (if it did) in [`POSITION_HEADER`]. A header that is not a position is ignored:
/// the request then names none.
pub async fn track(request: Request, next: Next) -> Response {
    let named = request
        .headers()
        .get(POSITION_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok())
        .unwrap_or(0);
    let needs = Arc::new(Needs {
        position: AtomicI64::new(named.max(0)),
        appended: AtomicI64::new(0),
    });
    let mut response = NEEDS.scope(needs.clone(), next.run(request)).await;
    let appended = needs.appended.load(Ordering::Acquire);
    if appended > 0 {
        response
            .headers_mut()
            .insert(POSITION_HEADER, HeaderValue::from(appended));
    }
    response
}

/// The position the current request's reads must reflect; `None` outside a request.
pub fn needed() -> Option<i64> {
    NEEDS
        .try_with(|needs| needs.position.load(Ordering::Acquire))
        .ok()
}

/// Records that the current request appended up to `position`: its later reads must reflect
/// it, and its answer tells the client. Outside a request, nothing.
pub fn appended(position: i64) {
    // Outside a request (a background task, a tool) there is no one to tell.
    let _outside = NEEDS.try_with(|needs| {
        needs.position.fetch_max(position, Ordering::AcqRel);
        needs.appended.fetch_max(position, Ordering::AcqRel);
    });
}
