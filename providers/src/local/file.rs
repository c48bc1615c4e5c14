//! `local_file` and `local_sensitive_file`: a file with the given content
//! (exactly one of `content`, `content_base64`, `source`, and for
//! `local_file` the deprecated `sensitive_content`). Every argument forces
//! replacement; a file that is gone or whose content changed outside
//! Terraform reads as gone, so the next plan creates it again.

use super::digest::{self, Digests};
use crate::defaults::plan_with_defaults;
use crate::framework::{CallResult, Resource, fail};
use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::provider::{PlanResourceChangeRequest, PlanResourceChangeResponse};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

const PLAIN_ARGS: &[&str] = &[
    "content",
    "sensitive_content",
    "content_base64",
    "source",
    "filename",
    "file_permission",
    "directory_permission",
];
const SENSITIVE_ARGS: &[&str] = &[
    "content",
    "content_base64",
    "source",
    "filename",
    "file_permission",
    "directory_permission",
];

pub struct LocalFile {
    sensitive: bool,
}

/// A permission such as `"0644"`: three or four octal digits.
pub fn parse_mode(s: &str) -> Option<u32> {
    if !(3..=4).contains(&s.len()) {
        return None;
    }
    u32::from_str_radix(s, 8).ok()
}

fn io_error<T>(what: &str, path: &str, e: io::Error) -> CallResult<T> {
    fail(
        format!("Create local file error: {what}"),
        format!("{path}: {e}"),
    )
}

impl LocalFile {
    pub fn plain() -> LocalFile {
        LocalFile { sensitive: false }
    }

    pub fn sensitive() -> LocalFile {
        LocalFile { sensitive: true }
    }

    fn args(&self) -> &'static [&'static str] {
        if self.sensitive {
            SENSITIVE_ARGS
        } else {
            PLAIN_ARGS
        }
    }

    fn content_args(&self) -> &'static [&'static str] {
        &self.args()[..self.args().len() - 3]
    }

    fn default_mode(&self) -> &'static str {
        if self.sensitive { "0700" } else { "0777" }
    }

    /// The bytes the file gets, from whichever content argument is set.
    fn content(planned: &Value) -> CallResult<Vec<u8>> {
        for name in ["content", "sensitive_content"] {
            if let Some(s) = planned.get_attr(name).as_str() {
                return Ok(s.as_bytes().to_vec());
            }
        }
        if let Some(b64) = planned.get_attr("content_base64").as_str() {
            return STANDARD
                .decode(b64)
                .or_else(|e| fail("Create local file error", format!("content_base64: {e}")));
        }
        if let Some(source) = planned.get_attr("source").as_str() {
            return std::fs::read(source).or_else(|e| io_error("reading source", source, e));
        }
        fail(
            "Create local file error",
            "one of content, content_base64 or source must be known",
        )
    }
}

