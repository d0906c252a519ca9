//! Who may write what: Deki's rules, decided from the resources' own streams (never from the
//! read model).
//!
//! - A user's properties (`resrev_parent_user_id`): that user, or the administrator.
//! - The site's properties: the administrator alone.
//! - A file (a new revision, a move or rename, a delete, its description and other
//!   properties): the user who created it (`res_create_user_id`), or the administrator. Deki
//!   asks for UPDATE on the file's page; there are no pages here, so the file's creator stands
//!   for the page's editors.
//! - A page's properties: each one by the user who created it, or the administrator.
//! - Anyone with a key may add a new file or property to a page (Deki's contributors may
//!   attach to the pages they can edit, and every page is public here).
//! - Hiding revisions, restoring and wiping archived files: the administrator alone.

use super::state::ResourceState;
use palimpsest_events::resources::Parent;

/// Who acts: a user, or the administrator (who may do everything).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Principal {
    /// The user id recorded in revisions (the administrator's is Deki's admin id).
    pub user_id: i64,
    /// Holds the administrator's token.
    pub admin: bool,
}

/// Who may make a given write besides the administrator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// Any user with a key.
    AnyUser,
    /// This user.
    User(i64),
    /// Nobody but the administrator.
    Admin,
}

/// A write, as the streams show what it touches.
#[derive(Debug, Clone, Copy)]
pub enum Write<'a> {
    /// A new resource under `parent` (or an existing one moved there); `parent_file` is the
    /// parent's stream state when the parent is a file.
    Under {
        /// Where the resource goes.
        parent: Parent,
        /// The parent file's state, when `parent` is a file.
        parent_file: Option<&'a ResourceState>,
    },
    /// A change to an existing resource (content, name, place, delete); `parent_file` is its
    /// parent's stream state when it hangs on a file.
    Change {
        /// The resource's state.
        resource: &'a ResourceState,
        /// Its parent file's state, when it is a file's property.
        parent_file: Option<&'a ResourceState>,
    },
    /// Hiding revisions, restoring or wiping: the archive's business.
    Archive,
}

/// Why a write was refused (HTTP 403).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccessError {
    /// The write belongs to another user.
    #[error("{what} belongs to user {owner}: only that user or the administrator may change it")]
    NotOwner {
        /// What the write touched.
        what: String,
        /// Who may make it.
        owner: i64,
    },
    /// Only the administrator may make the write.
    #[error("{what}: only the administrator may do this")]
    AdminOnly {
        /// What the write touched.
        what: String,
    },
}

/// Who may add a resource under `parent` (`parent_file`: the parent file's state, if it is one).
pub fn owner_under(parent: Parent, parent_file: Option<&ResourceState>) -> Owner {
    match parent {
        Parent::Page(_) => Owner::AnyUser,
        Parent::File(_) => creator(parent_file),
        Parent::User(user) => Owner::User(user),
        Parent::Site => Owner::Admin,
    }
}

/// Who may change an existing resource: a page's resources by their creator, the others as
/// their parent says.
pub fn owner_of(resource: &ResourceState, parent_file: Option<&ResourceState>) -> Owner {
    match resource.existing().map(|head| head.parent) {
        Some(Parent::Page(_)) => creator(Some(resource)),
        Some(parent) => owner_under(parent, parent_file),
        None => Owner::Admin,
    }
}

/// The user who created a resource; a resource with no history is the administrator's.
fn creator(state: Option<&ResourceState>) -> Owner {
    state
        .and_then(|state| state.creator)
        .map_or(Owner::Admin, Owner::User)
}

/// Decides whether `principal` may make `write`.
pub fn decide(principal: Principal, write: Write<'_>) -> Result<(), AccessError> {
    if principal.admin {
        return Ok(());
    }
    let (owner, what) = match write {
        Write::Under {
            parent,
            parent_file,
        } => (owner_under(parent, parent_file), under(parent)),
        Write::Change {
            resource,
            parent_file,
        } => (owner_of(resource, parent_file), changed(resource)),
        Write::Archive => (
            Owner::Admin,
            "the file archive and hidden revisions".to_owned(),
        ),
    };
    match owner {
        Owner::AnyUser => Ok(()),
        Owner::User(user) if user == principal.user_id => Ok(()),
        Owner::User(owner) => Err(AccessError::NotOwner { what, owner }),
        Owner::Admin => Err(AccessError::AdminOnly { what }),
    }
}

/// What a write under `parent` touches, in words.
fn under(parent: Parent) -> String {
    match parent {
        Parent::Page(page) => format!("page {page}"),
        Parent::File(file) => format!("file {file}"),
        Parent::User(user) => format!("the properties of user {user}"),
        Parent::Site => "the site's properties".to_owned(),
    }
}

