//! The name decider (pure): claiming and releasing a name, the alternatives a restore tries,
//! and how names compare (case-folded) in the stream key.

use crate::name::state::NameState;
use palimpsest_events::resources::{NameEvent, Parent, ResourceType};

/// The stream key of a name: `<type>@<parent>/<name>`, e.g. `file@page:12/photo.png`, with
/// the name case-folded: Deki's names compare without regard to case (its MySQL columns use a
/// case-insensitive collation), so `Photo.PNG` and `photo.png` are one name under a parent,
/// held by one resource, which keeps the spelling it was given.
pub fn key(res_type: ResourceType, parent: Parent, name: &str) -> String {
    format!("{}@{parent}/{}", res_type.word(), fold(name))
}

/// `name` as names are compared: case-folded (Unicode lowercase).
pub fn fold(name: &str) -> String {
    name.to_lowercase()
}

/// Takes a free name for `res_id` (a name it already holds is no change).
pub fn claim(state: &NameState, res_id: i64) -> Result<Option<NameEvent>, i64> {
    match state.holder {
        None => Ok(Some(NameEvent::NameClaimed { res_id })),
        Some(holder) if holder == res_id => Ok(None),
        Some(holder) => Err(holder),
    }
}

/// Gives a name back (nothing if `res_id` does not hold it).
pub fn release(state: &NameState, res_id: i64) -> Option<NameEvent> {
    (state.holder == Some(res_id)).then_some(NameEvent::NameReleased { res_id })
}

/// The `n`-th alternative of `name` tried when a restore finds its name taken:
/// `photo.png` → `photo(2).png`, `notes` → `notes(2)`.
/// The stem is shortened so the result stays within [`MAX_NAME`] characters.
pub fn alternative(name: &str, n: u32) -> String {
    let (stem, extension) = match name.rfind('.') {
        Some(dot) if dot > 0 => (&name[..dot], &name[dot..]),
        _ => (name, ""),
    };
    let suffix = format!("({n}){extension}");
    let room = MAX_NAME.saturating_sub(suffix.chars().count());
    let stem: String = stem.chars().take(room).collect();
    format!("{stem}{suffix}").chars().take(MAX_NAME).collect()
}

/// Longest name Deki stores (`resrev_name varchar(255)`), in characters.
pub const MAX_NAME: usize = 255;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name::state::{NameState, evolve};

    #[test]
    fn a_name_is_held_by_one_live_resource_until_released() {
        let free = NameState::default();
        let claimed = claim(&free, 3).expect("free").expect("event");
        let held = evolve(free, &claimed);
        assert_eq!(claim(&held, 4), Err(3));
        assert_eq!(claim(&held, 3), Ok(None));
        assert_eq!(release(&held, 4), None);
        let released = release(&held, 3).expect("held");
        assert_eq!(evolve(held, &released).holder, None);
    }

    #[test]
    fn alternatives_keep_the_extension() {
        assert_eq!(alternative("photo.png", 2), "photo(2).png");
        assert_eq!(alternative("notes", 3), "notes(3)");
        assert_eq!(alternative(".hidden", 2), ".hidden(2)");
        let long = format!("{}.png", "x".repeat(251));
        assert_eq!(alternative(&long, 12).chars().count(), MAX_NAME);
        assert_eq!(
            key(ResourceType::File, Parent::Page(12), "a/b"),
            "file@page:12/a/b"
        );
    }

    #[test]
    fn names_differing_only_in_case_are_one_name() {
        let page = Parent::Page(3);
        assert_eq!(
            key(ResourceType::File, page, "Photo.PNG"),
            key(ResourceType::File, page, "photo.png")
        );
        assert_eq!(
            key(ResourceType::Property, page, "ÉTÉ"),
            key(ResourceType::Property, page, "été")
        );
        assert_ne!(
            key(ResourceType::File, page, "a.png"),
            key(ResourceType::Property, page, "a.png")
        );
    }
}
