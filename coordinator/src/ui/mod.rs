//! The live view: a web page served by the coordinator (`--ui-listen`)
//! with the list of runs and, for one run, its graph drawn as it executes.
//!
//! - `GET /`: the runs; `GET /runs/ID`: one run; `GET /login`, `POST
//!   /login`, `POST /logout`: signing in with an API token.
//! - `GET /api/drift`: per workspace, the objects whose latest read
//!   differs from the state (changed or deleted outside fleetform), with
//!   when that read was made, as plans and background refreshes found them.
//! - `GET /api/runs`: the runs as JSON; `GET /api/runs/ID`: one snapshot
//!   of a run ([`view::Snapshot`]); `GET /api/runs/ID/events?expand=G,H`:
//!   server-sent events, a `snapshot` event whenever the run moved (at
//!   most 4 a second, and every second while it runs), ending after the
//!   run's last event.
//!
//! It has the API's protection: the same TLS certificate, the same
//! grants. A request is signed in by `Authorization: Bearer TOKEN`, by the
//! cookie `POST /login` sets (HttpOnly, SameSite=Strict, Secure over TLS),
//! or by a client certificate granted with `cert:NAME`; seeing a run needs
//! the read role on its workspace. The page only shows: approving and
//! cancelling stay with the CLI (so there is no form a forged request
//! could submit, but the sign-in).

pub mod view;

use crate::auth::{Auth, Identity, Role};
use crate::run::Coordinator;
use crate::server::ApiSecurity;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, Sse};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

const COOKIE: &str = "fleetform_token";

const INDEX_HTML: &str = include_str!("assets/index.html");
const RUN_HTML: &str = include_str!("assets/run.html");
const LOGIN_HTML: &str = include_str!("assets/login.html");
const APP_JS: &str = include_str!("assets/app.js");
const STYLE_CSS: &str = include_str!("assets/style.css");

#[derive(Clone)]
struct Ui {
    coordinator: Coordinator,
    auth: Option<Arc<Auth>>,
    tls: bool,
}

/// The verified client certificate of a connection, if it showed one.
#[derive(Clone, Default)]
struct PeerCert(Option<Arc<Vec<u8>>>);

/// A refusal: the status and one line saying what is missing.
struct Refused(StatusCode, String);

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        (self.0, format!("{}\n", self.1)).into_response()
    }
}

fn cookie_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix(COOKIE)?.strip_prefix('='))
        .filter(|t| !t.is_empty())
}

impl Ui {
    /// Who sent the request: None when the coordinator has no
    /// authentication (anyone may read).
    fn identify(&self, headers: &HeaderMap, cert: &PeerCert) -> Result<Option<Identity>, Refused> {
        let Some(auth) = &self.auth else {
            return Ok(None);
        };
        let unauth = |s: tonic::Status| Refused(StatusCode::UNAUTHORIZED, s.message().to_string());
        if let Some(v) = headers.get(header::AUTHORIZATION) {
            let token = v
                .to_str()
                .ok()
                .and_then(|v| v.strip_prefix("Bearer "))
                .ok_or_else(|| {
                    Refused(
                        StatusCode::UNAUTHORIZED,
                        "the authorization header is not \"Bearer TOKEN\"".into(),
                    )
                })?;
            return auth.by_token(token).cloned().map(Some).map_err(unauth);
        }
        if let Some(token) = cookie_token(headers) {
            return auth.by_token(token).cloned().map(Some).map_err(|_| {
                Refused(
                    StatusCode::UNAUTHORIZED,
                    "the token you signed in with is no longer valid: sign in again".into(),
                )
            });
        }
        if let Some(der) = &cert.0 {
            return auth.by_cert(der).cloned().map(Some).map_err(unauth);
        }
        Err(Refused(
            StatusCode::UNAUTHORIZED,
            "sign in with an API token (or present a client certificate)".into(),
        ))
    }

    fn may_read(who: &Option<Identity>, workspace: &str) -> bool {
        who.as_ref().is_none_or(|i| i.allows(Role::Read, workspace))
    }

