//! The plan file format (`plan -out=FILE`), in one place for every
//! process that reads or writes one: the saved plan's MessagePack encoding
//! ([`PLAN_FILE_FORMAT`]), LZ4-compressed in an envelope that says so
//! ([`PLAN_FILE_FORMAT_COMPRESSED`]), and sealed with the encryption
//! settings when a key is set ([`sealed`], [`open_sealed`]: plan files hold
//! resource values, so they are encrypted as states are).

use super::Plan;
use crate::seal::{SealError, Sealer};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A plan file's bytes as written: the plan's encoding ([`SavedPlan::encode`])
/// sealed by `sealer` (encrypted when it has a key). `what` names the file
/// in errors.
pub fn sealed(sealer: &Sealer, what: &str, saved: &SavedPlan) -> Result<Vec<u8>, SealError> {
    sealer.seal(what, saved.encode())
}

/// A plan file's content from its bytes: opened by `sealer` (decrypted when
/// it was written encrypted), then decoded ([`SavedPlan::decode`]).
pub fn open_sealed(sealer: &Sealer, what: &str, bytes: &[u8]) -> Result<SavedPlan, String> {
    let plain = sealer.open(what, bytes).map_err(|e| e.to_string())?;
    SavedPlan::decode(&plain)
}

/// A plan file (`plan -out=FILE`): the plan with the configuration it was
/// made from, so `apply FILE` applies exactly it. The final variable values
/// are in the plan ([`Plan::variables`]); however they were given (files,
/// environment, `-var`), applying uses those.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedPlan {
    pub format: String,
    pub workspace: String,
    pub plan: Plan,
    pub files: BTreeMap<String, String>,
    /// The module directories' other files (see `RunRequest::data_files`).
    #[serde(default)]
    pub data_files: BTreeMap<String, crate::wire::Blob>,
}

/// Marks plan files so other files are refused with a clear message, and
/// names the plan's own encoding: `fleetform-plan/3` added the schema
/// shapes ([`Plan::shapes`]).
pub const PLAN_FILE_FORMAT: &str = "fleetform-plan/3";

/// The plan's encoding before it carried shapes: still read, its plans
/// drawn without them.
pub const PLAN_FILE_FORMAT_V1: &str = "fleetform-plan/1";

/// The bytes a file must start with to be told a plan file by
/// [`SavedPlan::is_plan_file`]: enough for the map's header, its first key
/// and the format's family.
pub const PLAN_FILE_SNIFF_BYTES: usize = 32;

impl SavedPlan {
    /// Whether `prefix` (a file's first [`PLAN_FILE_SNIFF_BYTES`] or more)
    /// is the start of a fleetform plan file of any format version: a
    /// MessagePack map whose first entry is `format` with a value in the
    /// `fleetform-plan/` family ([`SavedPlan::encode`] writes the fields by
    /// name, `format` first). Only the prefix is read, so a large file is
    /// told without reading it all.
    pub fn is_plan_file(prefix: &[u8]) -> bool {
        plan_file_format(prefix).is_some_and(|f| f.starts_with("fleetform-plan/"))
    }

    pub fn new(workspace: &str, plan: Plan, files: BTreeMap<String, String>) -> SavedPlan {
        SavedPlan {
            format: PLAN_FILE_FORMAT.to_string(),
            workspace: workspace.to_string(),
            plan,
            files,
            data_files: BTreeMap::new(),
        }
    }

    /// The plan file's bytes: a [`PLAN_FILE_FORMAT_COMPRESSED`] envelope
    /// around the plan's own encoding ([`PLAN_FILE_FORMAT`]).
    pub fn encode(&self) -> Vec<u8> {
        let body = rmp_serde::to_vec_named(self).expect("plans are always serialisable");
        let envelope = Envelope {
            format: PLAN_FILE_FORMAT_COMPRESSED.to_string(),
            body: crate::wire::Blob(lz4_flex::compress_prepend_size(&body)),
        };
        rmp_serde::to_vec_named(&envelope).expect("an envelope is always serialisable")
    }

