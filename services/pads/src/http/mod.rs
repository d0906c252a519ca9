//! Etherpad's HTTP API, served under `/pads`:
//!
//! - `GET /api` → `{"currentVersion":"1.3.0"}`;
//! - `GET|POST /api/<version>/<function>` for every version from `1` to `1.3.0`, parameters
//!   from the query string, a form body, a multipart body or a JSON body; the API key in
//!   `apikey`, `api_key` or the `Authorization` header; answers in Etherpad's
//!   `{code, message, data}` envelope ([`envelope`]);
//! - `POST /ext/submitChangeset`: what Etherpad's editor sends over its socket (`USER_CHANGES`),
//!   as HTTP: a changeset against a base revision, transformed over the revisions since;
//! - `POST /ext/authorForToken`: the author of a browser token (Etherpad's `getAuthorId`).

mod author_calls;
mod chat_calls;
pub mod envelope;
mod ext_calls;
pub mod fields;
mod group_calls;
mod html_calls;
mod instance_calls;
pub mod openapi;
mod pad_admin_calls;
mod pad_calls;
pub mod params;
mod session_calls;
pub mod urlencoded;
pub mod versions;

use crate::command::Pads;
use crate::ids;
use crate::read::StoreReader;
use crate::settings::Settings;
use crate::store::keys;
use axum::Router;
use axum::extract::{Path, Request, State};
use axum::response::Response;
use axum::routing::{get, post};
use envelope::{Data, EnvelopeError, respond};
use palimpsest_web::AppState;
use params::Params;
use serde_json::Value;
use std::sync::Arc;

/// The API key: the one the settings give, else the key file `<data dir>/APIKEY.txt` (as
/// Etherpad keeps its `APIKEY.txt`), else a new one written to the key file.
fn load_apikey(state: &AppState, settings: &Settings) -> String {
    let file = state.data_dir.join("APIKEY.txt");
    match palimpsest_web::secret::load_or_create(settings.apikey.as_deref(), &file) {
        Ok(key) => key,
        Err(e) => {
            tracing::error!(error = %e, file = %file.display(), "cannot keep the pads API key; using one for this process only");
            let mut rng = rand::rng();
            ids::random_alphanumeric(&mut rng, 64)
        }
    }
}

/// The pads routes (without the `/pads` prefix), configured by default.
pub fn router(state: AppState) -> Router {
    router_with(state, Settings::default())
}

/// The pads routes (without the `/pads` prefix), configured by `settings`.
pub fn router_with(state: AppState, settings: Settings) -> Router {
    let apikey = load_apikey(&state, &settings);
    let pads = Pads {
        state,
        apikey: Arc::new(apikey),
        exports: crate::export::pool::ExportPool::default(),
    };
    Router::new()
        .route("/api", get(current_version))
        .route("/api/", get(current_version))
        .route("/api/openapi.json", get(openapi::serve))
        // Etherpad's API takes GET and POST; HEAD would run a GET (a write, for `setText`).
        .route(
            "/api/{version}/{function}",
            get(call).post(call).head(no_head),
        )
        .route("/ext/submitChangeset", post(ext_calls::submit_changeset))
        .route(
            "/ext/authorForToken",
            post(ext_calls::author_for_token)
                .get(ext_calls::author_for_token)
                .head(no_head),
        )
        .with_state(pads)
}

/// `HEAD` of a route whose `GET` may write: 405.
async fn no_head() -> Response {
    palimpsest_web::limits::method_not_allowed("GET, POST")
}

/// `GET /api`: the latest API version.
async fn current_version() -> Response {
    axum::response::IntoResponse::into_response(axum::Json(serde_json::json!({
        "currentVersion": versions::LATEST
    })))
}

/// The fields that may carry the API key, in the order Etherpad reads them.
const APIKEY_FIELDS: [&str; 3] = ["apikey", "api_key", "authorization"];

/// The API key among the fields: `apikey`, else `api_key`, else `authorization`.
fn given_apikey(fields: &fields::Fields) -> Option<&Value> {
    APIKEY_FIELDS
        .iter()
        .filter_map(|k| fields.get(k))
        .find(|v| params::truthy(v))
}

/// Checks the API key among the fields: `apikey`, else `api_key`, else `authorization`.
pub(crate) fn check_apikey(pads: &Pads, fields: &fields::Fields) -> Result<(), EnvelopeError> {
    match given_apikey(fields) {
        Some(Value::String(key)) if palimpsest_web::secret::equal(key, pads.apikey.trim()) => {
            Ok(())
        }
        _ => Err(EnvelopeError::unauthorized()),
    }
}

/// The fields of a call whose API key is good. A key in the headers or the query is checked
/// before the body is read (a false one is refused without waiting for a body, so it cannot
/// hold a request slot: `docs/authorization/platform-limits.md`); a call whose head holds no
/// key may still carry it in its body, as Etherpad allows, and is checked once it is read.
pub(crate) async fn authorized_fields(
    pads: &Pads,
    request: Request,
) -> Result<fields::Fields, EnvelopeError> {
    let head = fields::of_head(&request);
    if given_apikey(&head).is_some() {
        check_apikey(pads, &head)?;
    }
    let fields = fields::gather(request).await?;
    check_apikey(pads, &fields)?;
    Ok(fields)
}

/// Etherpad's `sanitizePadId`: an id that names no pad is tried with runs of white space, then
/// runs of `:`, replaced by `_`.
async fn sanitize_pad_id(reader: &StoreReader, id: &str) -> Result<String, EnvelopeError> {
    let rewrites = ids::pad_id_rewrites(id);
    if rewrites[1] == id {
        // Nothing to rewrite: the id stands whether or not the pad exists.
        return Ok(id.to_owned());
    }
    let mut current = id.to_owned();
    for rewrite in 0..2 {
        if reader
            .value(&keys::pad(&current))
            .await
            .map_err(EnvelopeError::internal)?
            .is_some()
        {
            return Ok(current);
        }
        current = ids::pad_id_rewrites(&current)[rewrite].clone();
    }
    Ok(current)
}