/// What a change to `resource` touches, in words.
fn changed(resource: &ResourceState) -> String {
    match resource.existing() {
        Some(head) => format!(
            "{} {} ({})",
            head.res_type.word(),
            head.res_id,
            under(head.parent)
        ),
        None => "a resource that does not exist".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::{NewResource, ResourceCommand, Stamp, decide as decide_revision, evolve};
    use chrono::DateTime;
    use palimpsest_events::resources::{ContentRef, ResourceType};

    const ANN: Principal = Principal {
        user_id: 10,
        admin: false,
    };
    const BOB: Principal = Principal {
        user_id: 11,
        admin: false,
    };
    const ADMIN: Principal = Principal {
        user_id: 1,
        admin: true,
    };

    /// Given: resource `res_id` of `res_type` created under `parent` by `user_id`.
    fn given(res_id: i64, res_type: ResourceType, parent: Parent, user_id: i64) -> ResourceState {
        let new = NewResource {
            res_id,
            res_type,
            parent,
            name: format!("r{res_id}"),
            mimetype: "text/plain".into(),
            content: ContentRef {
                rescontent_id: 1,
                sha256: "0".repeat(64),
                size: 1,
            },
        };
        let stamp = Stamp {
            resrev_id: res_id,
            user_id,
            timestamp: DateTime::UNIX_EPOCH,
            changeset_id: res_id,
            description: None,
        };
        let events = decide_revision(
            res_id,
            ResourceCommand::Create(new, stamp),
            &Default::default(),
        )
        .expect("create");
        events.iter().fold(ResourceState::default(), evolve)
    }

    fn file_of(user_id: i64) -> ResourceState {
        given(5, ResourceType::File, Parent::Page(3), user_id)
    }

    fn refused_as_not_owner(result: Result<(), AccessError>, owner: i64) {
        assert!(
            matches!(result, Err(AccessError::NotOwner { owner: o, .. }) if o == owner),
            "{result:?}"
        );
    }

    #[test]
    fn the_creator_is_who_made_revision_one_whoever_edits_after() {
        let file = file_of(10);
        let edited = decide_revision(
            5,
            ResourceCommand::Delete(
                Default::default(),
                Stamp {
                    resrev_id: 9,
                    user_id: 1,
                    timestamp: DateTime::UNIX_EPOCH,
                    changeset_id: 9,
                    description: None,
                },
            ),
            &file,
        )
        .expect("delete");
        let state = edited.iter().fold(file, evolve);
        assert_eq!(state.creator, Some(10));
    }

    #[test]
    fn a_file_is_changed_by_its_creator_or_the_administrator() {
        let file = file_of(10);
        let change = Write::Change {
            resource: &file,
            parent_file: None,
        };
        assert_eq!(decide(ANN, change), Ok(()));
        assert_eq!(decide(ADMIN, change), Ok(()));
        refused_as_not_owner(decide(BOB, change), 10);
    }

    #[test]
    fn anyone_with_a_key_adds_to_a_page() {
        let page = Write::Under {
            parent: Parent::Page(3),
            parent_file: None,
        };
        assert_eq!(decide(BOB, page), Ok(()));
        assert_eq!(decide(ANN, page), Ok(()));
    }

    #[test]
    fn a_files_properties_follow_the_file() {
        let file = file_of(10);
        let add = Write::Under {
            parent: Parent::File(5),
            parent_file: Some(&file),
        };
        assert_eq!(decide(ANN, add), Ok(()));
        assert_eq!(decide(ADMIN, add), Ok(()));
        refused_as_not_owner(decide(BOB, add), 10);
        // A property Bob could not have made, as if the administrator had: still Ann's file's.
        let property = given(6, ResourceType::Property, Parent::File(5), 1);
        let change = Write::Change {
            resource: &property,
            parent_file: Some(&file),
        };
        assert_eq!(decide(ANN, change), Ok(()));
        refused_as_not_owner(decide(BOB, change), 10);
    }

    #[test]
    fn a_property_of_a_file_that_does_not_exist_is_the_administrators() {
        let add = Write::Under {
            parent: Parent::File(5),
            parent_file: Some(&ResourceState::default()),
        };
        assert!(matches!(
            decide(ANN, add),
            Err(AccessError::AdminOnly { .. })
        ));
        assert_eq!(decide(ADMIN, add), Ok(()));
    }

    #[test]
    fn a_page_property_is_changed_by_its_creator() {
        let property = given(7, ResourceType::Property, Parent::Page(3), 11);
        let change = Write::Change {
            resource: &property,
            parent_file: None,
        };
        assert_eq!(decide(BOB, change), Ok(()));
        refused_as_not_owner(decide(ANN, change), 11);
    }

    #[test]
    fn a_users_properties_are_that_users_whoever_created_them() {
        let add = Write::Under {
            parent: Parent::User(11),
            parent_file: None,
        };
        assert_eq!(decide(BOB, add), Ok(()));
        refused_as_not_owner(decide(ANN, add), 11);
        let made_by_admin = given(8, ResourceType::Property, Parent::User(11), 1);
        let change = Write::Change {
            resource: &made_by_admin,
            parent_file: None,
        };
        assert_eq!(decide(BOB, change), Ok(()));
        refused_as_not_owner(decide(ANN, change), 11);
    }

    #[test]
    fn the_sites_properties_and_the_archive_are_the_administrators() {
        let site = given(9, ResourceType::Property, Parent::Site, 1);
        for write in [
            Write::Under {
                parent: Parent::Site,
                parent_file: None,
            },
            Write::Change {
                resource: &site,
                parent_file: None,
            },
            Write::Archive,
        ] {
            assert_eq!(decide(ADMIN, write), Ok(()));
            assert!(
                matches!(decide(ANN, write), Err(AccessError::AdminOnly { .. })),
                "{write:?}"
            );
        }
    }

    #[test]
    fn a_refusal_names_what_and_whose() {
        let file = file_of(10);
        let refusal = decide(
            BOB,
            Write::Change {
                resource: &file,
                parent_file: None,
            },
        )
        .expect_err("refused");
        assert_eq!(
            refusal.to_string(),
            "file 5 (page 3) belongs to user 10: only that user or the administrator may change it"
        );
    }
}
