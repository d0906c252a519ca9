//! The operations an OpenAPI document describes, as the walk compares them with a table.

use serde_json::Value;
use std::collections::BTreeSet;

/// The methods an OpenAPI path item may hold.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "patch", "head", "options", "trace",
];

/// Every operation of `document` as `METHOD /server-prefix/path`.
pub fn operations(document: &Value) -> BTreeSet<String> {
    let prefix = document["servers"][0]["url"]
        .as_str()
        .unwrap_or("")
        .trim_end_matches('/');
    let mut found = BTreeSet::new();
    let Some(paths) = document["paths"].as_object() else {
        return found;
    };
    for (path, item) in paths {
        for method in METHODS {
            if item.get(method).is_some() {
                found.insert(format!("{} {prefix}{path}", method.to_uppercase()));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn operations_carry_the_servers_prefix_and_skip_shared_parameters() {
        let document = json!({
            "servers": [{"url": "/docs"}],
            "paths": {"/{db}": {"parameters": [], "get": {}, "put": {}}, "/": {"get": {}}}
        });
        let found: Vec<String> = operations(&document).into_iter().collect();
        assert_eq!(found, ["GET /docs/", "GET /docs/{db}", "PUT /docs/{db}"]);
    }
}
