//! Writing `.terraform/modules/modules.json`, the module manifest that
//! `terraform init`, `tofu init` and `fleetform init` share (the language's
//! loader reads it: `fleetform_lang::config::parse_manifest`).
//!
//! Byte for byte what Terraform's `internal/modsdir` writes: compact JSON
//! `{"Modules":[...]}`, each record with the fields in the order Key,
//! Source, Version (registry modules only), Dir, strings escaped like Go's
//! `encoding/json` (which also escapes `<`, `>` and `&`), no trailing
//! newline. Terraform writes the records in Go's map order (random); these
//! are written sorted by key, so the root record (`""`) comes first.

use fleetform_lang::config::ManifestEntry;

pub fn manifest_json(entries: &[ManifestEntry]) -> String {
    let mut sorted: Vec<&ManifestEntry> = entries.iter().collect();
    sorted.sort_by(|a, b| a.key.cmp(&b.key));
    let records: Vec<String> = sorted
        .iter()
        .map(|e| {
            let version = match &e.version {
                Some(v) => format!(",\"Version\":{}", go_json_string(v)),
                None => String::new(),
            };
            format!(
                "{{\"Key\":{},\"Source\":{}{version},\"Dir\":{}}}",
                go_json_string(&e.key),
                go_json_string(&e.source),
                go_json_string(&e.dir)
            )
        })
        .collect();
    format!("{{\"Modules\":[{}]}}", records.join(","))
}

fn go_json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_lang::config::parse_manifest;

    fn entry(key: &str, source: &str, version: Option<&str>, dir: &str) -> ManifestEntry {
        ManifestEntry {
            key: key.into(),
            source: source.into(),
            version: version.map(str::to_string),
            dir: dir.into(),
        }
    }

    #[test]
    fn written_as_terraform_writes_it_and_read_back_by_the_loader() {
        let entries = vec![
            entry(
                "vpc",
                "git::https://e.com/r.git//m?ref=v1&depth=1",
                None,
                ".terraform/modules/vpc/m",
            ),
            entry("", "", None, "."),
            entry(
                "dns",
                "registry.terraform.io/acme/dns/aws",
                Some("1.2.0"),
                ".terraform/modules/dns",
            ),
            entry("vpc.sub", "./sub", None, ".terraform/modules/vpc/m/sub"),
        ];
        let text = manifest_json(&entries);
        assert_eq!(
            text,
            concat!(
                r#"{"Modules":[{"Key":"","Source":"","Dir":"."},"#,
                r#"{"Key":"dns","Source":"registry.terraform.io/acme/dns/aws","Version":"1.2.0","Dir":".terraform/modules/dns"},"#,
                r#"{"Key":"vpc","Source":"git::https://e.com/r.git//m?ref=v1\u0026depth=1","Dir":".terraform/modules/vpc/m"},"#,
                r#"{"Key":"vpc.sub","Source":"./sub","Dir":".terraform/modules/vpc/m/sub"}]}"#
            )
        );
        let mut back = parse_manifest(&text).unwrap();
        back.sort_by(|a, b| a.key.cmp(&b.key));
        let mut want = entries;
        want.sort_by(|a, b| a.key.cmp(&b.key));
        assert_eq!(back, want);
    }
}
