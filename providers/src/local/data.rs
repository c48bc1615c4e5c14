//! The `local_file` and `local_sensitive_file` data sources: read a file's
//! content (as text and as base64) and its hashes.

use super::digest::{self, Digests};
use crate::defaults::set_attr;
use crate::framework::{CallResult, DataSource, fail};
use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

pub struct LocalFileData {
    sensitive: bool,
}

impl LocalFileData {
    pub fn plain() -> LocalFileData {
        LocalFileData { sensitive: false }
    }

    pub fn sensitive() -> LocalFileData {
        LocalFileData { sensitive: true }
    }
}

#[async_trait]
impl DataSource<()> for LocalFileData {
    fn type_name(&self) -> &'static str {
        if self.sensitive {
            "local_sensitive_file"
        } else {
            "local_file"
        }
    }

    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        s.block.description = "Reads a file from the local filesystem.".into();
        let a = &mut s.block.attributes;
        a.insert(
            "filename".into(),
            Attribute::new(Type::String)
                .required()
                .describe("Path to the file that will be read."),
        );
        for (name, text) in [
            (
                "content",
                "Raw content of the file that was read, as UTF-8 encoded string.",
            ),
            (
                "content_base64",
                "Base64 encoded version of the file content.",
            ),
        ] {
            let mut attr = Attribute::new(Type::String).computed().describe(text);
            attr.sensitive = self.sensitive;
            a.insert(name.into(), attr);
        }
        digest::add_attributes(&mut s.block);
        s
    }

    async fn read(&self, _: &(), config: &Value) -> CallResult<Value> {
        let Some(filename) = config.get_attr("filename").as_str() else {
            return fail(
                "Read local file data source error",
                "filename must be a known string",
            );
        };
        let bytes = match std::fs::read(filename) {
            Ok(b) => b,
            Err(e) => {
                return fail(
                    "Read local file data source error",
                    format!("The file at given path cannot be read: {filename}: {e}"),
                );
            }
        };
        let v = set_attr(
            config,
            "content",
            Value::String(String::from_utf8_lossy(&bytes).into_owned()),
        );
        let v = set_attr(&v, "content_base64", Value::String(STANDARD.encode(&bytes)));
        Ok(Digests::of(&bytes).apply_to(&v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_content_and_hashes_and_fails_on_a_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.txt");
        std::fs::write(&path, "abc").unwrap();
        let config = Value::object([("filename", Value::String(path.display().to_string()))]);
        let v = LocalFileData::plain().read(&(), &config).await.unwrap();
        assert_eq!(v.get_attr("content"), &Value::from("abc"));
        assert_eq!(v.get_attr("content_base64"), &Value::from("YWJj"));
        assert_eq!(
            v.get_attr("id"),
            &Value::from("a9993e364706816aba3e25717850c26c9cd0d89d")
        );
        assert_eq!(
            v.get_attr("content_md5"),
            &Value::from("900150983cd24fb0d6963f7d28e17f72")
        );
        std::fs::remove_file(&path).unwrap();
        assert!(LocalFileData::sensitive().read(&(), &config).await.is_err());
        assert!(LocalFileData::sensitive().schema().block.attributes["content"].sensitive);
    }
}
