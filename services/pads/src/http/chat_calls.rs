//! Chat functions: `appendChatMessage`, `getChatHistory`, `getChatHead`.

use super::envelope::{Data, EnvelopeError};
use super::pad_calls::{existing_pad, valid_pad_id_for_creation};
use super::params::{js_string, truthy};
use super::{ApiCall, now_ms};
use crate::js_number;
use crate::pad::{self, ChatMessage};
use crate::store::keys;
use crate::store::records::{AuthorRecord, ChatRecord};
use palimpsest_events::pads::ChatTime;
use serde::Serialize;
use serde_json::{Value, json};

/// `appendChatMessage(padID, text, authorID, time)`. As in Etherpad, a missing pad is created.
#[tracing::instrument(skip_all, fields(pad = ?call.params.string("padID")))]
pub async fn append_chat_message(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let text = match call.params.get("text") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err(EnvelopeError::api("text is not a string")),
    };
    let now = now_ms();
    let time = match call.params.get("time") {
        Some(Value::Number(n)) if n.as_f64().is_some_and(js_number::is_int_number) => {
            ChatTime::Millis(n.as_f64().map_or(now, |f| f as i64))
        }
        Some(Value::String(s)) if js_number::is_int_text(s) => ChatTime::Given(s.clone()),
        _ => ChatTime::Millis(now),
    };
    let author_id = match call.params.get("authorID") {
        None | Some(Value::Null) => None,
        Some(v) => Some(js_string(v)),
    };
    let id = call
        .params
        .string("padID")
        .ok_or_else(|| EnvelopeError::api("padID is not a string"))?
        .to_owned();
    valid_pad_id_for_creation(&id)?;
    let message = ChatMessage {
        text,
        author_id,
        time,
    };
    let (id, message) = (&id, &message);
    call.pads
        .run(&call.request, |load| async move {
            let outcome = pad::command::append_chat_message(&load, id, message, now).await?;
            Ok((outcome, Data::null()))
        })
        .await
}

/// A chat message as the API returns it (Etherpad's `ChatMessage.toJSON`).
#[derive(Debug, Serialize)]
struct MessageOut {
    text: String,
    time: ChatTime,
    #[serde(rename = "userId")]
    user_id: Option<String>,
    #[serde(rename = "userName")]
    user_name: Option<String>,
}

/// A number from a query value, as JavaScript's relational operators convert it.
fn numeric(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) => js_number::number(s),
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Null => 0.0,
        _ => f64::NAN,
    }
}

/// `getChatHistory(padID, start, end)` → `{messages}`, the whole history unless both `start`
/// and `end` are given.
pub async fn get_chat_history(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let start = call.params.get("start").cloned();
    let end = call.params.get("end").cloned();
    let both = start.as_ref().is_some_and(truthy) && end.as_ref().is_some_and(truthy);
    let (mut from, mut to) = (
        start.as_ref().map_or(f64::NAN, numeric),
        end.as_ref().map_or(f64::NAN, numeric),
    );
    if both {
        if from < 0.0 {
            return Err(EnvelopeError::api("start is below zero"));
        }
        if to < 0.0 {
            return Err(EnvelopeError::api("end is below zero"));
        }
        if from > to {
            return Err(EnvelopeError::api("start is higher than end"));
        }
    }
    let id = super::pad_calls::pad_param(&call.params, "padID")?;
    let record = existing_pad(&call.reader, &id).await?;
    let head = record.chat_head as f64;
    if !both {
        from = 0.0;
        to = head;
    }
    if from > head {
        return Err(EnvelopeError::api(
            "start is higher than the current chatHead",
        ));
    }
    if to > head {
        return Err(EnvelopeError::api(
            "end is higher than the current chatHead",
        ));
    }
    let (from, to) = (from.ceil() as i64, to.floor() as i64);
    let wanted: Vec<String> = (from..=to).map(|i| keys::chat(&id, i)).collect();
    let found = call
        .reader
        .values(&wanted)
        .await
        .map_err(EnvelopeError::internal)?;
    let mut messages = Vec::new();
    for key in &wanted {
        let Some(text) = found.get(key) else {
            tracing::warn!(pad = %id, key, "broken chat entry");
            continue;
        };
        let record: ChatRecord = serde_json::from_str(text).map_err(EnvelopeError::internal)?;
        let user_name = match &record.author_id {
            Some(a) => call
                .reader
                .get::<AuthorRecord>(&keys::author(a))
                .await
                .map_err(EnvelopeError::internal)?
                .and_then(|r| r.name)
                .flatten(),
            None => None,
        };
        messages.push(MessageOut {
            text: record.text,
            time: record.time,
            user_id: record.author_id,
            user_name,
        });
    }
    Data::of(
        &json!({ "messages": serde_json::to_value(&messages).map_err(EnvelopeError::internal)? }),
    )
}

/// `getChatHead(padID)` → `{chatHead}`.
pub async fn get_chat_head(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let id = super::pad_calls::pad_param(&call.params, "padID")?;
    let record = existing_pad(&call.reader, &id).await?;
    Data::of(&json!({ "chatHead": record.chat_head }))
}
