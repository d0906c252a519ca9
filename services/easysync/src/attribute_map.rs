//! An operation's attributes as a key → value map, which is how Etherpad merges them: a later
//! value for a key replaces the earlier one, and an empty value can mean "remove this key".

use std::cmp::Ordering;

use crate::attribs::decode_attribs;
use crate::base36::num_to_string;
use crate::error::{Error, Result};
use crate::pool::AttributePool;

/// Attributes keyed by name, at most one value per key (Etherpad's `AttributeMap`).
///
/// Its attribute string lists the attributes sorted by key, which is Etherpad's canonical order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AttributeMap {
    entries: Vec<(String, String)>,
}

impl AttributeMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The attributes named by an attribute string; fails if a number is not in `pool`.
    pub fn from_attribs(attribs: &str, pool: &AttributePool) -> Result<Self> {
        let mut map = Self::new();
        map.update_from_attribs(attribs, false, pool)?;
        Ok(map)
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Sets `key` to `value`, replacing any earlier value.
    pub fn set(&mut self, key: &str, value: &str) {
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => value.clone_into(&mut entry.1),
            None => self.entries.push((key.to_owned(), value.to_owned())),
        }
    }

    /// Removes `key` if present.
    pub fn remove(&mut self, key: &str) {
        self.entries.retain(|(k, _)| k != key);
    }

    /// Applies `[key, value]` pairs in order; with `empty_value_is_delete`, an empty value
    /// removes the key instead of setting it to `""`.
    pub fn update<'a>(
        &mut self,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
        empty_value_is_delete: bool,
    ) {
        for (k, v) in pairs {
            if v.is_empty() && empty_value_is_delete {
                self.remove(k);
            } else {
                self.set(k, v);
            }
        }
    }

    /// Applies the attributes of an attribute string, as [`AttributeMap::update`].
    pub fn update_from_attribs(
        &mut self,
        attribs: &str,
        empty_value_is_delete: bool,
        pool: &AttributePool,
    ) -> Result<()> {
        for n in decode_attribs(attribs)? {
            let (k, v) = pool
                .get_attrib(n)
                .ok_or_else(|| Error::UnknownAttribute(num_to_string(n)))?;
            if v.is_empty() && empty_value_is_delete {
                self.remove(k);
            } else {
                self.set(k, v);
            }
        }
        Ok(())
    }

    /// The attributes, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// How many keys are set.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The canonical attribute string, adding any new pair to `pool`.
    pub fn to_attribs(&self, pool: &mut AttributePool) -> String {
        let mut out = String::new();
        for (k, v) in self.sorted() {
            out.push('*');
            out.push_str(&num_to_string(pool.put_attrib(k, v)));
        }
        out
    }

    /// The canonical attribute string when every pair is already in `pool` (as it always is when
    /// the pairs came from the pool); fails otherwise.
    pub(crate) fn to_attribs_in(&self, pool: &AttributePool) -> Result<String> {
        let mut out = String::new();
        for (k, v) in self.sorted() {
            let n = pool
                .lookup(k, v)
                .ok_or_else(|| Error::UnknownAttribute(format!("[{k:?}, {v:?}]")))?;
            out.push('*');
            out.push_str(&num_to_string(n));
        }
        Ok(out)
    }

    fn sorted(&self) -> Vec<(&str, &str)> {
        let mut pairs: Vec<(&str, &str)> = self.iter().collect();
        pairs.sort_by(|a, b| js_cmp(a.0, b.0));
        pairs
    }
}

/// Builds the attribute string for `[key, value]` pairs put on an operation (Etherpad's
/// `makeAttribsString`): for an insert (`for_insert`), empty values are dropped; for a keep they
/// mean "remove this attribute". New pairs are added to `pool`.
pub fn make_attribs_string(
    pairs: &[(&str, &str)],
    for_insert: bool,
    pool: &mut AttributePool,
) -> String {
    let mut map = AttributeMap::new();
    for &(k, v) in pairs {
        if v.is_empty() && for_insert {
            map.remove(k);
        } else {
            pool.put_attrib(k, v);
            map.set(k, v);
        }
    }
    map.to_attribs(pool)
}

/// Compares strings as JavaScript's `<` does: by UTF-16 code units.
pub(crate) fn js_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool_of(pairs: &[(&str, &str)]) -> AttributePool {
        let mut p = AttributePool::new();
        for (k, v) in pairs {
            p.put_attrib(k, v);
        }
        p
    }

    #[test]
    fn make_attribs_string_matches_etherpad_vectors() {
        // Etherpad easysync-other spec, "make attribs string" #1..#4.
        let mut p = pool_of(&[("bold", "")]);
        assert_eq!(make_attribs_string(&[("bold", "")], true, &mut p), "");
        let mut p = pool_of(&[("abc", "def"), ("bold", "")]);
        assert_eq!(make_attribs_string(&[("bold", "")], false, &mut p), "*1");
        let mut p = pool_of(&[("abc", "def"), ("bold", "true")]);
        assert_eq!(
            make_attribs_string(&[("abc", "def"), ("bold", "true")], true, &mut p),
            "*0*1"
        );
        assert_eq!(
            make_attribs_string(&[("bold", "true"), ("abc", "def")], true, &mut p),
            "*0*1"
        );
    }

    #[test]
    fn op_attribute_value_matches_etherpad_vectors() {
        // Etherpad easysync-other spec, "opAttributeValue".
        let p = pool_of(&[("name", "david"), ("color", "green")]);
        let get = |attribs: &str, key: &str| {
            AttributeMap::from_attribs(attribs, &p)
                .unwrap()
                .get(key)
                .unwrap_or("")
                .to_owned()
        };
        assert_eq!(get("*0*1", "name"), "david");
        assert_eq!(get("*0", "name"), "david");
        assert_eq!(get("*1", "name"), "");
        assert_eq!(get("", "name"), "");
        assert_eq!(get("*0*1", "color"), "green");
        assert_eq!(get("*1", "color"), "green");
        assert_eq!(get("*0", "color"), "");
        assert_eq!(get("", "color"), "");
    }

    #[test]
    fn unknown_numbers_are_errors() {
        let p = pool_of(&[("a", "b")]);
        assert_eq!(
            AttributeMap::from_attribs("*1", &p),
            Err(Error::UnknownAttribute("1".into()))
        );
    }

    #[test]
    fn js_order_is_utf16_order() {
        // U+FF61 sorts before U+10000 by code point but after it by UTF-16 unit (0xD800).
        assert_eq!(js_cmp("\u{ff61}", "\u{10000}"), Ordering::Greater);
        assert_eq!("\u{ff61}".cmp("\u{10000}"), Ordering::Less);
        assert_eq!(js_cmp("a", "b"), Ordering::Less);
    }
}
