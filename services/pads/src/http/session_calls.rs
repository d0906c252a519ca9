//! Session functions: `createSession`, `deleteSession`, `getSessionInfo`, `listSessionsOfGroup`,
//! `listSessionsOfAuthor`.

use super::envelope::{Data, EnvelopeError};
use super::group_calls::fresh;
use super::params::js_string;
use super::{ApiCall, now_ms};
use crate::error::DomainError;
use crate::ids::IdKind;
use crate::js_number;
use crate::js_object::JsObject;
use crate::read::StoreReader;
use crate::session;
use crate::store::keys;
use crate::store::records::{SessionListRecord, SessionRecord};
use serde_json::{Value, json};

/// Largest integer JavaScript holds exactly.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Etherpad's reading of `validUntil`: a number as it is, anything else through `parseInt`;
/// then not NaN, not negative, not fractional.
fn valid_until(value: Option<&Value>) -> Result<i64, String> {
    let n = match value {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(other) => js_number::parse_int(&js_string(other), None),
        None => f64::NAN,
    };
    if n.is_nan() {
        return Err("validUntil is not a number".into());
    }
    if n < 0.0 {
        return Err("validUntil is a negative number".into());
    }
    if !js_number::is_int_number(n) {
        return Err("validUntil is a float value".into());
    }
    if n > MAX_SAFE_INTEGER {
        return Err("validUntil is too large".into());
    }
    Ok(n as i64)
}

/// `createSession(groupID, authorID, validUntil)` → `{sessionID}`.
#[tracing::instrument(skip_all, fields(session = ?call.params.get("sessionID"), group = ?call.params.get("groupID")))]
pub async fn create_session(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let group_id = call.params.as_text("groupID");
    let author_id = call.params.as_text("authorID");
    let until = valid_until(call.params.get("validUntil"));
    let session_id = fresh(IdKind::Session);
    let now_seconds = now_ms().div_euclid(1000);
    let answer = &Data::of(&json!({ "sessionID": session_id }))?;
    let (group_id, author_id, session_id, until) = (&group_id, &author_id, &session_id, &until);
    call.pads
        .run(&call.request, |load| async move {
            let outcome = session::command::create_session(
                &load,
                session_id,
                (group_id, author_id),
                until,
                now_seconds,
            )
            .await?;
            Ok((outcome, answer.clone()))
        })
        .await
}

/// `deleteSession(sessionID)`: both session lists first, then the session.
#[tracing::instrument(skip_all, fields(session = ?call.params.get("sessionID"), group = ?call.params.get("groupID")))]
pub async fn delete_session(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let session_id = &call.params.as_text("sessionID");
    call.pads
        .run(&call.request, |load| async move {
            let outcome = session::command::delete_session(&load, session_id).await?;
            Ok((outcome, Data::null()))
        })
        .await
}

/// `getSessionInfo(sessionID)` → `{groupID, authorID, validUntil}`.
pub async fn get_session_info(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let session: SessionRecord = call
        .reader
        .get(&keys::session(&call.params.as_text("sessionID")))
        .await
        .map_err(EnvelopeError::internal)?
        .ok_or_else(|| EnvelopeError::from(DomainError::SessionMissing))?;
    Data::of(&session)
}

/// The sessions of a `group2sessions`/`author2sessions` record with their info (`null` for a
/// listed session that no longer exists); `null` when there is no record.
async fn sessions_of(reader: &StoreReader, list_key: &str) -> Result<Data, EnvelopeError> {
    let Some(list): Option<SessionListRecord> = reader
        .get(list_key)
        .await
        .map_err(EnvelopeError::internal)?
    else {
        return Ok(Data::null());
    };
    let mut out: JsObject<Option<SessionRecord>> = JsObject::new();
    for id in list.session_ids.keys() {
        let info = reader
            .get(&keys::session(&id))
            .await
            .map_err(EnvelopeError::internal)?;
        out.insert(&id, info);
    }
    Data::of(&out)
}

/// `listSessionsOfGroup(groupID)`.
pub async fn list_sessions_of_group(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let group_id = call.params.as_text("groupID");
    if call
        .reader
        .value(&keys::group(&group_id))
        .await
        .map_err(EnvelopeError::internal)?
        .is_none()
    {
        return Err(DomainError::GroupMissing.into());
    }
    sessions_of(&call.reader, &keys::group_sessions(&group_id)).await
}

/// `listSessionsOfAuthor(authorID)`.
pub async fn list_sessions_of_author(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let author_id = call.params.as_text("authorID");
    if call
        .reader
        .value(&keys::author(&author_id))
        .await
        .map_err(EnvelopeError::internal)?
        .is_none()
    {
        return Err(DomainError::AuthorMissing.into());
    }
    sessions_of(&call.reader, &keys::author_sessions(&author_id)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_until_follows_etherpad() {
        assert_eq!(
            valid_until(Some(&json!("999999999999"))),
            Ok(999_999_999_999)
        );
        assert_eq!(valid_until(Some(&json!("12abc"))), Ok(12));
        assert_eq!(valid_until(None), Err("validUntil is not a number".into()));
        assert_eq!(
            valid_until(Some(&json!("-5"))),
            Err("validUntil is a negative number".into())
        );
        assert_eq!(
            valid_until(Some(&json!(1.5))),
            Err("validUntil is a float value".into())
        );
    }
}
