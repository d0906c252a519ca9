//! The attribute pool: the pad-wide table that interns `[key, value]` attributes as numbers, so
//! changesets can say `*3` instead of `author,a.xyz`. Serialises to Etherpad's exact JSON shape
//! `{"numToAttrib":{"0":["author","a.x"]},"nextNum":1}`.

use std::collections::{BTreeMap, HashMap};

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};

/// Interns `[key, value]` attribute pairs as non-negative numbers. One per pad; it only grows.
///
/// Looking a pair up is keyed by the exact pair. (Etherpad keys its reverse index by the string
/// `"key,value"`, which conflates pairs such as `("a,b","c")` and `("a","b,c")`; this pool does
/// not.)
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AttributePool {
    num_to_attrib: BTreeMap<usize, (String, String)>,
    attrib_to_num: HashMap<String, HashMap<String, usize>>,
    next_num: usize,
}

impl AttributePool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Returns the number of `[key, value]`, adding the pair under `next_num` if it is new.
    pub fn put_attrib(&mut self, key: &str, value: &str) -> usize {
        if let Some(n) = self.lookup(key, value) {
            return n;
        }
        let n = self.next_num;
        self.next_num += 1;
        self.insert(n, key.to_owned(), value.to_owned());
        n
    }

    /// The number of `[key, value]` if the pool has it (Etherpad's `putAttrib(a, true)`).
    pub fn lookup(&self, key: &str, value: &str) -> Option<usize> {
        self.attrib_to_num.get(key)?.get(value).copied()
    }

    /// The `[key, value]` pair numbered `num`.
    pub fn get_attrib(&self, num: usize) -> Option<(&str, &str)> {
        self.num_to_attrib
            .get(&num)
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The key of attribute `num`, or `""` if there is none (Etherpad's `getAttribKey`).
    pub fn get_attrib_key(&self, num: usize) -> &str {
        self.get_attrib(num).map_or("", |(k, _)| k)
    }

    /// The value of attribute `num`, or `""` if there is none (Etherpad's `getAttribValue`).
    pub fn get_attrib_value(&self, num: usize) -> &str {
        self.get_attrib(num).map_or("", |(_, v)| v)
    }

    /// The number the next new attribute will get.
    pub fn next_num(&self) -> usize {
        self.next_num
    }

    /// How many attributes the pool holds.
    pub fn len(&self) -> usize {
        self.num_to_attrib.len()
    }

    /// Whether the pool holds no attribute.
    pub fn is_empty(&self) -> bool {
        self.num_to_attrib.is_empty()
    }

    /// Every attribute with its number, in ascending number order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &str, &str)> {
        self.num_to_attrib
            .iter()
            .map(|(n, (k, v))| (*n, k.as_str(), v.as_str()))
    }

    /// Checks the pool the way Etherpad's `AttributePool.check()` does: numbers are exactly
    /// `0..next_num` and no pair appears twice.
    pub fn check(&self) -> Result<()> {
        if self.num_to_attrib.len() != self.next_num {
            return Err(Error::BadPool(format!(
                "{} attributes but nextNum is {}",
                self.num_to_attrib.len(),
                self.next_num
            )));
        }
        for (n, (k, v)) in &self.num_to_attrib {
            if self.lookup(k, v) != Some(*n) {
                return Err(Error::BadPool(format!(
                    "attribute {n} [{k:?}, {v:?}] appears more than once"
                )));
            }
        }
        Ok(())
    }

    fn insert(&mut self, n: usize, key: String, value: String) {
        self.attrib_to_num
            .entry(key.clone())
            .or_default()
            .insert(value.clone(), n);
        self.num_to_attrib.insert(n, (key, value));
    }
}

/// Largest `nextNum` accepted from JSON: JavaScript's `Number.MAX_SAFE_INTEGER`, which also keeps
/// `next_num + 1` from overflowing.
const MAX_NEXT_NUM: usize = (1 << 53) - 1;

/// Serialises `numToAttrib` with its keys in ascending numeric order, as `JSON.stringify` does.
struct NumToAttrib<'a>(&'a BTreeMap<usize, (String, String)>);

impl Serialize for NumToAttrib<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (n, (k, v)) in self.0 {
            map.serialize_entry(&n.to_string(), &[k, v])?;
        }
        map.end()
    }
}

impl Serialize for AttributePool {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("numToAttrib", &NumToAttrib(&self.num_to_attrib))?;
        map.serialize_entry("nextNum", &self.next_num)?;
        map.end()
    }
}

/// Etherpad's JSON. Other fields are ignored: key revisions (`pad:ID:revs:N` `meta.pool`) store
/// the whole JavaScript object, whose `attribToNum` index is rebuilt here rather than trusted.
#[derive(Deserialize)]
struct RawPool {
    #[serde(rename = "numToAttrib")]
    num_to_attrib: HashMap<String, (String, String)>,
    #[serde(rename = "nextNum")]
    next_num: usize,
}

