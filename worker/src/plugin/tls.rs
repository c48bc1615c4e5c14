//! AutoMTLS as go-plugin does it: the host makes a throwaway client
//! certificate and passes it to the plugin in `PLUGIN_CLIENT_CERT`; the
//! plugin answers with its own self-signed certificate in the handshake line,
//! which the host pins (exact DER) instead of validating a chain.
//!
//! Go plugins sign with ECDSA P-521, which ring cannot verify; the pinning
//! and the P-521 checks come from `fleetform-plugin-tls`, shared with our
//! providers.

use super::ProviderError;
pub use fleetform_plugin_tls::PinnedServerCert;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, PKCS_ECDSA_P256_SHA256,
};
use rustls::ClientConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use std::sync::Arc;

/// The host's certificate for one plugin process.
pub struct ClientCert {
    /// What goes into `PLUGIN_CLIENT_CERT`.
    pub pem: String,
    der: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
}

impl ClientCert {
    /// A fresh self-signed P-256 certificate shaped like go-plugin's: a CA for
    /// `localhost` usable for client and server auth, because the plugin adds
    /// it to its client CA pool as is.
    pub fn generate() -> Result<ClientCert, ProviderError> {
        let tls_err =
            |e: rcgen::Error| ProviderError::Tls(format!("generating the client certificate: {e}"));
        let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).map_err(tls_err)?;
        let mut params = CertificateParams::new(vec!["localhost".to_string()]).map_err(tls_err)?;
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
            KeyUsagePurpose::KeyCertSign,
        ];
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ClientAuth,
            ExtendedKeyUsagePurpose::ServerAuth,
        ];
        let cert = params.self_signed(&key).map_err(tls_err)?;
        Ok(ClientCert {
            pem: cert.pem(),
            der: cert.der().clone(),
            key: PrivatePkcs8KeyDer::from(key.serialize_der()),
        })
    }
}

/// A rustls client configuration that presents `client` and accepts only a
/// server presenting exactly `server_cert_der`, speaking HTTP/2.
pub fn client_config(
    client: &ClientCert,
    server_cert_der: Vec<u8>,
) -> Result<Arc<ClientConfig>, ProviderError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(PinnedServerCert::new(
        server_cert_der,
        provider.signature_verification_algorithms,
    ));
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ProviderError::Tls(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_client_auth_cert(
            vec![client.der.clone()],
            PrivateKeyDer::Pkcs8(client.key.clone_key()),
        )
        .map_err(|e| ProviderError::Tls(e.to_string()))?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(config))
}

/// The name the TLS session is opened for; the pinned verifier ignores it.
pub fn server_name() -> ServerName<'static> {
    ServerName::try_from("localhost").expect("localhost is a valid server name")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::SignatureScheme;
    use rustls::client::danger::ServerCertVerifier;
    use rustls::pki_types::UnixTime;

    fn verifier_for(der: &[u8]) -> PinnedServerCert {
        PinnedServerCert::new(
            der.to_vec(),
            rustls::crypto::ring::default_provider().signature_verification_algorithms,
        )
    }

    #[test]
    fn only_the_pinned_certificate_is_accepted() {
        let pinned = ClientCert::generate().unwrap();
        let other = ClientCert::generate().unwrap();
        let v = verifier_for(pinned.der.as_ref());
        let check = |c: &ClientCert| {
            v.verify_server_cert(&c.der, &[], &server_name(), &[], UnixTime::now())
        };
        assert!(check(&pinned).is_ok());
        assert!(check(&other).is_err());
    }

    #[test]
    fn p521_is_offered_beside_the_providers_schemes() {
        let v = verifier_for(b"x");
        let schemes = v.supported_verify_schemes();
        assert!(schemes.contains(&SignatureScheme::ECDSA_NISTP521_SHA512));
        assert!(schemes.contains(&SignatureScheme::ECDSA_NISTP256_SHA256));
    }

    #[test]
    fn client_certificate_is_pem_for_the_plugin() {
        let c = ClientCert::generate().unwrap();
        assert!(c.pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(client_config(&c, vec![1, 2, 3]).unwrap().alpn_protocols == vec![b"h2".to_vec()]);
    }
}
