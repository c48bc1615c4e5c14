//! Texts of the CLI made comparable with Terraform's: colours taken out,
//! Terraform's development overrides warning dropped, its name for itself
//! in fleetform's words, ids and durations masked, and each run of
//! progress lines (said in whatever order operations end) sorted.

pub fn without_colours(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters final-letter.
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Terraform's development overrides warning, which only it prints.
pub fn without_overrides_warning(text: &str) -> String {
    let Some(start) = text.find("Warning: Provider development overrides are in effect") else {
        return text.to_string();
    };
    let box_start = text[..start].rfind('╷').unwrap_or(start);
    let end = text[start..]
        .find('╵')
        .map(|i| start + i + '╵'.len_utf8())
        .unwrap_or(text.len());
    // The box and the line break after it.
    let end = if text[end..].starts_with('\n') {
        end + 1
    } else {
        end
    };
    format!("{}{}", &text[..box_start], &text[end..])
}

/// What Terraform's `plan` prints before the errors that stopped it
/// planning (not before configuration errors, which fleetform's events do
/// not tell apart yet).
pub const PLANNING_FAILED: &str =
    "\nPlanning failed. fleetform encountered an error while generating this plan.\n\n";

/// Terraform's name for itself in fleetform's words; `terraform_data`
/// and other type names stay.
pub fn as_fleetform(text: &str) -> String {
    let text = text.replace("Terraform", "fleetform");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find("terraform") {
        out.push_str(&rest[..i]);
        let after = &rest[i + "terraform".len()..];
        out.push_str(if after.starts_with('_') {
            "terraform"
        } else {
            "fleetform"
        });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Ids, durations and numbers that differ from run to run, masked.
pub fn mask(line: &str) -> String {
    let mut out = line.to_string();
    if let Some(i) = out.find("[id=") {
        let end = out[i..].find(']').map(|j| i + j).unwrap_or(out.len());
        out.replace_range(i..end, "[id=ID");
    }
    if let Some(i) = out.find(" after ")
        && out[i + 7..].starts_with(|c: char| c.is_ascii_digit())
    {
        let digits = out[i + 7..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(out.len() - i - 7);
        out.replace_range(i + 7..i + 7 + digits, "N");
    }
    // A null_resource's id (a quoted run of ten digits or more) or a
    // UUID (sim objects).
    let uuid = |p: &str| {
        p.len() == 36
            && p.char_indices().all(|(i, c)| {
                if [8, 13, 18, 23].contains(&i) {
                    c == '-'
                } else {
                    c.is_ascii_hexdigit()
                }
            })
    };
    let mut masked = String::with_capacity(out.len());
    for (i, part) in out.split('"').enumerate() {
        if i > 0 {
            masked.push('"');
        }
        let id = i % 2 == 1
            && ((part.len() >= 10 && part.bytes().all(|b| b.is_ascii_digit())) || uuid(part));
        masked.push_str(if id { "ID" } else { part });
    }
    masked.trim_end().to_string()
}

/// Lines said as operations end in whatever order they end.
pub fn is_progress(line: &str) -> bool {
    [
        ": Refreshing state...",
        ": Creating...",
        ": Creation complete",
        ": Destroying...",
        ": Destruction complete",
        ": Modifying...",
        ": Modifications complete",
        ": Reading...",
        ": Read complete",
    ]
    .iter()
    .any(|p| line.contains(p))
}

/// One stream of a run, comparable: masked, each run of progress lines
/// sorted.
pub fn comparable(text: &str) -> Vec<String> {
    let text = as_fleetform(&without_overrides_warning(text)).replace(PLANNING_FAILED, "");
    let mut out = Vec::new();
    let mut progress = Vec::new();
    for line in text.lines().map(mask) {
        if is_progress(&line) {
            progress.push(line);
            continue;
        }
        progress.sort();
        out.append(&mut progress);
        out.push(line);
    }
    progress.sort();
    out.append(&mut progress);
    out
}
