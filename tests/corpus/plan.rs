//! The part of a saved plan the corpus compares: `show -json <plan>`'s
//! `resource_changes`, each cut down to what both tools must agree on
//! (address, mode, type, name, index, provider, actions, and the planned
//! values with every unknown one replaced by one marker, as `after_unknown`
//! says), sorted by address. What is left out, and why, is in
//! tests/corpus/README.md.
//!
//! Included by tests/tests/corpus.rs (`#[path]`).

use serde_json::{Map, Value as Json};

/// What an unknown planned value becomes, wherever it is.
pub const UNKNOWN: &str = "(known after apply)";

/// The compared view of each entry of `show -json`'s `resource_changes`.
pub fn resource_changes(show_json: &str) -> Result<Vec<Json>, String> {
    let doc: Json = serde_json::from_str(show_json)
        .map_err(|e| format!("show -json is not JSON ({e}): {show_json}"))?;
    let changes = match doc.get("resource_changes") {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Array(a)) => a,
        Some(other) => return Err(format!("resource_changes is not a list: {other}")),
    };
    let mut out: Vec<Json> = changes.iter().map(view).collect();
    out.sort_by(|a, b| a["address"].as_str().cmp(&b["address"].as_str()));
    Ok(out)
}

fn view(rc: &Json) -> Json {
    let mut v = Map::new();
    for key in [
        "address",
        "module_address",
        "mode",
        "type",
        "name",
        "index",
        "provider_name",
    ] {
        if let Some(x) = rc.get(key) {
            v.insert(key.into(), x.clone());
        }
    }
    let change = &rc["change"];
    v.insert("actions".into(), change["actions"].clone());
    let after = change.get("after").unwrap_or(&Json::Null);
    let unknown = change.get("after_unknown").unwrap_or(&Json::Null);
    v.insert("after".into(), mask(after, unknown));
    Json::Object(v)
}

/// `after` with each value that `unknown` marks `true` replaced by
/// [`UNKNOWN`]. Terraform leaves an unknown attribute out of `after` (or
/// null); marking it the same way wherever it was makes both spellings one.
pub fn mask(after: &Json, unknown: &Json) -> Json {
    match unknown {
        Json::Bool(true) => Json::from(UNKNOWN),
        Json::Object(u) if after.is_object() || (after.is_null() && has_unknown(unknown)) => {
            let mut out = after.as_object().cloned().unwrap_or_default();
            for (k, uk) in u {
                let a = out.get(k).cloned().unwrap_or(Json::Null);
                let masked = mask(&a, uk);
                if !masked.is_null() || out.contains_key(k) {
                    out.insert(k.clone(), masked);
                }
            }
            Json::Object(out)
        }
        Json::Array(u) => match after {
            Json::Array(a) => {
                let n = a.len().max(u.len());
                (0..n)
                    .map(|i| {
                        mask(
                            a.get(i).unwrap_or(&Json::Null),
                            u.get(i).unwrap_or(&Json::Null),
                        )
                    })
                    .collect()
            }
            _ => after.clone(),
        },
        _ => after.clone(),
    }
}

fn has_unknown(unknown: &Json) -> bool {
    match unknown {
        Json::Bool(b) => *b,
        Json::Object(o) => o.values().any(has_unknown),
        Json::Array(a) => a.iter().any(has_unknown),
        _ => false,
    }
}

/// The differences between recorded (or Terraform's) changes and `got`.
pub fn compare_changes(want: &[Json], got: &[Json]) -> Vec<String> {
    let addr = |c: &Json| c["address"].as_str().unwrap_or("?").to_string();
    let mut out = Vec::new();
    for w in want {
        let a = addr(w);
        match got.iter().find(|g| addr(g) == a) {
            None => out.push(format!("plan: {a} missing")),
            Some(g) => {
                let mut diffs = Vec::new();
                super::compare::diff(&format!("plan: {a}"), w, g, &mut diffs);
                let n = diffs.len();
                out.extend(diffs.into_iter().take(5));
                if n > 5 {
                    out.push(format!("plan: {a}: ... and {} more differences", n - 5));
                }
            }
        }
    }
    for g in got
        .iter()
        .filter(|g| !want.iter().any(|w| addr(w) == addr(g)))
    {
        out.push(format!("plan: {} not expected", addr(g)));
    }
    out
}

#[test]
fn unknown_values_are_masked_however_they_are_spelled() {
    let unknown = serde_json::json!({"id": true, "tags": {"b": true}, "list": [false, true]});
    // Terraform leaves an unknown attribute out; another writer may give null.
    let left_out = serde_json::json!({"name": "x", "tags": {"a": "1"}, "list": ["p", null]});
    let null = serde_json::json!({"id": null, "name": "x", "tags": {"a": "1", "b": null}, "list": ["p", null]});
    let want = serde_json::json!({
        "id": UNKNOWN, "name": "x", "tags": {"a": "1", "b": UNKNOWN}, "list": ["p", UNKNOWN]
    });
    assert_eq!(mask(&left_out, &unknown), want);
    assert_eq!(mask(&null, &unknown), want);
    // A wholly unknown value, and a delete (after null, nothing unknown).
    assert_eq!(mask(&Json::Null, &Json::Bool(true)), Json::from(UNKNOWN));
    assert_eq!(mask(&Json::Null, &serde_json::json!({})), Json::Null);
}

#[test]
fn changes_are_compared_by_address() {
    let show = r#"{"resource_changes":[
      {"address":"b.x","mode":"managed","type":"b","name":"x","provider_name":"p",
       "change":{"actions":["create"],"before":null,"after":{"v":1},"after_unknown":{"id":true},
                 "after_sensitive":{},"before_sensitive":false}},
      {"address":"a.x[0]","mode":"managed","type":"a","name":"x","index":0,"provider_name":"p",
       "change":{"actions":["create"],"after":{"v":2},"after_unknown":{}}}]}"#;
    let got = resource_changes(show).unwrap();
    assert_eq!(got[0]["address"], "a.x[0]");
    assert_eq!(got[1]["after"], serde_json::json!({"v": 1, "id": UNKNOWN}));
    assert!(compare_changes(&got, &got).is_empty());
    let mut other = got.clone();
    other[1]["after"]["v"] = Json::from(3);
    other.remove(0);
    let d = compare_changes(&got, &other);
    assert_eq!(d.len(), 2, "{d:?}");
    assert!(d[0].contains("a.x[0] missing") && d[1].contains("want 1, got 3"));
}
