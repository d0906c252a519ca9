//! A JSON object whose keys keep the order a JavaScript object gives them.
//!
//! Etherpad's records are JavaScript objects serialised with `JSON.stringify`, so the bytes of a
//! stored value depend on JavaScript's property order: keys that are array indices
//! (`"0"`, `"17"`, below 2^32 − 1, no leading zero) come first in ascending numeric order, every
//! other key follows in insertion order; deleting a key and setting it again moves it to the end.
//! Maps such as `group.pads`, `author.padIDs`, `sessionIDs` or a pool's `numToAttrib` are kept in
//! this type so that a record rebuilt here is byte for byte the record Etherpad would write.

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// An object with JavaScript's key order (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsObject<V> {
    /// Array-index keys, ascending.
    indexed: Vec<(u32, V)>,
    /// Other keys, in insertion order.
    named: Vec<(String, V)>,
}

impl<V> Default for JsObject<V> {
    fn default() -> Self {
        JsObject {
            indexed: Vec::new(),
            named: Vec::new(),
        }
    }
}

/// The array index a key stands for, if JavaScript treats it as one.
fn array_index(key: &str) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = key.parse().ok()?;
    (n < u64::from(u32::MAX)).then_some(n as u32)
}

impl<V> JsObject<V> {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `key`: an existing key keeps its place, a new one takes JavaScript's place for it.
    pub fn insert(&mut self, key: &str, value: V) {
        if let Some(i) = array_index(key) {
            match self.indexed.binary_search_by_key(&i, |(k, _)| *k) {
                Ok(at) => self.indexed[at].1 = value,
                Err(at) => self.indexed.insert(at, (i, value)),
            }
        } else if let Some(slot) = self.named.iter_mut().find(|(k, _)| k == key) {
            slot.1 = value;
        } else {
            self.named.push((key.to_owned(), value));
        }
    }

    /// Deletes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        if let Some(i) = array_index(key) {
            let at = self.indexed.binary_search_by_key(&i, |(k, _)| *k).ok()?;
            Some(self.indexed.remove(at).1)
        } else {
            let at = self.named.iter().position(|(k, _)| k == key)?;
            Some(self.named.remove(at).1)
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&V> {
        if let Some(i) = array_index(key) {
            let at = self.indexed.binary_search_by_key(&i, |(k, _)| *k).ok()?;
            Some(&self.indexed[at].1)
        } else {
            self.named.iter().find(|(k, _)| k == key).map(|(_, v)| v)
        }
    }

    /// Whether `key` is set.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.indexed.len() + self.named.len()
    }

    /// Whether the object has no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The keys in JavaScript's order (`Object.keys`).
    pub fn keys(&self) -> Vec<String> {
        self.iter().map(|(k, _)| k).collect()
    }

    /// Keys and values in JavaScript's order.
    pub fn iter(&self) -> impl Iterator<Item = (String, &V)> {
        self.indexed
            .iter()
            .map(|(k, v)| (k.to_string(), v))
            .chain(self.named.iter().map(|(k, v)| (k.clone(), v)))
    }
}

impl<V: Serialize> Serialize for JsObject<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in &self.indexed {
            map.serialize_entry(&k.to_string(), v)?;
        }
        for (k, v) in &self.named {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for JsObject<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for ObjectVisitor<V> {
            type Value = JsObject<V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut object = JsObject::new();
                while let Some((k, v)) = access.next_entry::<String, V>()? {
                    object.insert(&k, v);
                }
                Ok(object)
            }
        }
        deserializer.deserialize_map(ObjectVisitor(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_keys_sort_first_and_names_keep_insertion_order() {
        let mut o = JsObject::new();
        o.insert("b", 1);
        o.insert("10", 2);
        o.insert("a", 3);
        o.insert("2", 4);
        o.insert("01", 5);
        assert_eq!(
            serde_json::to_string(&o).expect("json"),
            r#"{"2":4,"10":2,"b":1,"a":3,"01":5}"#
        );
    }

    #[test]
    fn reinserting_a_deleted_key_moves_it_last() {
        let mut o = JsObject::new();
        o.insert("x", 1);
        o.insert("y", 1);
        o.insert("x", 2);
        assert_eq!(o.keys(), vec!["x", "y"]);
        assert_eq!(o.remove("x"), Some(2));
        o.insert("x", 1);
        assert_eq!(o.keys(), vec!["y", "x"]);
    }

    #[test]
    fn parsing_keeps_the_text_order() {
        let o: JsObject<i64> = serde_json::from_str(r#"{"g.b":1,"g.a":1,"3":1}"#).expect("json");
        assert_eq!(o.keys(), vec!["3", "g.b", "g.a"]);
        assert_eq!(
            serde_json::to_string(&o).expect("json"),
            r#"{"3":1,"g.b":1,"g.a":1}"#
        );
    }

    #[test]
    fn index_limit_is_two_to_the_32_minus_2() {
        assert_eq!(array_index("4294967294"), Some(4_294_967_294));
        assert_eq!(array_index("4294967295"), None);
        assert_eq!(array_index("-1"), None);
    }
}
