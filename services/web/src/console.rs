//! The web console's assets under `/console`: the files the front end's build left in the
//! console folder (`console/dist` by default, `--console-dir`), served as they are.
//!
//! The console is a page of static files that reads the `/v1` routes with the admin token it
//! keeps in the browser's session storage, never in a URL. Its assets are served here, so it
//! works with no internet; when they were not built (no Node on the machine), `/console` says so
//! and how to build them instead of a broken page. Every answer is `no-store` (what the console
//! shows, records' decrypted data included, is never kept by the browser) and carries a content
//! security policy allowing only this origin.

use crate::AppState;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use std::path::{Component, PathBuf};

/// The console's routes.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route(
            "/console",
            get(|| async { Redirect::permanent("/console/") }),
        )
        .route("/console/", get(index))
        .route("/console/{*path}", get(asset))
        .with_state(state)
}

/// The policy every answer carries: scripts, styles, images and requests of this origin only.
const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; \
                   frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

async fn index(State(state): State<AppState>) -> Response {
    file(&state, "index.html").await
}

async fn asset(State(state): State<AppState>, Path(path): Path<String>) -> Response {
    file(&state, &path).await
}

/// The file at `path` in the console folder, or the page that says the console is not built,
/// or a 404 for a path that names nothing there (or leaves the folder).
async fn file(state: &AppState, path: &str) -> Response {
    let Some(dir) = &state.console_dir else {
        return not_built("no console folder is configured (--console-dir)");
    };
    let built = tokio::fs::metadata(dir.join("index.html")).await;
    if !built.is_ok_and(|m| m.is_file()) {
        return not_built(&format!("{} holds no built console", dir.display()));
    }
    let relative = PathBuf::from(path);
    let inside = relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)));
    if !inside {
        return missing();
    }
    match tokio::fs::read(dir.join(&relative)).await {
        Ok(bytes) => answer(StatusCode::OK, content_type(path), bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => missing(),
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => missing(),
        Err(e) => {
            tracing::warn!(path, error = %e, "cannot read a console asset");
            answer(
                StatusCode::INTERNAL_SERVER_ERROR,
                "application/json",
                br#"{"error":"the console asset could not be read"}"#.to_vec(),
            )
        }
    }
}

fn missing() -> Response {
    answer(
        StatusCode::NOT_FOUND,
        "application/json",
        br#"{"error":"no such console file"}"#.to_vec(),
    )
}

/// The page served in place of a console that was not built: what to run, and why.
fn not_built(why: &str) -> Response {
    let why = why
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Palimpsest console not built</title></head><body>\
         <h1>The console is not built</h1><p>{why}.</p>\
         <p>Build it with <code>just console</code> (it needs Node.js 20 and npm), \
         or start with <code>just run</code>, which builds it.</p></body></html>"
    );
    answer(
        StatusCode::SERVICE_UNAVAILABLE,
        "text/html; charset=utf-8",
        page.into_bytes(),
    )
}

fn answer(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// The content type of a built asset, by its extension.
fn content_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map_or("", |(_, e)| e);
    match extension {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::content_type;

    #[test]
    fn built_assets_get_their_types() {
        assert_eq!(
            content_type("assets/index-3f2a.js"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("assets/x.css"), "text/css; charset=utf-8");
        assert_eq!(content_type("LICENSE"), "application/octet-stream");
    }
}
