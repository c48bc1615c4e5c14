//! Who may call the API, and what they may do.
//!
//! Credentials: a bearer token (`authorization: Bearer TOKEN`) or a TLS
//! client certificate verified against `--client-ca`. Both are mapped to
//! grants by one file (`--auth-token-file`), one grant per line:
//!
//! ```text
//! # TOKEN-or-cert:COMMON-NAME   ROLE    WORKSPACE-GLOB
//! 3f1c0d...                      read    *
//! 9a77e2...                      apply   dev-*
//! cert:ci-runner                 plan    *
//! ```
//!
//! Roles are ordered, each including the ones before it:
//! - `read`: show, state list/pull/history, output, runs list/watch;
//! - `plan`: submit plans;
//! - `apply`: submit applies and destroys, approve and cancel runs,
//!   taint/untaint, create workspaces;
//! - `admin`: force-unlock, state push/mv/rm/replace-provider, workspace
//!   delete.
//!
//! A request without valid credentials is `Unauthenticated`; one whose
//! grants do not cover the role on the workspace is `PermissionDenied`.
//! Tokens are kept as SHA-256 digests, so a token is never compared
//! byte by byte with one of the file's (no timing to learn from) and a
//! memory dump holds no token.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use tonic::{Request, Status};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Read,
    Plan,
    Apply,
    Admin,
}

impl Role {
    fn parse(s: &str) -> Option<Role> {
        Some(match s {
            "read" => Role::Read,
            "plan" => Role::Plan,
            "apply" => Role::Apply,
            "admin" => Role::Admin,
            _ => return None,
        })
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Read => "read",
            Role::Plan => "plan",
            Role::Apply => "apply",
            Role::Admin => "admin",
        })
    }
}

#[derive(Clone, Debug)]
struct Grant {
    role: Role,
    workspaces: glob::Pattern,
}

/// The grants of one credential.
#[derive(Clone, Debug)]
pub struct Identity {
    /// How logs and errors name it: `token #3` (its line) or `cert:NAME`.
    pub name: String,
    grants: Vec<Grant>,
}

impl Identity {
    /// Whether the grants cover `role` on `workspace`.
    pub fn allows(&self, role: Role, workspace: &str) -> bool {
        self.grants
            .iter()
            .any(|g| g.role >= role && g.workspaces.matches(workspace))
    }

    /// Whether any grant covers `role` on some workspace (for requests
    /// that are not about one workspace).
    pub fn has(&self, role: Role) -> bool {
        self.grants.iter().any(|g| g.role >= role)
    }
}

/// The API's credentials: None for an API without authentication.
#[derive(Clone, Debug, Default)]
pub struct Auth {
    tokens: HashMap<[u8; 32], Identity>,
    certs: HashMap<String, Identity>,
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Auth {
    /// Reads a grants file; errors name the line.
    pub fn from_file(path: &Path) -> anyhow::Result<Auth> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        Auth::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Auth, String> {
        let mut auth = Auth::default();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [who, role, glob] = fields[..] else {
                return Err(format!(
                    "line {n}: expected three fields, TOKEN (or cert:COMMON-NAME), ROLE and WORKSPACE-GLOB"
                ));
            };
            let role = Role::parse(role).ok_or(format!(
                "line {n}: unknown role {role:?}; the roles are read, plan, apply and admin"
            ))?;
            let workspaces = glob::Pattern::new(glob)
                .map_err(|e| format!("line {n}: invalid workspace glob {glob:?}: {e}"))?;
            let grant = Grant { role, workspaces };
            match who.strip_prefix("cert:") {
                Some(cn) if !cn.is_empty() => auth
                    .certs
                    .entry(cn.to_string())
                    .or_insert_with(|| Identity {
                        name: format!("cert:{cn}"),
                        grants: Vec::new(),
                    })
                    .grants
                    .push(grant),
                Some(_) => return Err(format!("line {n}: cert: needs a common name")),
                None => {
                    if who.len() < 16 {
                        return Err(format!(
                            "line {n}: a token must be at least 16 characters (use a random one, e.g. `openssl rand -hex 32`)"
                        ));
                    }
                    auth.tokens
                        .entry(digest(who))
                        .or_insert_with(|| Identity {
                            name: format!("token (line {n})"),
                            grants: Vec::new(),
                        })
                        .grants
                        .push(grant);
                }
            }
        }
        if auth.tokens.is_empty() && auth.certs.is_empty() {
            return Err("no grants: the file must have at least one TOKEN ROLE GLOB line".into());
        }
        Ok(auth)
    }

    /// Whether any grant is for a token (else only client certificates).
    pub fn has_tokens(&self) -> bool {
        !self.tokens.is_empty()
    }

    /// One token with every role on every workspace (the embedded
    /// coordinator's, known only to the process that started it).
    pub fn single_admin(token: &str) -> Auth {
        let mut auth = Auth::default();
        auth.tokens.insert(
            digest(token),
            Identity {
                name: "embedded".into(),
                grants: vec![Grant {
                    role: Role::Admin,
                    workspaces: glob::Pattern::new("*").expect("valid glob"),
                }],
            },
        );
        auth
    }

