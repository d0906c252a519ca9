//! Deki's elements for files, properties and revisions, built from revisions alone (so a
//! write's answer is determined by what it decided).

use super::doc::Element;
use crate::read::RevisionRow;
use crate::resource::etag;
use palimpsest_events::resources::{Parent, Revision, mask};

/// The API's path prefix inside the context.
pub const API: &str = "/resources/@api/deki";

const MASK_NAMES: [(u8, &str); 6] = [
    (mask::CONTENT, "CONTENT"),
    (mask::NAME, "NAME"),
    (mask::LANGUAGE, "LANGUAGE"),
    (mask::META, "META"),
    (mask::DELETEFLAG, "DELETEFLAG"),
    (mask::PARENT, "PARENT"),
];

/// `CONTENT,NAME` for a change mask.
pub fn mask_names(change_mask: u8) -> String {
    MASK_NAMES
        .iter()
        .filter(|(bit, _)| change_mask & bit != 0)
        .map(|(_, name)| *name)
        .collect::<Vec<_>>()
        .join(",")
}

/// Parses a `changefilter` (`CONTENT,NAME`, any case); the unknown word on failure.
pub fn parse_filter(text: &str) -> Result<u8, String> {
    text.split(',')
        .map(str::trim)
        .filter(|word| !word.is_empty())
        .try_fold(0u8, |acc, word| {
            MASK_NAMES
                .iter()
                .find(|(_, name)| name.eq_ignore_ascii_case(word))
                .map(|(bit, _)| acc | bit)
                .ok_or_else(|| word.to_owned())
        })
}

/// What a revision is shown with besides its own columns.
#[derive(Debug, Clone, Copy)]
pub struct Shown {
    /// Hidden revision.
    pub hidden: bool,
    /// The resource's head revision number.
    pub head_rev: i64,
}

impl Shown {
    /// A revision shown as the head.
    pub fn head(revision: &Revision) -> Shown {
        Shown {
            hidden: false,
            head_rev: revision.rev,
        }
    }

    /// As the read model says.
    pub fn of(row: &RevisionRow) -> Shown {
        Shown {
            hidden: row.hidden,
            head_rev: row.head_rev,
        }
    }
}

fn parent_element(parent: Parent) -> Element {
    match parent {
        Parent::Page(id) => Element::new("page.parent").attr("id", id),
        Parent::File(id) => Element::new("file.parent").attr("id", id),
        Parent::User(id) => Element::new("user.parent").attr("id", id),
        Parent::Site => Element::new("site.parent"),
    }
}

/// `<file>`: a file revision.
pub fn file(revision: &Revision, shown: Shown) -> Element {
    file_named("file", revision, shown)
}

/// A file as a write answers it: its head revision, shown as the head.
pub fn file_head(head: &Revision) -> Element {
    file(head, Shown::head(head))
}

/// A file element under another name (`file.archive`).
pub fn file_named(name: &str, revision: &Revision, shown: Shown) -> Element {
    let id = revision.res_id;
    let head = revision.rev == shown.head_rev;
    let content_href = if head {
        format!("{API}/files/{id}")
    } else {
        format!("{API}/files/{id}?revision={}", revision.rev)
    };
    let mut element = Element::new(name)
        .attr("id", id)
        .attr("revision", revision.rev)
        .attr("res-id", id)
        .attr("href", format!("{API}/files/{id}/info"))
        .attr("res-is-head", head)
        .attr("res-is-deleted", revision.deleted)
        .attr("res-rev-is-hidden", shown.hidden)
        .attr("res-contents-id", revision.content.rescontent_id)
        .attr("res-change-mask", mask_names(revision.change_mask))
        .attr("etag", etag(revision))
        .leaf("filename", revision.name.clone())
        .child(
            Element::new("contents")
                .attr("type", revision.mimetype.clone())
                .attr("size", revision.content.size)
                .attr("href", content_href),
        )
        .leaf("date.created", iso(revision))
        .child(Element::new("user.createdby").attr("id", revision.user_id))
        .child(Element::new("revisions").attr("count", shown.head_rev))
        .child(parent_element(revision.parent));
    if let Some(description) = &revision.change_description {
        element = element.leaf("change-description", description.clone());
    }
    element
}

/// A property as a write answers it: its head revision, shown as the head.
pub fn property_head(head: &Revision) -> Element {
    property(head, Shown::head(head))
}

/// `<property>`: a property revision; `href` is its path under the parent.
pub fn property(revision: &Revision, shown: Shown) -> Element {
    let href = format!(
        "{}/{}",
        properties_href(revision.parent),
        encode(&revision.name)
    );
    let mut element = Element::new("property")
        .attr("name", revision.name.clone())
        .attr("href", format!("{href}/info"))
        .attr("etag", etag(revision))
        .attr("revision", revision.rev)
        .attr("res-id", revision.res_id)
        .attr("res-is-head", revision.rev == shown.head_rev)
        .attr("res-rev-is-hidden", shown.hidden)
        .child(
            Element::new("contents")
                .attr("type", revision.mimetype.clone())
                .attr("size", revision.content.size)
                .attr("href", href),
        )
        .leaf("date.modified", iso(revision))
        .child(Element::new("user.modified").attr("id", revision.user_id));
    if let Some(description) = &revision.change_description {
        element = element.leaf("change-description", description.clone());
    }
    element
}

/// The path of a parent's properties.
pub fn properties_href(parent: Parent) -> String {
    match parent {
        Parent::Page(id) => format!("{API}/pages/{id}/properties"),
        Parent::File(id) => format!("{API}/files/{id}/properties"),
        Parent::User(id) => format!("{API}/users/{id}/properties"),
        Parent::Site => format!("{API}/site/properties"),
    }
}

/// A list element with `count`.
pub fn list(name: &str, items: Vec<Element>) -> Element {
    Element::new(name)
        .attr("count", items.len())
        .children(items)
}

fn iso(revision: &Revision) -> String {
    revision.timestamp.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Percent-encodes a name for a path segment.
pub fn encode(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_filters_name_deki_mask_bits() {
        assert_eq!(
            parse_filter("content, name"),
            Ok(mask::CONTENT | mask::NAME)
        );
        assert_eq!(parse_filter("DELETEFLAG,PARENT"), Ok(48));
        assert_eq!(parse_filter("size"), Err("size".into()));
        assert_eq!(
            mask_names(mask::NAME | mask::CONTENT | mask::PARENT),
            "CONTENT,NAME,PARENT"
        );
    }
}