impl<'de> Deserialize<'de> for AttributePool {
    /// Reads Etherpad's JSON. Keys must be canonical decimal numbers below `nextNum`; when a pair
    /// appears under several numbers, the highest number wins for lookups (as in Etherpad).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawPool::deserialize(deserializer)?;
        if raw.next_num > MAX_NEXT_NUM {
            return Err(D::Error::custom(format!(
                "nextNum {} is beyond JavaScript's safe integers",
                raw.next_num
            )));
        }
        let mut numbered = BTreeMap::new();
        for (key, pair) in raw.num_to_attrib {
            let canonical = key == "0" || (!key.starts_with('0') && !key.is_empty());
            let n: usize = key
                .parse()
                .ok()
                .filter(|_| canonical && key.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| D::Error::custom(format!("attribute number {key:?} is invalid")))?;
            if n >= raw.next_num {
                return Err(D::Error::custom(format!(
                    "attribute number {n} is not below nextNum {}",
                    raw.next_num
                )));
            }
            numbered.insert(n, pair);
        }
        let mut pool = AttributePool {
            next_num: raw.next_num,
            ..AttributePool::default()
        };
        for (n, (k, v)) in numbered {
            pool.insert(n, k, v);
        }
        Ok(pool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn puts_and_gets() {
        let mut p = AttributePool::new();
        assert_eq!(p.put_attrib("author", "a.x"), 0);
        assert_eq!(p.put_attrib("bold", "true"), 1);
        assert_eq!(p.put_attrib("author", "a.x"), 0);
        assert_eq!(p.lookup("bold", "true"), Some(1));
        assert_eq!(p.lookup("bold", ""), None);
        assert_eq!(p.get_attrib(1), Some(("bold", "true")));
        assert_eq!(p.get_attrib(2), None);
        assert_eq!(p.get_attrib_key(0), "author");
        assert_eq!(p.get_attrib_value(0), "a.x");
        assert_eq!(p.get_attrib_key(9), "");
        assert_eq!(p.next_num(), 2);
        assert_eq!(p.len(), 2);
        p.check().unwrap();
    }

    #[test]
    fn json_has_etherpads_exact_shape() {
        let mut p = AttributePool::new();
        p.put_attrib("author", "a.x");
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"numToAttrib":{"0":["author","a.x"]},"nextNum":1}"#
        );
        for i in 0..11 {
            p.put_attrib("k", &i.to_string());
        }
        let json = serde_json::to_string(&p).unwrap();
        // Numeric, not lexicographic, key order: "2" comes before "10".
        assert!(json.find(r#""2":"#).unwrap() < json.find(r#""10":"#).unwrap());
        let back: AttributePool = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn refuses_inconsistent_json() {
        for bad in [
            r#"{"numToAttrib":{"1":["a","b"]},"nextNum":1}"#,
            r#"{"numToAttrib":{"01":["a","b"]},"nextNum":5}"#,
            r#"{"numToAttrib":{"x":["a","b"]},"nextNum":5}"#,
            r#"{"numToAttrib":{"0":["a"]},"nextNum":1}"#,
            r#"{"numToAttrib":{"0":["a",1]},"nextNum":1}"#,
            r#"{"numToAttrib":{}}"#,
            r#"{"numToAttrib":{},"nextNum":-1}"#,
            r#"{"numToAttrib":{},"nextNum":18446744073709551615}"#,
        ] {
            assert!(serde_json::from_str::<AttributePool>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reads_key_revision_pools_with_their_reverse_index() {
        let json = r#"{"numToAttrib":{"0":["author","a.x"],"1":["bold","true"]},
            "attribToNum":{"author,a.x":0,"bold,true":1},"nextNum":2}"#;
        let p: AttributePool = serde_json::from_str(json).unwrap();
        assert_eq!(p.lookup("bold", "true"), Some(1));
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"numToAttrib":{"0":["author","a.x"],"1":["bold","true"]},"nextNum":2}"#
        );
    }

    #[test]
    fn check_finds_holes_and_duplicates() {
        let holes: AttributePool =
            serde_json::from_str(r#"{"numToAttrib":{"1":["a","b"]},"nextNum":2}"#).unwrap();
        assert!(holes.check().is_err());
        let dup: AttributePool =
            serde_json::from_str(r#"{"numToAttrib":{"0":["a","b"],"1":["a","b"]},"nextNum":2}"#)
                .unwrap();
        assert!(dup.check().is_err());
        assert_eq!(dup.lookup("a", "b"), Some(1));
    }
}
