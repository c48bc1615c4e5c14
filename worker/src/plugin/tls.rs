//! AutoMTLS as go-plugin does it: the host makes a throwaway client
//! certificate and passes it to the plugin in `PLUGIN_CLIENT_CERT`; the
//! plugin answers with its own self-signed certificate in the handshake line,
//! which the host pins (exact DER) instead of validating a chain.
//!
//! Go plugins sign with ECDSA P-521, which ring cannot verify, so the
//! verifier adds a P-521/SHA-512 algorithm backed by the `p521` crate.

use super::ProviderError;
use p521::ecdsa::signature::Verifier;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, PKCS_ECDSA_P256_SHA256,
};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{WebPkiSupportedAlgorithms, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{
    AlgorithmIdentifier, CertificateDer, InvalidSignature, PrivateKeyDer, PrivatePkcs8KeyDer,
    ServerName, SignatureVerificationAlgorithm, UnixTime, alg_id,
};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, SignatureScheme};
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

/// Accepts exactly one certificate, byte for byte, and checks handshake
/// signatures against it.
#[derive(Debug)]
pub struct PinnedServerCert {
    der: Vec<u8>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl PinnedServerCert {
    pub fn new(der: Vec<u8>, algorithms: WebPkiSupportedAlgorithms) -> PinnedServerCert {
        PinnedServerCert { der, algorithms }
    }

    fn algorithms_for(&self, scheme: SignatureScheme) -> &WebPkiSupportedAlgorithms {
        if scheme == SignatureScheme::ECDSA_NISTP521_SHA512 {
            &P521_ALGORITHMS
        } else {
            &self.algorithms
        }
    }
}

impl ServerCertVerifier for PinnedServerCert {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.der.as_slice() {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, self.algorithms_for(dss.scheme))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, self.algorithms_for(dss.scheme))
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        let mut schemes = self.algorithms.supported_schemes();
        schemes.push(SignatureScheme::ECDSA_NISTP521_SHA512);
        schemes
    }
}

/// ECDSA on P-521 with SHA-512, the signature go-plugin's certificates make.
#[derive(Debug)]
struct EcdsaP521Sha512;

impl SignatureVerificationAlgorithm for EcdsaP521Sha512 {
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), InvalidSignature> {
        let key =
            p521::ecdsa::VerifyingKey::from_sec1_bytes(public_key).map_err(|_| InvalidSignature)?;
        let signature =
            p521::ecdsa::Signature::from_der(signature).map_err(|_| InvalidSignature)?;
        key.verify(message, &signature)
            .map_err(|_| InvalidSignature)
    }

    fn public_key_alg_id(&self) -> AlgorithmIdentifier {
        alg_id::ECDSA_P521
    }

    fn signature_alg_id(&self) -> AlgorithmIdentifier {
        alg_id::ECDSA_SHA512
    }
}

static P521_SHA512: &dyn SignatureVerificationAlgorithm = &EcdsaP521Sha512;

static P521_ALGORITHMS: WebPkiSupportedAlgorithms = WebPkiSupportedAlgorithms {
    all: &[P521_SHA512],
    mapping: &[(SignatureScheme::ECDSA_NISTP521_SHA512, &[P521_SHA512])],
};

#[cfg(test)]
mod tests {
    use super::*;
    use p521::ecdsa::SigningKey;
    use p521::ecdsa::signature::Signer;
    use p521::elliptic_curve::sec1::ToEncodedPoint;

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
    fn p521_signatures_verify_and_forgeries_do_not() {
        let mut scalar = [0u8; 66];
        scalar[65] = 42;
        let key = SigningKey::from_slice(&scalar).unwrap();
        let public =
            p521::PublicKey::from_secret_scalar(key.as_nonzero_scalar()).to_encoded_point(false);
        let sig: p521::ecdsa::Signature = key.sign(b"tls 1.3 transcript");
        let der = sig.to_der();
        let alg = EcdsaP521Sha512;
        assert!(
            alg.verify_signature(public.as_bytes(), b"tls 1.3 transcript", der.as_bytes())
                .is_ok()
        );
        assert!(
            alg.verify_signature(public.as_bytes(), b"tls 1.3 transcripT", der.as_bytes())
                .is_err()
        );
        let v = verifier_for(b"x");
        assert!(
            v.supported_verify_schemes()
                .contains(&SignatureScheme::ECDSA_NISTP521_SHA512)
        );
        assert!(
            v.supported_verify_schemes()
                .contains(&SignatureScheme::ECDSA_NISTP256_SHA256)
        );
    }

    #[test]
    fn client_certificate_is_pem_for_the_plugin() {
        let c = ClientCert::generate().unwrap();
        assert!(c.pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(client_config(&c, vec![1, 2, 3]).unwrap().alpn_protocols == vec![b"h2".to_vec()]);
    }
}
