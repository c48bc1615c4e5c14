//! Log lines in the JSON shape of go-hclog, which Terraform-style hosts
//! parse from a plugin's stderr: `@level`, `@message`, `@module`,
//! `@timestamp`, then the event's own fields. fleetform's worker and
//! Terraform both show them at their level, tagged with the provider.

use serde_json::{Map, Value as Json};
use std::fmt;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// Formats each event as one go-hclog JSON line.
pub struct HclogJson {
    /// `@module`: `provider.<name>`, as the SDKs name theirs.
    pub module: String,
}

struct Fields(Map<String, Json>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.into());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_string(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_string(), value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_string(), value.into());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().to_string(), format!("{value:?}").into());
    }
}

fn level_name(level: &Level) -> &'static str {
    match *level {
        Level::ERROR => "error",
        Level::WARN => "warn",
        Level::INFO => "info",
        Level::DEBUG => "debug",
        Level::TRACE => "trace",
    }
}

/// The current time as hclog writes it (RFC 3339 with microseconds, UTC).
fn timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = crate::time::clock::format_rfc3339(now.as_secs() as i64);
    // `…:SSZ` → `…:SS.micros Z`
    let micros = now.subsec_micros();
    match secs.strip_suffix('Z') {
        Some(base) => format!("{base}.{micros:06}Z"),
        None => secs,
    }
}

impl<S, N> FormatEvent<S, N> for HclogJson
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut fields = Fields(Map::new());
        event.record(&mut fields);
        let mut line = Map::new();
        line.insert("@level".into(), level_name(event.metadata().level()).into());
        line.insert(
            "@message".into(),
            fields.0.remove("message").unwrap_or_else(|| "".into()),
        );
        line.insert("@module".into(), self.module.clone().into());
        line.insert("@timestamp".into(), timestamp().into());
        line.extend(fields.0);
        writeln!(writer, "{}", Json::Object(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn events_become_hclog_json_lines() {
        let buf = Buf::default();
        let out = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .event_format(HclogJson {
                module: "provider.time".into(),
            })
            .with_writer(move || out.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(duration = "5s", count = 3, "time_sleep waiting");
        });
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let line: Json = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(line["@level"], "warn");
        assert_eq!(line["@message"], "time_sleep waiting");
        assert_eq!(line["@module"], "provider.time");
        assert_eq!(line["duration"], "5s");
        assert_eq!(line["count"], 3);
        let ts = line["@timestamp"].as_str().unwrap();
        assert!(
            ts.ends_with('Z') && ts.contains('T') && ts.contains('.'),
            "{ts}"
        );
    }
}