    /// Reads a plan file of either format: [`PLAN_FILE_FORMAT`] as written
    /// before plan files were compressed, or its compressed envelope.
    pub fn decode(bytes: &[u8]) -> Result<SavedPlan, String> {
        let not_plan = || "the file is not a fleetform plan file".to_string();
        let format = plan_file_format(bytes).ok_or_else(not_plan)?;
        let body: std::borrow::Cow<'_, [u8]> = match format {
            PLAN_FILE_FORMAT | PLAN_FILE_FORMAT_V1 => bytes.into(),
            PLAN_FILE_FORMAT_COMPRESSED => {
                let envelope: Envelope = rmp_serde::from_slice(bytes).map_err(|_| not_plan())?;
                decompress(&envelope.body.0)?.into()
            }
            other => {
                return Err(format!(
                    "unsupported plan file format {other:?} (this fleetform reads {PLAN_FILE_FORMAT_V1:?}, {PLAN_FILE_FORMAT_COMPRESSED:?} and {PLAN_FILE_FORMAT:?})"
                ));
            }
        };
        let p: SavedPlan = rmp_serde::from_slice(&body).map_err(|_| not_plan())?;
        if p.format != PLAN_FILE_FORMAT && p.format != PLAN_FILE_FORMAT_V1 {
            return Err(format!(
                "unsupported plan format {:?} inside a {format:?} plan file",
                p.format
            ));
        }
        Ok(p)
    }
}

/// The plan file format written: the plan's own encoding
/// ([`PLAN_FILE_FORMAT`]) compressed with LZ4 in an envelope that says so.
/// A plan repeats its field names and addresses for every instance: 441
/// bytes an instance of the bench's four-attribute resource uncompressed,
/// 12 compressed (1,000 instances; 1.1 MB for 100,000).
pub const PLAN_FILE_FORMAT_COMPRESSED: &str = "fleetform-plan/2";

/// A plan file of [`PLAN_FILE_FORMAT_COMPRESSED`].
#[derive(Serialize, Deserialize)]
struct Envelope {
    format: String,
    /// An LZ4 block of the plan's encoding, its length first (4 bytes,
    /// little-endian).
    body: crate::wire::Blob,
}

/// LZ4 writes no more than this many bytes for one it reads (its longest
/// match run): a longer length in front of a block is damage, refused
/// before anything is allocated for it.
const LZ4_MAX_RATIO: usize = 255;

fn decompress(block: &[u8]) -> Result<Vec<u8>, String> {
    let damaged = |why: &str| format!("the plan file is damaged ({why})");
    let claimed = block
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or_else(|| damaged("its compressed body is cut short"))?;
    if claimed > block.len().saturating_mul(LZ4_MAX_RATIO) {
        return Err(damaged("its compressed body claims more than it can hold"));
    }
    lz4_flex::decompress_size_prepended(block).map_err(|e| damaged(&e.to_string()))
}

