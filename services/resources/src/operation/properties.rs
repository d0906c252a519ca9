//! Property operations with Deki's `abort=never|modified|exists`.

use super::{Changeset, OperationError, OperationFailure, refuse};
use crate::content::Upload;
use crate::resource::Expect;
use palimpsest_events::resources::{Parent, ResourceType, Revision};

/// The property Deki keeps a file's description in.
pub const DESCRIPTION_KEY: &str = "urn:deki.mindtouch.com#description";

/// When a property write is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Abort {
    /// Always write.
    Never,
    /// Refuse if the property changed since the ETag the client sent (Deki's default; a
    /// property that exists needs an ETag).
    #[default]
    Modified,
    /// Refuse if the property exists.
    Exists,
}

impl Abort {
    /// Parses `never`, `modified` or `exists`.
    pub fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_lowercase().as_str() {
            "never" => Some(Abort::Never),
            "modified" => Some(Abort::Modified),
            "exists" => Some(Abort::Exists),
            _ => None,
        }
    }
}

/// A property write.
#[derive(Debug, Clone)]
pub struct PropertyWrite {
    /// What it belongs to.
    pub parent: Parent,
    /// Its key.
    pub name: String,
    /// Its value.
    pub upload: Upload,
    /// The value's MIME type.
    pub mimetype: String,
    /// When to refuse.
    pub abort: Abort,
    /// The ETag the client sent.
    pub expect: Expect,
}

/// What `abort` allows against an existing property: the expectation to check, or a refusal.
pub fn expectation(abort: Abort, name: &str, expect: &Expect) -> Result<Expect, OperationError> {
    match abort {
        Abort::Never => Ok(Expect::default()),
        Abort::Exists => Err(OperationError::PropertyExists(name.to_owned())),
        Abort::Modified if expect.etag.is_none() && expect.revision.is_none() => {
            Err(OperationError::EtagRequired(name.to_owned()))
        }
        Abort::Modified => Ok(expect.clone()),
    }
}

impl Changeset {
    /// The live property `name` of `parent`, if any.
    pub async fn property(
        &mut self,
        parent: Parent,
        name: &str,
    ) -> Result<Option<Revision>, OperationFailure> {
        match self.holder(ResourceType::Property, parent, name).await? {
            Some(res_id) => Ok(Some(self.live(res_id, ResourceType::Property).await?)),
            None => Ok(None),
        }
    }

    /// Sets a property (creating it if it does not exist); its head after.
    pub async fn put_property(
        &mut self,
        write: PropertyWrite,
    ) -> Result<Revision, OperationFailure> {
        self.preload(
            ResourceType::Property,
            write.parent,
            &write.name,
            &write.upload,
        )
        .await?;
        match self.property(write.parent, &write.name).await? {
            Some(head) => {
                let expect =
                    expectation(write.abort, &write.name, &write.expect).map_err(refuse)?;
                let revision = self
                    .edit(
                        &head,
                        Some((&write.upload, &write.mimetype)),
                        (None, None),
                        expect,
                        Some(format!("Property updated: {}", write.name)),
                    )
                    .await?;
                Ok(revision.unwrap_or(head))
            }
            None => {
                self.create(
                    ResourceType::Property,
                    write.parent,
                    &write.name,
                    &write.upload,
                    &write.mimetype,
                    Some(format!("Property created: {}", write.name)),
                )
                .await
            }
        }
    }

    /// Deletes property `name` of `parent` (checked against `abort` like a write).
    pub async fn delete_property(
        &mut self,
        parent: Parent,
        name: &str,
        abort: Abort,
        expect: Expect,
    ) -> Result<Revision, OperationFailure> {
        let head = self.property(parent, name).await?.ok_or_else(|| {
            refuse(OperationError::NoSuchName {
                kind: "property",
                name: name.to_owned(),
                parent: parent.to_string(),
            })
        })?;
        let expect = match abort {
            Abort::Exists => Expect::default(),
            _ => expectation(abort, name, &expect).map_err(refuse)?,
        };
        self.delete(
            head.res_id,
            expect,
            Some(format!("Property deleted: {name}")),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abort_modes_decide_what_an_existing_property_accepts() {
        let none = Expect::default();
        let tagged = Expect {
            etag: Some("\"1.r1_ts2026-01-01T00:00:00Z\"".into()),
            revision: None,
        };
        assert_eq!(
            expectation(Abort::Never, "k", &tagged),
            Ok(Expect::default())
        );
        assert_eq!(
            expectation(Abort::Exists, "k", &none),
            Err(OperationError::PropertyExists("k".into()))
        );
        assert_eq!(
            expectation(Abort::Modified, "k", &none),
            Err(OperationError::EtagRequired("k".into()))
        );
        assert_eq!(
            expectation(Abort::Modified, "k", &tagged),
            Ok(tagged.clone())
        );
        assert_eq!(Abort::parse("EXISTS"), Some(Abort::Exists));
        assert_eq!(Abort::parse("sometimes"), None);
    }
}