#[async_trait]
impl Resource<()> for LocalFile {
    fn type_name(&self) -> &'static str {
        if self.sensitive {
            "local_sensitive_file"
        } else {
            "local_file"
        }
    }

    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        s.block.description = if self.sensitive {
            "Generates a local file with the given sensitive content.".into()
        } else {
            "Generates a local file with the given content.".into()
        };
        let a = &mut s.block.attributes;
        a.insert(
            "filename".into(),
            Attribute::new(Type::String)
                .required()
                .describe("The path to the file that will be created. Missing parent directories will be created."),
        );
        let content = |text: &str, sensitive: bool| {
            let mut attr = Attribute::new(Type::String).optional().describe(text);
            attr.sensitive = sensitive;
            attr
        };
        a.insert(
            "content".into(),
            content(
                "Content to store in the file, a UTF-8 string.",
                self.sensitive,
            ),
        );
        a.insert(
            "content_base64".into(),
            content(
                "Content to store in the file, base64 encoded bytes.",
                self.sensitive,
            ),
        );
        a.insert("source".into(), content("Path to a file to copy.", false));
        if !self.sensitive {
            let mut sc = content("Sensitive content to store in the file.", true);
            sc.deprecated = true;
            a.insert("sensitive_content".into(), sc);
        }
        for (name, what) in [
            ("file_permission", "file"),
            ("directory_permission", "directories"),
        ] {
            a.insert(
                name.into(),
                Attribute::new(Type::String).optional().computed().describe(&format!(
                    "Permissions to set for the output {what} (before umask), as octal digits. Default value is \"{}\".",
                    self.default_mode()
                )),
            );
        }
        digest::add_attributes(&mut s.block);
        s
    }

    fn replace_on_change(&self) -> &'static [&'static str] {
        self.args()
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut d = Diagnostics::new();
        let given: Vec<&Value> = self
            .content_args()
            .iter()
            .map(|n| config.get_attr(n))
            .filter(|v| !v.is_null())
            .collect();
        if given.len() != 1 && given.iter().all(|v| !v.is_unknown()) {
            d.push(Diagnostic::error(
                "Invalid Attribute Combination",
                format!(
                    "Exactly one of these attributes must be configured: [{}]",
                    self.content_args().join(",")
                ),
            ));
        }
        for name in ["file_permission", "directory_permission"] {
            if let Some(mode) = config.get_attr(name).as_str()
                && parse_mode(mode).is_none()
            {
                d.push(Diagnostic::error(
                    "Invalid Attribute Value",
                    format!("{name} must be a valid file mode (3 or 4 octal digits), got {mode:?}"),
                ));
            }
        }
        d
    }

    fn plan(&self, req: &PlanResourceChangeRequest, schema: &Schema) -> PlanResourceChangeResponse {
        let mode = Value::from(self.default_mode());
        let defaults = [
            ("file_permission", mode.clone()),
            ("directory_permission", mode),
        ];
        plan_with_defaults(req, schema, self.args(), &defaults)
    }

    async fn create(&self, _: &(), planned: &Value) -> CallResult<Value> {
        let Some(filename) = planned.get_attr("filename").as_str() else {
            return fail("Create local file error", "filename must be known");
        };
        let mode = |name| planned.get_attr(name).as_str().and_then(parse_mode);
        let (Some(file_mode), Some(dir_mode)) =
            (mode("file_permission"), mode("directory_permission"))
        else {
            return fail(
                "Create local file error",
                "file_permission and directory_permission must be valid modes",
            );
        };
        let content = Self::content(planned)?;
        let path = Path::new(filename);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(dir_mode)
                .create(dir)
                .or_else(|e| io_error("creating the directory", filename, e))?;
        }
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(file_mode)
            .open(path)
            .and_then(|mut f| io::Write::write_all(&mut f, &content))
            .or_else(|e| io_error("writing the file", filename, e))?;
        Ok(Digests::of(&content).apply_to(planned))
    }

    async fn read(&self, _: &(), state: &Value) -> CallResult<Value> {
        let Some(filename) = state.get_attr("filename").as_str() else {
            return fail("Read local file error", "the state has no filename");
        };
        match std::fs::read(filename) {
            Ok(bytes) if state.get_attr("id").as_str() == Some(&digest::sha1_hex(&bytes)) => {
                Ok(state.clone())
            }
            Ok(_) => Ok(Value::null()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Value::null()),
            Err(e) => fail("Read local file error", format!("{filename}: {e}")),
        }
    }

    async fn update(&self, _: &(), _prior: &Value, planned: &Value) -> CallResult<Value> {
        Ok(planned.clone())
    }

    async fn delete(&self, _: &(), prior: &Value) -> CallResult<()> {
        let Some(filename) = prior.get_attr("filename").as_str() else {
            return Ok(());
        };
        match std::fs::remove_file(filename) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                fail("Delete local file error", format!("{filename}: {e}"))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn plan(r: &LocalFile, prior: Value, config: Value) -> PlanResourceChangeResponse {
        let req = PlanResourceChangeRequest {
            type_name: r.type_name().into(),
            prior_state: prior,
            proposed_new_state: config.clone(),
            config,
            prior_private: vec![],
        };
        r.plan(&req, &r.schema())
    }

    #[tokio::test]
    async fn create_read_replace_and_delete_a_real_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/out.txt");
        let r = LocalFile::plain();
        let config = Value::object([
            ("filename", Value::String(path.display().to_string())),
            ("content_base64", Value::from("YWJj")),
            ("file_permission", Value::from("0640")),
        ]);
        assert!(!r.validate(&config).has_errors());
        let planned = plan(&r, Value::null(), config.clone()).planned_state;
        assert!(planned.get_attr("id").is_unknown());
        assert_eq!(
            planned.get_attr("directory_permission"),
            &Value::from("0777")
        );
        let state = r.create(&(), &planned).await.unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"abc");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert_eq!(
            state.get_attr("id"),
            &Value::from("a9993e364706816aba3e25717850c26c9cd0d89d")
        );
        assert_eq!(r.read(&(), &state).await.unwrap(), state);

        let other = plan(
            &r,
            state.clone(),
            crate::defaults::set_attr(&config, "content_base64", Value::from("eHl6")),
        );
        assert_eq!(other.requires_replace.len(), 1);
        assert!(other.planned_state.get_attr("content_sha1").is_unknown());

        std::fs::write(&path, "changed behind our back").unwrap();
        assert_eq!(r.read(&(), &state).await.unwrap(), Value::null());
        r.delete(&(), &state).await.unwrap();
        assert!(!path.exists());
        assert_eq!(r.read(&(), &state).await.unwrap(), Value::null());
        r.delete(&(), &state).await.unwrap();
    }

    #[test]
    fn exactly_one_content_argument_and_valid_modes() {
        let r = LocalFile::sensitive();
        let cfg = |pairs: Vec<(&str, Value)>| Value::object(pairs);
        assert!(
            r.validate(&cfg(vec![("filename", "f".into())]))
                .has_errors()
        );
        assert!(
            r.validate(&cfg(vec![("content", "x".into()), ("source", "y".into())]))
                .has_errors()
        );
        assert!(
            !r.validate(&cfg(vec![("content", Value::unknown())]))
                .has_errors()
        );
        assert!(
            r.validate(&cfg(vec![
                ("content", "x".into()),
                ("file_permission", "0999".into())
            ]))
            .has_errors()
        );
        assert!(
            !r.validate(&cfg(vec![
                ("content", "x".into()),
                ("file_permission", "644".into())
            ]))
            .has_errors()
        );
        assert!(r.schema().block.attributes["content"].sensitive);
        assert!(
            !r.schema()
                .block
                .attributes
                .contains_key("sensitive_content")
        );
        assert_eq!(parse_mode("0755"), Some(0o755));
        assert_eq!(parse_mode("75"), None);
    }
}
