//! What fleetform's servers tell their operators besides metrics: log
//! lines (text for people, JSON for pipelines) and OpenTelemetry traces,
//! one per run, with a span per operation that travels coordinator → NATS
//! (W3C `traceparent` header) → worker → provider call.
//!
//! Traces are exported over OTLP/HTTP (JSON) when
//! `OTEL_EXPORTER_OTLP_ENDPOINT` is set (the standard variables of the
//! OTLP exporter apply: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
//! `OTEL_SERVICE_NAME`, ...); without it nothing is exported.
//!
//! # Layout
//! One file: [`init`], and [`inject`] / [`extract`] for NATS headers.

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// How log lines are written: `text` for people, `json` (one object per
/// line, with the fields of the span it happens in: a run's id, a task's
/// id) for log pipelines.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// Flushes the traces still buffered when dropped (at the end of `main`).
pub struct Guard(Option<opentelemetry_sdk::trace::SdkTracerProvider>);

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = p.shutdown();
        }
    }
}

/// Sets up logging (filtered by `RUST_LOG`, default `info`) and, when
/// `OTEL_EXPORTER_OTLP_ENDPOINT` is set, trace export as `service`.
pub fn init(service: &str, format: LogFormat) -> anyhow::Result<Guard> {
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let exporting = [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
    let provider = if exporting {
        use opentelemetry_otlp::WithExportConfig;
        // JSON over HTTP, sent from the batch processor's own thread (so a
        // blocking client: it runs outside the async runtime).
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(opentelemetry_otlp::Protocol::HttpJson)
            .build()
            .map_err(|e| anyhow::anyhow!("OTLP exporter: {e}"))?;
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name(
                std::env::var("OTEL_SERVICE_NAME").unwrap_or_else(|_| service.to_string()),
            )
            .build();
        Some(
            opentelemetry_sdk::trace::SdkTracerProvider::builder()
                .with_batch_exporter(exporter)
                .with_resource(resource)
                .build(),
        )
    } else {
        None
    };
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let otel = provider
        .as_ref()
        .map(|p| tracing_opentelemetry::layer().with_tracer(p.tracer(service.to_string())));
    let registry = tracing_subscriber::registry().with(filter).with(otel);
    match format {
        LogFormat::Text => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())),
            )
            .init(),
        LogFormat::Json => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    .json()
                    .flatten_event(true)
                    .with_current_span(true)
                    .with_span_list(false),
            )
            .init(),
    }
    Ok(Guard(provider))
}

struct Headers<'a>(&'a mut async_nats::HeaderMap);

impl Injector for Headers<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key, value.as_str());
    }
}

struct ReadHeaders<'a>(&'a async_nats::HeaderMap);

impl Extractor for ReadHeaders<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(|v| v.as_str())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.iter().map(|(k, _)| k.as_ref()).collect()
    }
}

/// Writes `span`'s trace context into a message's headers.
pub fn inject(span: &tracing::Span, headers: &mut async_nats::HeaderMap) {
    let cx = span.context();
    TraceContextPropagator::new().inject_context(&cx, &mut Headers(headers));
}

/// Makes `span` a child of the trace context in a message's headers, if
/// it carries one.
pub fn extract(headers: Option<&async_nats::HeaderMap>, span: &tracing::Span) {
    let Some(h) = headers else { return };
    let cx = TraceContextPropagator::new().extract(&ReadHeaders(h));
    let _ = span.set_parent(cx);
}
