//! Which files of a module directory are configuration (`.tf`, `.tf.json`,
//! not editor files), which of them are override files, and the parser
//! each needs.

use super::body::{Body, parse_file};
use super::json_body::parse_json_file;
use fleetform_shared::diag::Diagnostics;

/// Whether a file (by its path) is configuration: `.tf` (native syntax) or
/// `.tf.json`, except the names Terraform ignores as editor files: those
/// starting with `.`, ending with `~`, or starting and ending with `#`.
pub fn is_config_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ignored = name.starts_with('.')
        || name.ends_with('~')
        || (name.len() > 1 && name.starts_with('#') && name.ends_with('#'));
    !ignored && (name.ends_with(".tf") || name.ends_with(".tf.json"))
}

/// Parses one configuration file by its name: `.tf.json` is JSON.
pub(super) fn parse_config_file(name: &str, src: &str) -> (Option<Body>, Diagnostics) {
    if name.ends_with(".tf.json") {
        parse_json_file(name, src)
    } else {
        parse_file(name, src)
    }
}

/// Whether a file name (without directories) names an override file.
pub fn is_override_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name
        .strip_suffix(".tf.json")
        .or_else(|| name.strip_suffix(".tf"));
    stem.is_some_and(|s| s == "override" || s.ends_with("_override"))
}