    /// The run `id` if `who` may read it.
    fn readable_run(
        &self,
        who: &Option<Identity>,
        id: &str,
    ) -> Result<Arc<crate::run::RunHandle>, Refused> {
        let Some(run) = self.coordinator.run(id) else {
            if let Some((_, ended)) = self
                .coordinator
                .ended_runs()
                .into_iter()
                .find(|(rid, _)| rid == id)
                && Self::may_read(who, &ended.workspace)
            {
                return Err(Refused(
                    StatusCode::GONE,
                    format!(
                        "run {id} ({}, {}) ended before this coordinator process started: only its outcome is kept",
                        ended.operation, ended.status
                    ),
                ));
            }
            return Err(Refused(StatusCode::NOT_FOUND, format!("no run {id}")));
        };
        if !Self::may_read(who, &run.workspace) {
            let name = who.as_ref().map_or("", |i| i.name.as_str());
            return Err(Refused(
                StatusCode::FORBIDDEN,
                format!(
                    "{name} may not see this run: it needs the read role on workspace {:?}",
                    run.workspace
                ),
            ));
        }
        Ok(run)
    }
}

/// A page needs a signed-in user: others are sent to the sign-in page.
fn page(ui: &Ui, headers: &HeaderMap, cert: &PeerCert, path: &str, html: &'static str) -> Response {
    match ui.identify(headers, cert) {
        Ok(_) => Html(html).into_response(),
        Err(_) => Redirect::to(&format!("/login?next={}", url_encode(path))).into_response(),
    }
}

fn url_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

async fn index(
    State(ui): State<Ui>,
    axum::Extension(cert): axum::Extension<PeerCert>,
    headers: HeaderMap,
) -> Response {
    page(&ui, &headers, &cert, "/", INDEX_HTML)
}

async fn run_page(
    State(ui): State<Ui>,
    axum::Extension(cert): axum::Extension<PeerCert>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    page(&ui, &headers, &cert, &format!("/runs/{id}"), RUN_HTML)
}

#[derive(Deserialize)]
struct NextQuery {
    next: Option<String>,
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Only a path of this site: never another host.
fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with('/') && !n.starts_with("//") && !n.contains('\\') => n.into(),
        _ => "/".into(),
    }
}

fn login_page(error: &str, next: &str, status: StatusCode) -> Response {
    let error = if error.is_empty() {
        String::new()
    } else {
        format!(
            "<p class=\"error\" id=\"login-error\">{}</p>",
            html_escape(error)
        )
    };
    let body = LOGIN_HTML
        .replace("{{error}}", &error)
        .replace("{{next}}", &html_escape(next));
    (status, Html(body)).into_response()
}

async fn login_form(State(ui): State<Ui>, Query(q): Query<NextQuery>) -> Response {
    let next = safe_next(q.next.as_deref());
    if ui.auth.is_none() {
        return Redirect::to(&next).into_response();
    }
    login_page("", &next, StatusCode::OK)
}

#[derive(Deserialize)]
struct LoginForm {
    token: String,
    next: Option<String>,
}

async fn login(State(ui): State<Ui>, axum::Form(form): axum::Form<LoginForm>) -> Response {
    let next = safe_next(form.next.as_deref());
    let Some(auth) = &ui.auth else {
        return Redirect::to(&next).into_response();
    };
    match auth.by_token(&form.token) {
        Ok(who) => {
            tracing::info!(who = %who.name, "signed in to the live view");
            let secure = if ui.tls { "; Secure" } else { "" };
            let cookie = format!(
                "{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict{secure}",
                form.token.trim()
            );
            let mut resp = Redirect::to(&next).into_response();
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                resp.headers_mut().insert(header::SET_COOKIE, v);
            }
            resp
        }
        Err(e) => login_page(e.message(), &next, StatusCode::UNAUTHORIZED),
    }
}

async fn logout() -> Response {
    let mut resp = Redirect::to("/login").into_response();
    resp.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static("fleetform_token=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"),
    );
    resp
}

#[derive(Serialize)]
struct RunRow {
    run_id: String,
    workspace: String,
    operation: String,
    status: String,
    started_at: String,
    resumed: bool,
    /// Its events are here: the page can draw it.
    live: bool,
}

