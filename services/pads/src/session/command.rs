//! How a command loads the session it reads (`createSession`, `deleteSession`: their inputs are
//! the session, group and author ids and the parsed `validUntil`).

use super::Session;
use crate::command::Load;
use crate::http::envelope::EnvelopeError;
use palimpsest_events::pads;

impl Load {
    /// Session `id`.
    pub async fn session(&self, id: &str) -> Result<Session, EnvelopeError> {
        self.state(pads::SESSION, id).await
    }
}
