//! `appendChatMessage`: a chat message on a pad. As in Etherpad, a chat message to a pad that
//! does not exist creates the pad (with the default text) first.

use super::pad_creation::create;
use super::{Authors, Decision, DomainError, Pad};
use palimpsest_events::pads::{ChatTime, PadEvent};

/// A chat message to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// The message.
    pub text: String,
    /// The author, if the client named one.
    pub author_id: Option<String>,
    /// Its time.
    pub time: ChatTime,
}

/// Appends `message` to `pad`, creating the pad first if it does not exist.
pub fn append_chat_message(
    pad: &Pad,
    message: ChatMessage,
    now: i64,
    mut authors: Authors,
) -> Result<Decision, DomainError> {
    let mut d = Decision::none();
    let mut scratch = pad.clone();
    if !scratch.exists {
        let author = message.author_id.clone().unwrap_or_default();
        create(&mut scratch, None, &author, now, &mut authors, &mut d)?;
    }
    d.pad(
        &scratch.id,
        PadEvent::ChatMessageAppended {
            index: scratch.chat_head + 1,
            text: message.text,
            author_id: message.author_id,
            time: message.time,
        },
    );
    Ok(d)
}