async fn api_runs(
    State(ui): State<Ui>,
    axum::Extension(cert): axum::Extension<PeerCert>,
    headers: HeaderMap,
) -> Result<Response, Refused> {
    let who = ui.identify(&headers, &cert)?;
    let mut rows: Vec<RunRow> =
        crate::api::run_infos(&ui.coordinator, "", |w| Ui::may_read(&who, w))
            .into_iter()
            .map(|r| RunRow {
                live: ui.coordinator.run(&r.run_id).is_some(),
                run_id: r.run_id,
                workspace: r.workspace,
                operation: r.operation,
                status: r.status,
                started_at: r.started_at,
                resumed: r.resumed,
            })
            .collect();
    // Newest first.
    rows.reverse();
    Ok(axum::Json(rows).into_response())
}

/// One workspace's drift as the runs page shows it.
#[derive(Serialize)]
struct DriftRow {
    workspace: String,
    objects: Vec<crate::store::Drifted>,
}

/// The drift of the workspaces the caller may read: the objects whose
/// latest read (a user's plan or a background refresh) differs from the
/// state, as [`crate::store::DriftBoard`] keeps them.
async fn api_drift(
    State(ui): State<Ui>,
    axum::Extension(cert): axum::Extension<PeerCert>,
    headers: HeaderMap,
) -> Result<Response, Refused> {
    let who = ui.identify(&headers, &cert)?;
    let rows: Vec<DriftRow> = ui
        .coordinator
        .drift()
        .rows(|w| Ui::may_read(&who, w))
        .into_iter()
        .map(|(workspace, objects)| DriftRow { workspace, objects })
        .collect();
    Ok(axum::Json(rows).into_response())
}

/// Boxes whose instances one snapshot carries at most (the page closes
/// the oldest one it opened beyond that).
const EXPANDED_GROUPS: usize = 20;

#[derive(Deserialize)]
struct ExpandQuery {
    /// Group ids, separated by commas.
    expand: Option<String>,
}

fn expand_set(q: &ExpandQuery) -> BTreeSet<String> {
    q.expand
        .as_deref()
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .take(EXPANDED_GROUPS)
        .map(str::to_string)
        .collect()
}

fn new_view(run: &crate::run::RunHandle) -> view::RunView {
    view::RunView::new(
        &run.id,
        &run.workspace,
        &format!("{:?}", run.operation).to_lowercase(),
    )
}

async fn api_run(
    State(ui): State<Ui>,
    axum::Extension(cert): axum::Extension<PeerCert>,
    Path(id): Path<String>,
    Query(q): Query<ExpandQuery>,
    headers: HeaderMap,
) -> Result<Response, Refused> {
    let who = ui.identify(&headers, &cert)?;
    let run = ui.readable_run(&who, &id)?;
    let mut view = new_view(&run);
    for (t, ev) in run.events.since_timed(0) {
        view.apply(t, &ev);
    }
    let snap = view.snapshot(crate::run::events_now_ms(), &expand_set(&q));
    Ok(axum::Json(snap).into_response())
}

