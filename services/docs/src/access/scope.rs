//! What one request to the docs router carries from its headers to its commands: the router's
//! [`Access`] and attachment store, the client's address, the caller once identified (so a handler asking again does
//! not query again, and the pre-body check in [`crate::access::gate`] is the identification the
//! handler uses), and the actor every event the request appends names (`Metadata.actor`).
//!
//! Kept in a task-local set by the router's outermost layer ([`enter`]), so that the handlers
//! and the command path reach it without every signature carrying it.

use crate::access::Access;
use crate::access::auth::Caller;
use crate::http::error::CouchError;
use axum::extract::{ConnectInfo, Request};
use axum::middleware::Next;
use axum::response::Response;
use palimpsest_web::content::ContentStore;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

/// One request's scope.
#[derive(Debug)]
pub struct RequestScope {
    access: Arc<Access>,
    attachments: Arc<ContentStore>,
    peer: Option<IpAddr>,
    caller: Mutex<Option<(String, Caller)>>,
}

tokio::task_local! {
    static SCOPE: Arc<RequestScope>;
}

/// Middleware: runs the request inside its scope.
pub async fn enter(
    access: Arc<Access>,
    attachments: Arc<ContentStore>,
    request: Request,
    next: Next,
) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip());
    let scope = Arc::new(RequestScope {
        access,
        attachments,
        peer,
        caller: Mutex::new(None),
    });
    SCOPE.scope(scope, next.run(request)).await
}

fn current() -> Result<Arc<RequestScope>, CouchError> {
    SCOPE
        .try_with(Arc::clone)
        .map_err(|_| CouchError::internal("a docs request ran outside its scope"))
}

/// The router's access configuration.
pub fn access() -> Result<Arc<Access>, CouchError> {
    Ok(current()?.access.clone())
}

/// The router's attachment store (its folder and inline size, from the context's settings).
/// A task answering after the request's own (a streamed body) takes it before it starts.
pub fn attachments() -> Result<Arc<ContentStore>, CouchError> {
    Ok(current()?.attachments.clone())
}

/// The client's address, when the server gave it.
pub fn peer() -> Option<IpAddr> {
    current().ok().and_then(|scope| scope.peer)
}

/// The caller already identified for `db` in this request.
pub fn cached(db: &str) -> Option<Caller> {
    let scope = current().ok()?;
    let guard = scope.caller.lock().ok()?;
    guard
        .as_ref()
        .filter(|(known, _)| known == db)
        .map(|(_, caller)| caller.clone())
}

/// Remembers the caller identified for `db`: later questions and the actor of the request's
/// events use it.
pub fn remember(db: &str, caller: &Caller) {
    if let Ok(scope) = current()
        && let Ok(mut guard) = scope.caller.lock()
    {
        *guard = Some((db.to_owned(), caller.clone()));
    }
}

/// The actor the request's events name: the caller identified, else `None`.
pub fn actor() -> Option<String> {
    let scope = current().ok()?;
    let guard = scope.caller.lock().ok()?;
    guard.as_ref().map(|(_, caller)| caller.actor())
}

/// Whether the caller identified in this request is the administrator.
pub fn is_administrator() -> bool {
    current()
        .ok()
        .and_then(|scope| {
            let guard = scope.caller.lock().ok()?;
            guard.as_ref().map(|(_, caller)| caller.administrator)
        })
        .unwrap_or(false)
}