/// The `format` a plan file's bytes start with, if they start like one:
/// a MessagePack map whose first entry is `format` with a string value
/// ([`SavedPlan::encode`] writes the fields by name, `format` first).
fn plan_file_format(bytes: &[u8]) -> Option<&str> {
    let rest = match bytes.first() {
        Some(0x80..=0x8f) => &bytes[1..],
        Some(0xde) => bytes.get(3..)?,
        Some(0xdf) => bytes.get(5..)?,
        _ => return None,
    };
    let rest = rest.strip_prefix(b"\xa6format")?;
    let (len, value) = match *rest.first()? {
        b @ 0xa0..=0xbf => (usize::from(b & 0x1f), &rest[1..]),
        0xd9 => (usize::from(*rest.get(1)?), rest.get(2..)?),
        _ => return None,
    };
    std::str::from_utf8(value.get(..len)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Action;
    use crate::plan::tests::change;

    /// A plan file is told from its first bytes, whatever it holds; other
    /// files are not taken for one.
    #[test]
    fn a_plan_file_is_told_from_its_first_bytes() {
        let mut saved = SavedPlan::new(
            "default",
            Plan {
                changes: vec![change("null_resource.a", Action::Create)],
                ..Plan::default()
            },
            BTreeMap::from([("main.tf".to_string(), "x".repeat(100_000))]),
        );
        saved
            .data_files
            .insert("blob.bin".to_string(), crate::wire::Blob(vec![7; 70_000]));
        let bytes = saved.encode();
        assert!(SavedPlan::is_plan_file(&bytes[..PLAN_FILE_SNIFF_BYTES]));
        assert!(SavedPlan::is_plan_file(&bytes));
        // A plan file written before they were compressed, and one of a
        // later version, are plan files too.
        let first = rmp_serde::to_vec_named(&saved).unwrap();
        assert!(SavedPlan::is_plan_file(&first[..PLAN_FILE_SNIFF_BYTES]));
        saved.format = "fleetform-plan/9".to_string();
        let later = rmp_serde::to_vec_named(&saved).unwrap();
        assert!(SavedPlan::is_plan_file(&later[..PLAN_FILE_SNIFF_BYTES]));
        // Cut short, or anything else: not one.
        assert!(!SavedPlan::is_plan_file(&bytes[..10]));
        assert!(!SavedPlan::is_plan_file(b""));
        assert!(!SavedPlan::is_plan_file(
            b"{\"format\": \"fleetform-plan/1\"}"
        ));
        assert!(!SavedPlan::is_plan_file(b"PK\x03\x04tfplan"));
        let other = rmp_serde::to_vec_named(&BTreeMap::from([("format", "zip")])).unwrap();
        assert!(!SavedPlan::is_plan_file(&other));
        let unnamed = rmp_serde::to_vec(&saved).unwrap();
        assert!(!SavedPlan::is_plan_file(&unnamed));
    }

    fn saved_plan(instances: usize) -> SavedPlan {
        let changes = (0..instances)
            .map(|i| change(&format!("null_resource.n[{i}]"), Action::Create))
            .collect();
        SavedPlan::new(
            "default",
            Plan {
                changes,
                ..Plan::default()
            },
            BTreeMap::from([("main.tf".to_string(), "resource {}".to_string())]),
        )
    }

    /// Plan files are written compressed and read back the same; one
    /// written before they were compressed still reads.
    #[test]
    fn plan_files_are_compressed_and_the_first_format_still_reads() {
        let saved = saved_plan(1000);
        let bytes = saved.encode();
        assert_eq!(SavedPlan::decode(&bytes).unwrap(), saved);
        let first = rmp_serde::to_vec_named(&saved).unwrap();
        assert_eq!(SavedPlan::decode(&first).unwrap(), saved);
        // A plan of the first format, which had no shapes.
        let v1 = SavedPlan {
            format: PLAN_FILE_FORMAT_V1.to_string(),
            ..saved.clone()
        };
        let read = SavedPlan::decode(&rmp_serde::to_vec_named(&v1).unwrap()).unwrap();
        assert!(read.plan.shapes.is_empty());
        assert!(
            bytes.len() * 8 < first.len(),
            "{} bytes compressed, {} not",
            bytes.len(),
            first.len()
        );
    }

    /// A damaged or foreign plan file is an error that says which, and a
    /// length in front of the compressed body that it cannot hold is
    /// refused before it is allocated.
    #[test]
    fn a_damaged_or_foreign_plan_file_is_refused() {
        let err = |bytes: &[u8]| SavedPlan::decode(bytes).unwrap_err();
        let envelope = |body: Vec<u8>| {
            rmp_serde::to_vec_named(&Envelope {
                format: PLAN_FILE_FORMAT_COMPRESSED.to_string(),
                body: crate::wire::Blob(body),
            })
            .unwrap()
        };
        let plain = rmp_serde::to_vec_named(&saved_plan(10)).unwrap();
        let block = lz4_flex::compress_prepend_size(&plain);
        // Cut short: LZ4 notices.
        let e = err(&envelope(block[..block.len() / 2].to_vec()));
        assert!(e.contains("the plan file is damaged"), "{e}");
        // A length of 4 GiB in front of 20 bytes.
        let mut huge = u32::MAX.to_le_bytes().to_vec();
        huge.extend_from_slice(&[0; 16]);
        let e = err(&envelope(huge));
        assert!(e.contains("claims more than it can hold"), "{e}");
        let e = err(&envelope(vec![1, 2]));
        assert!(e.contains("cut short"), "{e}");
        // A compressed body that is not a plan.
        let e = err(&envelope(lz4_flex::compress_prepend_size(b"hello")));
        assert_eq!(e, "the file is not a fleetform plan file");
        // Not a plan file at all, or one of an unknown format.
        assert_eq!(
            err(b"{\"version\": 4}"),
            "the file is not a fleetform plan file"
        );
        let mut later = saved_plan(1);
        later.format = "fleetform-plan/9".to_string();
        let e = err(&rmp_serde::to_vec_named(&later).unwrap());
        assert!(
            e.contains("unsupported plan file format \"fleetform-plan/9\""),
            "{e}"
        );
        // A plan of another format inside the envelope.
        let e = err(&envelope(lz4_flex::compress_prepend_size(
            &rmp_serde::to_vec_named(&later).unwrap(),
        )));
        assert!(e.contains("unsupported plan format"), "{e}");
    }
}
