//! The "in resource \"null_resource\" \"a\"" part of a diagnostic's
//! location: the header of the top-level block of the file that holds
//! the position, found from the source as Terraform finds it (only
//! top-level blocks count, and a range that starts at the very beginning
//! of a block names none, since the position looked up is the byte before
//! the range's start).

use super::body::parse_file;
use std::ops::Range;

/// The byte ranges and headers of the top-level blocks of a `.tf` file;
/// none for a file that does not parse (or is not HCL native syntax).
pub fn top_level_blocks(filename: &str, source: &str) -> Vec<(Range<usize>, String)> {
    if !filename.ends_with(".tf") && !filename.ends_with(".tftest.hcl") {
        return Vec::new();
    }
    let (Some(body), _) = parse_file(filename, source) else {
        return Vec::new();
    };
    body.blocks
        .iter()
        .map(|b| (b.range.start.byte..b.range.end.byte, b.header()))
        .collect()
}

/// The header of the block in `blocks` (from [`top_level_blocks`]) that
/// holds the byte before `start`.
pub fn context_at(blocks: &[(Range<usize>, String)], start: usize) -> Option<&str> {
    let at = start.checked_sub(1)?;
    blocks
        .iter()
        .find(|(r, _)| r.contains(&at))
        .map(|(_, h)| h.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_inside_a_top_level_block_names_that_block() {
        let src = "locals {\n  a = 1\n}\n\nresource \"null_resource\" \"b\" {\n  lifecycle {\n    x = 1\n  }\n}\n";
        let blocks = top_level_blocks("main.tf", src);
        let at = |needle: &str| context_at(&blocks, src.find(needle).unwrap());
        assert_eq!(at("a = 1"), Some("locals"));
        // Nested blocks do not count: the top-level block is named.
        assert_eq!(at("x = 1"), Some("resource \"null_resource\" \"b\""));
        // The byte before a block's first is outside it.
        assert_eq!(at("resource"), None);
        assert_eq!(context_at(&blocks, 0), None);
        assert!(top_level_blocks("main.tf", "resource {").is_empty());
        assert!(top_level_blocks("main.tf.json", "{}").is_empty());
    }
}
