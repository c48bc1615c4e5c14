//! go-plugin AutoMTLS, server side: a fresh self-signed certificate for this
//! process, and a TLS acceptor that admits only the client certificate the
//! host passed in `PLUGIN_CLIENT_CERT`.
//!
//! go-plugin hosts (Terraform, OpenTofu) make P-521 client certificates, which
//! the ring provider cannot verify; the pinned-certificate verifier adds
//! ECDSA P-521/SHA-512 signature checks with the `p521` crate.

use base64::Engine;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{WebPkiSupportedAlgorithms, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{
    AlgorithmIdentifier, CertificateDer, InvalidSignature, PrivateKeyDer, PrivatePkcs8KeyDer,
    SignatureVerificationAlgorithm, UnixTime, alg_id,
};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};
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
        let verifier = Arc::new(PinnedClientCert {
            pinned: client,
            algs: provider.signature_verification_algorithms,
        });
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

/// Admits exactly one client certificate, compared byte for byte; the
/// handshake signature proves the client holds its key.
#[derive(Debug)]
struct PinnedClientCert {
    pinned: CertificateDer<'static>,
    algs: WebPkiSupportedAlgorithms,
}

static P521_ALGS: WebPkiSupportedAlgorithms = WebPkiSupportedAlgorithms {
    all: &[&EcdsaP521Sha512],
    mapping: &[(SignatureScheme::ECDSA_NISTP521_SHA512, &[&EcdsaP521Sha512])],
};

impl PinnedClientCert {
    fn algs_for(&self, scheme: SignatureScheme) -> &WebPkiSupportedAlgorithms {
        if scheme == SignatureScheme::ECDSA_NISTP521_SHA512 {
            &P521_ALGS
        } else {
            &self.algs
        }
    }
}

impl ClientCertVerifier for PinnedClientCert {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.pinned.as_ref() {
            Ok(ClientCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, self.algs_for(dss.scheme))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, self.algs_for(dss.scheme))
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        let mut schemes = self.algs.supported_schemes();
        schemes.push(SignatureScheme::ECDSA_NISTP521_SHA512);
        schemes
    }
}

/// ECDSA on P-521 with SHA-512, the signature go-plugin clients make.
#[derive(Debug)]
struct EcdsaP521Sha512;

impl SignatureVerificationAlgorithm for EcdsaP521Sha512 {
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), InvalidSignature> {
        use p521::ecdsa::signature::Verifier;
        let key =
            p521::ecdsa::VerifyingKey::from_sec1_bytes(public_key).map_err(|_| InvalidSignature)?;
        let sig = p521::ecdsa::Signature::from_der(signature).map_err(|_| InvalidSignature)?;
        key.verify(message, &sig).map_err(|_| InvalidSignature)
    }

    fn public_key_alg_id(&self) -> AlgorithmIdentifier {
        alg_id::ECDSA_P521
    }

    fn signature_alg_id(&self) -> AlgorithmIdentifier {
        alg_id::ECDSA_SHA512
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p521::ecdsa::signature::hazmat::RandomizedPrehashSigner;
    use p521::elliptic_curve::rand_core::{CryptoRng, Error, RngCore};
    use sha2::Digest;

    /// A fixed-sequence nonce source: enough for a signature to check against.
    struct TestRng(u64);

    impl RngCore for TestRng {
        fn next_u32(&mut self) -> u32 {
            self.next_u64() as u32
        }
        fn next_u64(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0
        }
        fn fill_bytes(&mut self, dest: &mut [u8]) {
            dest.iter_mut()
                .for_each(|b| *b = (self.next_u64() >> 33) as u8);
        }
        fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Error> {
            self.fill_bytes(dest);
            Ok(())
        }
    }

    impl CryptoRng for TestRng {}

    #[test]
    fn p521_sha512_signatures_verify_and_tampering_fails() {
        let mut scalar = [0x42u8; 66];
        scalar[0] = 0;
        let sk = p521::ecdsa::SigningKey::from_slice(&scalar).unwrap();
        let pk = p521::ecdsa::VerifyingKey::from(&sk).to_encoded_point(false);
        let sig: p521::ecdsa::Signature = sk
            .sign_prehash_with_rng(
                &mut TestRng(7),
                &sha2::Sha512::digest(b"handshake transcript"),
            )
            .unwrap();
        let der = sig.to_der();
        let alg = EcdsaP521Sha512;
        assert!(
            alg.verify_signature(pk.as_bytes(), b"handshake transcript", der.as_bytes())
                .is_ok()
        );
        assert!(
            alg.verify_signature(pk.as_bytes(), b"another transcript", der.as_bytes())
                .is_err()
        );
    }

    #[test]
    fn only_the_pinned_client_certificate_is_admitted() {
        let client = rcgen::generate_simple_self_signed(vec!["client".to_string()]).unwrap();
        let other = rcgen::generate_simple_self_signed(vec!["client".to_string()]).unwrap();
        let verifier = PinnedClientCert {
            pinned: client.cert.der().clone(),
            algs: rustls::crypto::ring::default_provider().signature_verification_algorithms,
        };
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
