//! `appendChatMessage`: a chat message on a pad. As in Etherpad, a chat message to a pad that
//! does not exist creates the pad (with the default text) first.

use super::creation::create;
use crate::author::Authors;
use crate::error::DomainError;
use crate::outcome::Outcome;
use crate::pad::{ChatMessage, Pad};
use palimpsest_events::pads::PadEvent;

/// Appends `message` to `pad`, creating the pad first if it does not exist.
pub fn append_chat_message(
    pad: &Pad,
    message: ChatMessage,
    now: i64,
    mut authors: Authors,
) -> Result<Outcome, DomainError> {
    let mut outcome = Outcome::none();
    let mut scratch = pad.clone();
    if !scratch.exists {
        let author = message.author_id.clone().unwrap_or_default();
        create(&mut scratch, None, &author, now, &mut authors, &mut outcome)?;
    }
    outcome.pad(
        &scratch.id,
        PadEvent::ChatMessageAppended {
            index: scratch.chat_head + 1,
            text: message.text,
            author_id: message.author_id,
            time: message.time,
        },
    );
    Ok(outcome)
}