/// `GET|POST /api/<version>/<function>`.
#[tracing::instrument(skip_all, fields(version = %version, function = %function))]
async fn call(
    State(pads): State<Pads>,
    Path((version, function)): Path<(String, String)>,
    request: Request,
) -> Response {
    respond(dispatch(&pads, &version, &function, request).await)
}

async fn dispatch(
    pads: &Pads,
    version: &str,
    function: &str,
    request: Request,
) -> Result<Data, EnvelopeError> {
    if !versions::is_known(version) {
        return Err(EnvelopeError::not_found("no such api version"));
    }
    let names = versions::parameters(version, function)
        .ok_or_else(|| EnvelopeError::not_found("no such function"))?;
    let command = ext_calls::command_request(&request);
    let fields = authorized_fields(pads, request).await?;
    let mut params = Params::new(fields, names);
    params.refuse_nul()?;
    let reader = StoreReader::new(pads.state.read.clone());
    for name in ["padID", "padName"] {
        if let Some(Value::String(id)) = params.get(name).cloned()
            && !id.is_empty()
        {
            let clean = sanitize_pad_id(&reader, &id).await?;
            params.set(name, Value::String(clean));
        }
    }
    let call = ApiCall {
        pads,
        reader,
        params,
        request: command,
    };
    match function {
        "createGroup" => group_calls::create_group(call).await,
        "createGroupIfNotExistsFor" => group_calls::create_group_if_not_exists_for(call).await,
        "deleteGroup" => group_calls::delete_group(call).await,
        "listPads" => group_calls::list_pads(call).await,
        "createGroupPad" => group_calls::create_group_pad(call).await,
        "listAllGroups" => group_calls::list_all_groups(call).await,
        "createAuthor" => author_calls::create_author(call).await,
        "createAuthorIfNotExistsFor" => author_calls::create_author_if_not_exists_for(call).await,
        "getAuthorName" => author_calls::get_author_name(call).await,
        "listPadsOfAuthor" => author_calls::list_pads_of_author(call).await,
        "createSession" => session_calls::create_session(call).await,
        "deleteSession" => session_calls::delete_session(call).await,
        "getSessionInfo" => session_calls::get_session_info(call).await,
        "listSessionsOfGroup" => session_calls::list_sessions_of_group(call).await,
        "listSessionsOfAuthor" => session_calls::list_sessions_of_author(call).await,
        "createPad" => pad_calls::create_pad(call).await,
        "getText" => pad_calls::get_text(call).await,
        "setText" => pad_calls::set_text(call).await,
        "appendText" => pad_calls::append_text(call).await,
        "getHTML" => pad_calls::get_html(call).await,
        "getRevisionsCount" => pad_calls::get_revisions_count(call).await,
        "getLastEdited" => pad_calls::get_last_edited(call).await,
        "getAttributePool" => pad_calls::get_attribute_pool(call).await,
        "getRevisionChangeset" => pad_calls::get_revision_changeset(call).await,
        "restoreRevision" => pad_calls::restore_revision(call).await,
        "deletePad" => pad_admin_calls::delete_pad(call).await,
        "copyPad" => pad_admin_calls::copy_pad(call).await,
        "movePad" => pad_admin_calls::move_pad(call).await,
        "copyPadWithoutHistory" => pad_admin_calls::copy_pad_without_history(call).await,
        "getReadOnlyID" => pad_admin_calls::get_read_only_id(call).await,
        "getPadID" => pad_admin_calls::get_pad_id(call).await,
        "setPublicStatus" => pad_admin_calls::set_public_status(call).await,
        "getPublicStatus" => pad_admin_calls::get_public_status(call).await,
        "listAuthorsOfPad" => pad_admin_calls::list_authors_of_pad(call).await,
        "saveRevision" => pad_admin_calls::save_revision(call).await,
        "getSavedRevisionsCount" => pad_admin_calls::get_saved_revisions_count(call).await,
        "listSavedRevisions" => pad_admin_calls::list_saved_revisions(call).await,
        "padUsersCount" => instance_calls::pad_users_count(call).await,
        "padUsers" => instance_calls::pad_users(call).await,
        "sendClientsMessage" => instance_calls::send_clients_message(call).await,
        "checkToken" => Ok(Data::null()),
        "listAllPads" => instance_calls::list_all_pads(call).await,
        "getStats" => instance_calls::get_stats(call).await,
        "appendChatMessage" => chat_calls::append_chat_message(call).await,
        "getChatHistory" => chat_calls::get_chat_history(call).await,
        "getChatHead" => chat_calls::get_chat_head(call).await,
        "setHTML" => html_calls::set_html(call).await,
        "createDiffHTML" => html_calls::create_diff_html(call).await,
        _ => Err(EnvelopeError::not_found("no such function")),
    }
}

/// One call of an Etherpad API function, as every function gets it: the context, a store
/// reader, the call's parameters and the request's idempotency facts (for the functions that
/// write).
pub(crate) struct ApiCall<'a> {
    /// The context (command runner, API key, export pool).
    pads: &'a Pads,
    /// Reads `pads.store`.
    reader: StoreReader,
    /// The function's parameters, by Etherpad's names.
    params: Params,
    /// The Idempotency-Key and caller of the request.
    request: palimpsest_web::command::CommandRequest,
}

/// Current time in milliseconds since the epoch (Etherpad's `Date.now()`), read at the edge.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
