//! go-plugin AutoMTLS, server side: a fresh self-signed certificate for this
//! process, and a TLS acceptor that admits only the client certificate the
//! host passed in `PLUGIN_CLIENT_CERT`.
//!
//! go-plugin hosts (Terraform, OpenTofu) make P-521 client certificates, which
//! the ring provider cannot verify; the pinning and the P-521 checks come
//! from `fleetform-plugin-tls`, shared with the worker.

use base64::Engine;
use fleetform_plugin_tls::PinnedClientCert;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::sync::Arc;
use tokio_rustls::TlsAcceptor;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("PLUGIN_CLIENT_CERT holds no PEM certificate")]
    NoClientCert,
    #[error("reading PLUGIN_CLIENT_CERT: {0}")]
    Pem(#[from] std::io::Error),
    #[error("generating the server certificate: {0}")]
    Generate(#[from] rcgen::Error),
    #[error("building the tls configuration: {0}")]
    Rustls(#[from] rustls::Error),
}

/// The server half of AutoMTLS.
pub struct ServerTls {
    pub acceptor: TlsAcceptor,
    cert_der: Vec<u8>,
}

impl ServerTls {
    /// Generates this process's certificate and pins `client_cert_pem`.
    pub fn new(client_cert_pem: &str) -> Result<ServerTls, TlsError> {
        let client = rustls_pemfile::certs(&mut client_cert_pem.as_bytes())
            .next()
            .ok_or(TlsError::NoClientCert)??;
        let (cert_der, key_der) = self_signed_localhost()?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = Arc::new(PinnedClientCert::new(
            client.to_vec(),
            provider.signature_verification_algorithms,
        ));
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_client_cert_verifier(verifier)
            .with_single_cert(
                vec![CertificateDer::from(cert_der.clone())],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key_der)),
            )?;
        config.alpn_protocols = vec![b"h2".to_vec()];
        Ok(ServerTls {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            cert_der,
        })
    }

    /// The last handshake field: the certificate DER in unpadded standard
    /// base64 (go's `RawStdEncoding`), because the line cannot hold PEM.
    pub fn handshake_cert(&self) -> String {
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(&self.cert_der)
    }
}

/// A certificate shaped like go-plugin's own: CA, `localhost`, usable for
/// both server and client auth, so Go's verifier accepts it as its own root.
fn self_signed_localhost() -> Result<(Vec<u8>, Vec<u8>), rcgen::Error> {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
        KeyUsagePurpose,
    };
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
    params
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    params
        .distinguished_name
        .push(DnType::OrganizationName, "HashiCorp");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
        KeyUsagePurpose::KeyAgreement,
        KeyUsagePurpose::KeyCertSign,
    ];
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ClientAuth,
        ExtendedKeyUsagePurpose::ServerAuth,
    ];
    let now = std::time::SystemTime::now();
    params.not_before = (now - std::time::Duration::from_secs(30)).into();
    params.not_after = (now + std::time::Duration::from_secs(30 * 365 * 24 * 3600)).into();
    let cert = params.self_signed(&key)?;
    Ok((cert.der().to_vec(), key.serialize_der()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::SignatureScheme;
    use rustls::pki_types::UnixTime;
    use rustls::server::danger::ClientCertVerifier;

    #[test]
    fn only_the_pinned_client_certificate_is_admitted() {
        let client = rcgen::generate_simple_self_signed(vec!["client".to_string()]).unwrap();
        let other = rcgen::generate_simple_self_signed(vec!["client".to_string()]).unwrap();
        let verifier = PinnedClientCert::new(
            client.cert.der().to_vec(),
            rustls::crypto::ring::default_provider().signature_verification_algorithms,
        );
        let now = UnixTime::now();
        assert!(
            verifier
                .verify_client_cert(client.cert.der(), &[], now)
                .is_ok()
        );
        assert!(
            verifier
                .verify_client_cert(other.cert.der(), &[], now)
                .is_err()
        );
        assert!(
            verifier
                .supported_verify_schemes()
                .contains(&SignatureScheme::ECDSA_NISTP521_SHA512)
        );
    }

    #[test]
    fn handshake_cert_is_unpadded_base64_of_the_der() {
        let client = rcgen::generate_simple_self_signed(vec!["client".to_string()]).unwrap();
        let tls = ServerTls::new(&client.cert.pem()).unwrap();
        let field = tls.handshake_cert();
        assert!(!field.contains('=') && !field.contains('\n'));
        let der = base64::engine::general_purpose::STANDARD_NO_PAD
            .decode(&field)
            .unwrap();
        assert_eq!(der, tls.cert_der);
        assert!(ServerTls::new("not a pem").is_err());
    }
}