async fn api_run_events(
    State(ui): State<Ui>,
    axum::Extension(cert): axum::Extension<PeerCert>,
    Path(id): Path<String>,
    Query(q): Query<ExpandQuery>,
    headers: HeaderMap,
) -> Result<Response, Refused> {
    let who = ui.identify(&headers, &cert)?;
    let run = ui.readable_run(&who, &id)?;
    let expand = expand_set(&q);
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Event, Infallible>>(4);
    tokio::spawn(async move {
        let mut view = new_view(&run);
        let mut next = 0;
        let mut sub = run.events.subscribe();
        loop {
            let batch = run.events.since_timed(next);
            next += batch.len();
            for (t, ev) in &batch {
                view.apply(*t, ev);
            }
            let done = run.events.is_finished() && run.events.len() <= next;
            let snap = view.snapshot(crate::run::events_now_ms(), &expand);
            let Ok(event) = Event::default().event("snapshot").json_data(&snap) else {
                return;
            };
            if tx.send(Ok(event)).await.is_err() || done {
                return;
            }
            // Redrawn when the run moves, and every second while it runs
            // (durations and the rate change by themselves); never more
            // than 4 times a second.
            tokio::select! {
                r = sub.changed() => if r.is_err() { return },
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                _ = tx.closed() => return,
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    });
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx);
    Ok(Sse::new(stream)
        .keep_alive(axum::response::sse::KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response())
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

fn router(ui: Ui) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/runs/{id}", get(run_page))
        .route("/login", get(login_form).post(login))
        .route("/logout", axum::routing::post(logout))
        .route("/api/runs", get(api_runs))
        .route("/api/drift", get(api_drift))
        .route("/api/runs/{id}", get(api_run))
        .route("/api/runs/{id}/events", get(api_run_events))
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .route(
            "/static/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/static/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }),
        )
        .layer(axum::middleware::map_response(security_headers))
        .with_state(ui)
}

/// No framing by other sites, no sniffing, scripts only from here.
async fn security_headers(mut resp: Response) -> Response {
    let h = resp.headers_mut();
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        "content-security-policy",
        HeaderValue::from_static(
            "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:",
        ),
    );
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    resp
}

fn tls_config(security: &ApiSecurity) -> anyhow::Result<Option<Arc<rustls::ServerConfig>>> {
    let Some((cert, key)) = &security.tls else {
        return Ok(None);
    };
    crate::server::install_crypto_provider();
    let certs = rustls_pemfile::certs(&mut cert.as_slice())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("--tls-cert: {e}"))?;
    let key = rustls_pemfile::private_key(&mut key.as_slice())
        .map_err(|e| anyhow::anyhow!("--tls-key: {e}"))?
        .ok_or_else(|| anyhow::anyhow!("--tls-key: no private key in the file"))?;
    let builder = rustls::ServerConfig::builder();
    let builder = match &security.client_ca {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for c in rustls_pemfile::certs(&mut ca.as_slice()) {
                roots
                    .add(c.map_err(|e| anyhow::anyhow!("--client-ca: {e}"))?)
                    .map_err(|e| anyhow::anyhow!("--client-ca: {e}"))?;
            }
            // As on the API: a certificate is checked when shown, and
            // required by the sign-in, not by the handshake.
            let verifier = rustls::server::WebPkiClientVerifier::builder(Arc::new(roots))
                .allow_unauthenticated()
                .build()
                .map_err(|e| anyhow::anyhow!("--client-ca: {e}"))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| anyhow::anyhow!("--tls-cert/--tls-key: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Some(Arc::new(config)))
}

/// Serves the live view on `listener` until the process ends, with the
/// API's TLS certificate and grants.
pub async fn serve(
    coordinator: Coordinator,
    listener: TcpListener,
    security: ApiSecurity,
) -> anyhow::Result<()> {
    let tls = tls_config(&security)?;
    let ui = Ui {
        coordinator,
        auth: security.auth.clone(),
        tls: tls.is_some(),
    };
    let app = router(ui);
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "live view: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let app = app.clone();
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            match acceptor {
                Some(acceptor) => match acceptor.accept(stream).await {
                    Ok(tls) => {
                        let cert = tls
                            .get_ref()
                            .1
                            .peer_certificates()
                            .and_then(|c| c.first())
                            .map(|c| Arc::new(c.as_ref().to_vec()));
                        serve_connection(tls, app.layer(axum::Extension(PeerCert(cert)))).await;
                    }
                    Err(e) => tracing::debug!(%peer, error = %e, "live view: TLS handshake failed"),
                },
                None => {
                    serve_connection(stream, app.layer(axum::Extension(PeerCert::default()))).await
                }
            }
        });
    }
}

async fn serve_connection<S>(stream: S, app: Router)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper_util::service::TowerToHyperService::new(app);
    let conn = hyper::server::conn::http1::Builder::new()
        .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
    if let Err(e) = conn.await {
        tracing::debug!(error = %e, "live view: connection ended with an error");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_in_never_sends_elsewhere_and_reads_the_cookie() {
        assert_eq!(safe_next(Some("/runs/abc")), "/runs/abc");
        for bad in ["//evil.example/x", "https://evil.example", "/\\evil", ""] {
            assert_eq!(safe_next(Some(bad)), "/", "{bad}");
        }
        assert_eq!(safe_next(None), "/");
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; fleetform_token=abc123; b=2"),
        );
        assert_eq!(cookie_token(&h), Some("abc123"));
        h.insert(header::COOKIE, HeaderValue::from_static("fleetform_token="));
        assert_eq!(cookie_token(&h), None);
        assert_eq!(
            html_escape("<a href=\"x\">&"),
            "&lt;a href=&quot;x&quot;&gt;&amp;"
        );
    }
}
