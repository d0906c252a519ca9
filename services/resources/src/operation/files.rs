//! File operations: upload (create or new content), move/rename, delete, restore.

use super::properties::{Abort, DESCRIPTION_KEY, PropertyWrite};
use super::{Changeset, OperationError, OperationFailure, refuse};
use crate::content::Upload;
use crate::name;
use crate::resource::{Expect, ResourceError};
use palimpsest_events::resources::{Parent, ResourceType, Revision};

/// How many alternative names a restore tries before giving up.
const RESTORE_NAME_TRIES: u32 = 100;

/// An upload to `PUT /pages/{pageid}/files/{filename}`.
#[derive(Debug, Clone)]
pub struct FileWrite {
    /// The page.
    pub parent: Parent,
    /// The file name.
    pub name: String,
    /// The received content.
    pub upload: Upload,
    /// Its MIME type.
    pub mimetype: String,
    /// A description to set on the file (Deki's description property), in the same changeset.
    pub description: Option<String>,
    /// The head the client saw, if it said.
    pub expect: Expect,
}

/// A new revision of a file by id (`PUT /files/{fileid}`).
#[derive(Debug, Clone)]
pub struct Replace {
    /// The file.
    pub res_id: i64,
    /// The received content.
    pub upload: Upload,
    /// Its MIME type.
    pub mimetype: String,
    /// The head the client saw, if it said.
    pub expect: Expect,
    /// A description to set on the file, received, in the same changeset.
    pub description: Option<Upload>,
}

/// A restore from the archive.
#[derive(Debug, Clone, Copy)]
pub struct Restore {
    /// The deleted file.
    pub res_id: i64,
    /// Where it comes back (default: where it was).
    pub to: Option<Parent>,
}

impl Changeset {
    /// Uploads a file: a new resource if no live file holds the name (a deleted file's name
    /// makes a NEW resource), else a new content revision of that file. Returns the file's head.
    pub async fn put_file(
        &mut self,
        write: FileWrite,
        description_upload: Option<Upload>,
    ) -> Result<Revision, OperationFailure> {
        self.preload(ResourceType::File, write.parent, &write.name, &write.upload)
            .await?;
        let holder = self
            .holder(ResourceType::File, write.parent, &write.name)
            .await?;
        let head = match holder {
            Some(res_id) => {
                let head = self.live(res_id, ResourceType::File).await?;
                // The name matched without regard to case; another spelling renames the file.
                let rename = (head.name != write.name).then(|| write.name.clone());
                let revision = self
                    .edit(
                        &head,
                        Some((&write.upload, &write.mimetype)),
                        (None, rename),
                        write.expect.clone(),
                        Some(format!("File content updated: {}", write.name)),
                    )
                    .await?;
                revision.unwrap_or(head)
            }
            None => {
                self.create(
                    ResourceType::File,
                    write.parent,
                    &write.name,
                    &write.upload,
                    &write.mimetype,
                    Some(format!("File created: {}", write.name)),
                )
                .await?
            }
        };
        if let (Some(_), Some(upload)) = (&write.description, description_upload) {
            self.describe(head.res_id, upload).await?;
        }
        Ok(head)
    }

    /// A new content revision of the live file `replace.res_id` (its name and page stay).
    pub async fn replace_file(&mut self, replace: Replace) -> Result<Revision, OperationFailure> {
        let head = self.live(replace.res_id, ResourceType::File).await?;
        let description = Some(format!("File content updated: {}", head.name));
        let revision = self
            .edit(
                &head,
                Some((&replace.upload, &replace.mimetype)),
                (None, None),
                replace.expect,
                description,
            )
            .await?;
        let head = revision.unwrap_or(head);
        if let Some(upload) = replace.description {
            self.describe(head.res_id, upload).await?;
        }
        Ok(head)
    }

    /// Sets a file's description property in this changeset.
    async fn describe(&mut self, res_id: i64, upload: Upload) -> Result<(), OperationFailure> {
        self.put_property(PropertyWrite {
            parent: Parent::File(res_id),
            name: DESCRIPTION_KEY.to_owned(),
            upload,
            mimetype: "text/plain; charset=utf-8".into(),
            abort: Abort::Never,
            expect: Expect::default(),
        })
        .await
        .map(|_| ())
    }

    /// Moves and/or renames a live file; the head after (unchanged if nothing differed).
    pub async fn move_file(
        &mut self,
        res_id: i64,
        to: Option<Parent>,
        name: Option<String>,
        expect: Expect,
    ) -> Result<Revision, OperationFailure> {
        let head = self.live(res_id, ResourceType::File).await?;
        let description = Some(format!(
            "File moved: {} to {}",
            head.name,
            name.as_deref().unwrap_or(&head.name)
        ));
        let revision = self
            .edit(&head, None, (to, name), expect, description)
            .await?;
        Ok(revision.unwrap_or(head))
    }

    /// Deletes a live file (a deleted one is not found).
    pub async fn delete_file(
        &mut self,
        res_id: i64,
        expect: Expect,
    ) -> Result<Revision, OperationFailure> {
        let head = self.live(res_id, ResourceType::File).await?;
        self.delete(res_id, expect, Some(format!("File deleted: {}", head.name)))
            .await
    }

    /// Restores a deleted file, to `to` or where it was; on a name clash it takes the first
    /// free `name(2).ext`, `name(3).ext`, ...
    pub async fn restore_file(&mut self, restore: Restore) -> Result<Revision, OperationFailure> {
        self.may_archive()?;
        let state = self.resource(restore.res_id).await?;
        let head = state
            .existing()
            .ok_or(ResourceError::NotFound(restore.res_id))
            .map_err(refuse)?
            .clone();
        if head.res_type != ResourceType::File {
            return Err(refuse(OperationError::WrongType(head.res_id, "file")));
        }
        if !head.deleted {
            return Err(refuse(ResourceError::NotDeleted(head.res_id)));
        }
        let parent = restore.to.unwrap_or(head.parent);
        let name = self.free_name(parent, &head.name).await?;
        self.claim(ResourceType::File, parent, &name, head.res_id)
            .await?;
        let stamp = self.stamp(Some(format!("File restored: {name}"))).await?;
        let command = crate::resource::ResourceCommand::Restore {
            parent,
            name,
            stamp,
        };
        self.decide(head.res_id, command).await?.ok_or_else(|| {
            palimpsest_web::command::CommandError::Internal("restore decided no revision".into())
        })
    }

    async fn free_name(&mut self, parent: Parent, name: &str) -> Result<String, OperationFailure> {
        if self
            .holder(ResourceType::File, parent, name)
            .await?
            .is_none()
        {
            return Ok(name.to_owned());
        }
        for n in 2..RESTORE_NAME_TRIES + 2 {
            let candidate = name::alternative(name, n);
            if self
                .holder(ResourceType::File, parent, &candidate)
                .await?
                .is_none()
            {
                return Ok(candidate);
            }
        }
        Err(refuse(OperationError::NoFreeName(name.to_owned())))
    }
}
