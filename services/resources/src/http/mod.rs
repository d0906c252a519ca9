//! Deki's REST API under `/resources/@api/deki`: files of pages, files by id with their
//! revisions, properties of pages, files, users and the site, and the file archive. Documents
//! are JSON with Deki's element names, or XML when `Accept` asks for it.

mod archive;
pub mod auth;
pub mod doc;
mod download;
mod error;
mod extract;
mod files;
mod openapi;
pub mod params;
mod permissions;
mod properties;
pub mod views;
mod xml_body;

use crate::content::ContentConfig;
use crate::ids::IdSource;
use crate::operation::{self, Actor, Changeset, OperationFailure};
use crate::read::Reader;
use auth::{Caller, Keys};
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::handler::Handler;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use palimpsest_web::command::{CommandRequest, Reply};
use palimpsest_web::{ApiError, AppState};
use std::sync::Arc;

/// The largest body a route that reads it whole accepts (a description, a batch of properties).
const SMALL_BODY: usize = 1024 * 1024;

/// What every handler of the context gets.
#[derive(Clone)]
pub struct Resources {
    /// The platform's state.
    pub app: AppState,
    /// Where content goes.
    pub content: Arc<ContentConfig>,
    /// Read model queries.
    pub reader: Reader,
    /// Accepted API keys.
    pub keys: Arc<Keys>,
    /// The process's leased blocks of integer ids.
    pub ids: IdSource,
}

impl Resources {
    /// The context's state over the platform's, with the content store inside its data folder.
    pub fn new(app: AppState) -> Self {
        let content = crate::content::in_data_dir(&app.data_dir);
        Self::with_content(app, content)
    }

    /// The context's state with an explicit content store.
    pub fn with_content(app: AppState, content: ContentConfig) -> Self {
        Resources {
            reader: Reader::new(app.read.clone()),
            keys: Arc::new(Keys::load(&app.data_dir, &app.admin_token)),
            content: Arc::new(content),
            ids: IdSource::new(),
            app,
        }
    }

    /// Runs an operation as one command for `caller` through the platform's runner
    /// ([`operation::run`]): one append, the answer after the read model shows it.
    /// `operation` gets a fresh [`Changeset`] on each try and gives it back with the answer.
    pub async fn execute<F, Fut>(
        &self,
        request: &CommandRequest,
        caller: Caller,
        operation: F,
    ) -> Result<Response, ApiError>
    where
        F: FnMut(Changeset) -> Fut,
        Fut: Future<Output = Result<(Changeset, Reply), OperationFailure>>,
    {
        let actor = Actor {
            user_id: caller.user_id,
            admin: caller.admin,
            now: params::now(),
        };
        let reply = operation::run(&self.app.commands, &self.ids, request, actor, operation)
            .await
            .map_err(error::answer)?;
        Ok(reply.into_response())
    }
}

/// The context's routes (without the `/resources` prefix), state built from the platform's.
pub fn router(app: AppState) -> Router {
    routes(Resources::new(app))
}

/// The routes over a given state.
pub fn routes(state: Resources) -> Router {
    let api = Router::new()
        .route("/pages/{pageid}/files", get(files::list))
        .route(
            "/pages/{pageid}/files/{filename}",
            get(files::get_by_name)
                .put(files::put)
                .delete(files::delete_by_name),
        )
        .route(
            "/files/{fileid}",
            get(files::get_by_id)
                .put(files::put_by_id)
                .delete(files::delete_by_id),
        )
        .route("/files/{fileid}/info", get(files::info))
        .route(
            "/files/{fileid}/revisions",
            get(files::revisions).post(files::hide),
        )
        .route("/files/{fileid}/move", post(files::move_file))
        .route(
            "/files/{fileid}/description",
            put(files::put_description)
                .delete(files::delete_description)
                .layer(DefaultBodyLimit::max(SMALL_BODY)),
        )
        .route("/archive/files", get(archive::list))
        .route("/archive/files/restore/{fileid}", post(archive::restore))
        .route(
            "/archive/files/{fileid}",
            axum::routing::delete(archive::wipe),
        );
    let api = [
        "/pages/{pageid}",
        "/files/{fileid}",
        "/users/{userid}",
        "/site",
    ]
    .into_iter()
    .fold(api, |api, parent| {
        api.route(
            &format!("{parent}/properties"),
            get(properties::list)
                .post(properties::create)
                .put(properties::batch.layer(DefaultBodyLimit::max(SMALL_BODY))),
        )
        .route(
            &format!("{parent}/properties/{{key}}"),
            get(properties::value)
                .put(properties::put)
                .delete(properties::delete),
        )
        .route(
            &format!("{parent}/properties/{{key}}/info"),
            get(properties::info),
        )
    });
    Router::new()
        .nest("/@api/deki", api)
        .route("/openapi.json", get(openapi::document))
        .layer(DefaultBodyLimit::disable())
        .with_state(state)
}
