//! Etherpad's API versions and the functions (with their parameter names) each one offers.
//!
//! A function's parameters differ between versions: `appendText` takes `authorId` only from
//! 1.3.0 on, so `/api/1.2.13/appendText?authorId=…` ignores it, as Etherpad does.

/// The version `/api` reports.
pub const LATEST: &str = "1.3.0";

/// A function and its parameter names.
pub type Function = (&'static str, &'static [&'static str]);

/// The functions of version 1.
const V1: &[Function] = &[
    ("createGroup", &[]),
    ("createGroupIfNotExistsFor", &["groupMapper"]),
    ("deleteGroup", &["groupID"]),
    ("listPads", &["groupID"]),
    ("createPad", &["padID", "text"]),
    ("createGroupPad", &["groupID", "padName", "text"]),
    ("createAuthor", &["name"]),
    ("createAuthorIfNotExistsFor", &["authorMapper", "name"]),
    ("listPadsOfAuthor", &["authorID"]),
    ("createSession", &["groupID", "authorID", "validUntil"]),
    ("deleteSession", &["sessionID"]),
    ("getSessionInfo", &["sessionID"]),
    ("listSessionsOfGroup", &["groupID"]),
    ("listSessionsOfAuthor", &["authorID"]),
    ("getText", &["padID", "rev"]),
    ("setText", &["padID", "text"]),
    ("getHTML", &["padID", "rev"]),
    ("setHTML", &["padID", "html"]),
    ("getRevisionsCount", &["padID"]),
    ("getLastEdited", &["padID"]),
    ("deletePad", &["padID"]),
    ("getReadOnlyID", &["padID"]),
    ("setPublicStatus", &["padID", "publicStatus"]),
    ("getPublicStatus", &["padID"]),
    ("listAuthorsOfPad", &["padID"]),
    ("padUsersCount", &["padID"]),
];

/// What each later version adds or changes, in order.
const LATER: &[(&str, &[Function])] = &[
    (
        "1.1",
        &[
            ("getAuthorName", &["authorID"]),
            ("padUsers", &["padID"]),
            ("sendClientsMessage", &["padID", "msg"]),
            ("listAllGroups", &[]),
        ],
    ),
    ("1.2", &[("checkToken", &[])]),
    ("1.2.1", &[("listAllPads", &[])]),
    (
        "1.2.7",
        &[
            ("createDiffHTML", &["padID", "startRev", "endRev"]),
            ("getChatHistory", &["padID", "start", "end"]),
            ("getChatHead", &["padID"]),
        ],
    ),
    (
        "1.2.8",
        &[
            ("getAttributePool", &["padID"]),
            ("getRevisionChangeset", &["padID", "rev"]),
        ],
    ),
    (
        "1.2.9",
        &[
            ("copyPad", &["sourceID", "destinationID", "force"]),
            ("movePad", &["sourceID", "destinationID", "force"]),
        ],
    ),
    ("1.2.10", &[("getPadID", &["roID"])]),
    (
        "1.2.11",
        &[
            ("getSavedRevisionsCount", &["padID"]),
            ("listSavedRevisions", &["padID"]),
            ("saveRevision", &["padID", "rev"]),
            ("restoreRevision", &["padID", "rev"]),
        ],
    ),
    (
        "1.2.12",
        &[("appendChatMessage", &["padID", "text", "authorID", "time"])],
    ),
    ("1.2.13", &[("appendText", &["padID", "text"])]),
    ("1.2.14", &[("getStats", &[])]),
    (
        "1.2.15",
        &[(
            "copyPadWithoutHistory",
            &["sourceID", "destinationID", "force"],
        )],
    ),
    (
        "1.3.0",
        &[
            ("appendText", &["padID", "text", "authorId"]),
            (
                "copyPadWithoutHistory",
                &["sourceID", "destinationID", "force", "authorId"],
            ),
            (
                "createGroupPad",
                &["groupID", "padName", "text", "authorId"],
            ),
            ("createPad", &["padID", "text", "authorId"]),
            ("restoreRevision", &["padID", "rev", "authorId"]),
            ("setHTML", &["padID", "html", "authorId"]),
            ("setText", &["padID", "text", "authorId"]),
        ],
    ),
];

/// Whether `version` is one of Etherpad's API versions.
pub fn is_known(version: &str) -> bool {
    version == "1" || LATER.iter().any(|(v, _)| *v == version)
}

/// The parameter names of `function` in `version`, or `None` when that version lacks it.
pub fn parameters(version: &str, function: &str) -> Option<&'static [&'static str]> {
    if !is_known(version) {
        return None;
    }
    let mut found = V1.iter().find(|(f, _)| *f == function).map(|(_, p)| *p);
    if version == "1" {
        return found;
    }
    for (v, changes) in LATER {
        if let Some((_, p)) = changes.iter().find(|(f, _)| *f == function) {
            found = Some(*p);
        }
        if *v == version {
            break;
        }
    }
    found
}

/// Every function of `version` with its parameter names, in Etherpad's declaration order (the
/// order `/api/openapi.json` lists them in).
pub fn functions(version: &str) -> Vec<Function> {
    let mut names: Vec<&'static str> = V1.iter().map(|(f, _)| *f).collect();
    for (v, changes) in LATER {
        for (f, _) in *changes {
            if !names.contains(f) {
                names.push(f);
            }
        }
        if *v == version {
            break;
        }
    }
    names
        .into_iter()
        .filter_map(|f| parameters(version, f).map(|p| (f, p)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_appear_from_their_version_on() {
        assert!(parameters("1", "getText").is_some());
        assert!(parameters("1", "appendText").is_none());
        assert_eq!(
            parameters("1.2.13", "appendText"),
            Some(&["padID", "text"][..])
        );
        assert_eq!(
            parameters("1.3.0", "appendText"),
            Some(&["padID", "text", "authorId"][..])
        );
        assert!(parameters("1.2.11", "restoreRevision").is_some());
        assert!(parameters("9", "getText").is_none());
        assert!(parameters("1.3.0", "nope").is_none());
        assert!(is_known(LATEST));
    }
}