    /// Who sent `req`.
    pub fn identify<T>(&self, req: &Request<T>) -> Result<&Identity, Status> {
        if let Some(value) = req.metadata().get("authorization") {
            let value = value
                .to_str()
                .map_err(|_| Status::unauthenticated("the authorization header is not text"))?;
            let token = value.strip_prefix("Bearer ").ok_or_else(|| {
                Status::unauthenticated("the authorization header is not \"Bearer TOKEN\"")
            })?;
            return self.by_token(token);
        }
        if let Some(certs) = req.peer_certs()
            && let Some(leaf) = certs.first()
        {
            return self.by_cert(leaf.as_ref());
        }
        Err(Status::unauthenticated(
            "this coordinator requires credentials: run fleetform login, or set FLEETFORM_TOKEN, or FLEETFORM_CLIENT_CERT and FLEETFORM_CLIENT_KEY",
        ))
    }

    /// Whose `token` this is.
    pub fn by_token(&self, token: &str) -> Result<&Identity, Status> {
        self.tokens.get(&digest(token.trim())).ok_or_else(|| {
            Status::unauthenticated(
                "the token is not valid for this coordinator (check FLEETFORM_TOKEN, or the one fleetform login stored)",
            )
        })
    }

    /// Whose client certificate (DER, verified by the TLS handshake) this is.
    pub fn by_cert(&self, der: &[u8]) -> Result<&Identity, Status> {
        let cn = common_name(der)
            .ok_or_else(|| Status::unauthenticated("the client certificate has no common name"))?;
        self.certs.get(&cn).ok_or_else(|| {
            Status::unauthenticated(format!(
                "the client certificate {cn:?} is not granted anything on this coordinator"
            ))
        })
    }
}

fn common_name(der: &[u8]) -> Option<String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let cn = cert.subject().iter_common_name().next()?;
    cn.as_str().ok().map(str::to_string)
}

/// Checks a request against `auth` (None: the API has no authentication).
pub fn authorize<T>(
    auth: Option<&Auth>,
    req: &Request<T>,
    role: Role,
    workspace: Option<&str>,
) -> Result<(), Status> {
    let Some(auth) = auth else {
        return Ok(());
    };
    let who = auth.identify(req)?;
    let allowed = match workspace {
        Some(w) => who.allows(role, w),
        None => who.has(role),
    };
    if allowed {
        return Ok(());
    }
    let on = workspace.map_or(String::new(), |w| format!(" on workspace {w:?}"));
    Err(Status::permission_denied(format!(
        "{} may not do this: it needs the {role} role{on}",
        who.name
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_file_roles_and_globs() {
        let auth = Auth::parse(
            "# comment\n\n0123456789abcdef0 read *\n0123456789abcdef0 apply dev-*\ncert:ci plan prod\n",
        )
        .unwrap();
        let token = auth.tokens.get(&digest("0123456789abcdef0")).unwrap();
        assert!(token.allows(Role::Read, "prod"));
        assert!(!token.allows(Role::Plan, "prod"));
        assert!(token.allows(Role::Apply, "dev-1"));
        assert!(token.allows(Role::Plan, "dev-1"), "apply includes plan");
        assert!(!token.allows(Role::Admin, "dev-1"));
        let ci = &auth.certs["ci"];
        assert!(ci.allows(Role::Plan, "prod") && !ci.allows(Role::Plan, "dev"));

        let err = |text: &str| Auth::parse(text).unwrap_err();
        assert!(err("x read").contains("line 1: expected three fields"));
        assert!(err("0123456789abcdef0 root *").contains("unknown role \"root\""));
        assert!(err("short read *").contains("at least 16 characters"));
        assert!(err("0123456789abcdef0 read [").contains("invalid workspace glob"));
        assert!(err("# nothing\n").contains("no grants"));
    }

    #[test]
    fn requests_are_identified_and_checked() {
        let auth = Auth::parse("0123456789abcdef0 plan dev-*\n").unwrap();
        let with = |h: Option<&str>| {
            let mut r = Request::new(());
            if let Some(h) = h {
                r.metadata_mut().insert("authorization", h.parse().unwrap());
            }
            r
        };
        let ok = with(Some("Bearer 0123456789abcdef0"));
        assert!(authorize(Some(&auth), &ok, Role::Plan, Some("dev-a")).is_ok());
        let denied = authorize(Some(&auth), &ok, Role::Apply, Some("dev-a")).unwrap_err();
        assert_eq!(denied.code(), tonic::Code::PermissionDenied);
        assert!(
            denied
                .message()
                .contains("needs the apply role on workspace \"dev-a\"")
        );
        let denied = authorize(Some(&auth), &ok, Role::Read, Some("prod")).unwrap_err();
        assert_eq!(denied.code(), tonic::Code::PermissionDenied);
        for bad in [None, Some("Bearer wrong-token-000000"), Some("Basic abc")] {
            let e = authorize(Some(&auth), &with(bad), Role::Read, Some("dev-a")).unwrap_err();
            assert_eq!(e.code(), tonic::Code::Unauthenticated, "{bad:?}");
        }
        assert!(authorize(None, &with(None), Role::Admin, None).is_ok());
    }
}
