//! How a command loads a token, author mapper or group mapper (the commands that write them
//! are the author's and the group's: [`crate::author::decide`], [`crate::group::decide`]).

use super::Mapping;
use crate::command::Load;
use crate::http::envelope::EnvelopeError;

impl Load {
    /// The token, author mapper or group mapper `key`.
    pub async fn mapping(
        &self,
        category: &'static str,
        key: &str,
    ) -> Result<Mapping, EnvelopeError> {
        self.state(category, key).await
    }
}
