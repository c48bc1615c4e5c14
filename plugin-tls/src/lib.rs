//! The part of go-plugin AutoMTLS that both ends share: the peer's
//! certificate is pinned (compared byte for byte, no chain), and handshake
//! signatures are checked against it. Go plugins and Go hosts use ECDSA
//! P-521 certificates, which the ring provider cannot verify, so
//! P-521/SHA-512 signatures are checked with the `p521` crate and every
//! other scheme with the provider's algorithms.
//!
//! The worker (a host verifying a plugin's server certificate) uses
//! [`PinnedServerCert`]; our providers (plugins verifying the host's client
//! certificate) use [`PinnedClientCert`]. Both are a [`PinnedCert`] behind
//! the rustls verifier trait of their side.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{WebPkiSupportedAlgorithms, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{
    AlgorithmIdentifier, CertificateDer, InvalidSignature, ServerName,
    SignatureVerificationAlgorithm, UnixTime, alg_id,
};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, SignatureScheme};

/// One certificate the peer must present, and how its signatures are checked.
#[derive(Debug)]
pub struct PinnedCert {
    der: Vec<u8>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl PinnedCert {
    /// `algorithms`: the crypto provider's, for every scheme but P-521.
    pub fn new(der: Vec<u8>, algorithms: WebPkiSupportedAlgorithms) -> PinnedCert {
        PinnedCert { der, algorithms }
    }

    /// Accepts exactly the pinned certificate.
    pub fn check(&self, presented: &CertificateDer<'_>) -> Result<(), rustls::Error> {
        if presented.as_ref() == self.der.as_slice() {
            Ok(())
        } else {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn algorithms_for(&self, scheme: SignatureScheme) -> &WebPkiSupportedAlgorithms {
        if scheme == SignatureScheme::ECDSA_NISTP521_SHA512 {
            &P521_ALGORITHMS
        } else {
            &self.algorithms
        }
    }

    pub fn verify_tls12(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, self.algorithms_for(dss.scheme))
    }

    pub fn verify_tls13(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, self.algorithms_for(dss.scheme))
    }

    /// The provider's schemes plus ECDSA P-521/SHA-512.
    pub fn supported_schemes(&self) -> Vec<SignatureScheme> {
        let mut schemes = self.algorithms.supported_schemes();
        schemes.push(SignatureScheme::ECDSA_NISTP521_SHA512);
        schemes
    }
}

/// The plugin host's side: accepts exactly the plugin's server certificate
/// from the handshake line.
#[derive(Debug)]
pub struct PinnedServerCert(PinnedCert);

impl PinnedServerCert {
    pub fn new(der: Vec<u8>, algorithms: WebPkiSupportedAlgorithms) -> PinnedServerCert {
        PinnedServerCert(PinnedCert::new(der, algorithms))
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
        self.0
            .check(end_entity)
            .map(|()| ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// The plugin's side: admits exactly the client certificate the host passed
/// in `PLUGIN_CLIENT_CERT`; the handshake signature proves the client holds
/// its key.
#[derive(Debug)]
pub struct PinnedClientCert(PinnedCert);

impl PinnedClientCert {
    pub fn new(der: Vec<u8>, algorithms: WebPkiSupportedAlgorithms) -> PinnedClientCert {
        PinnedClientCert(PinnedCert::new(der, algorithms))
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
        self.0
            .check(end_entity)
            .map(|()| ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// ECDSA on P-521 with SHA-512, the signature go-plugin certificates make.
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
    }

    #[test]
    fn only_the_pinned_bytes_pass_and_p521_is_offered() {
        let pinned = PinnedCert::new(
            b"cert".to_vec(),
            rustls::crypto::ring::default_provider().signature_verification_algorithms,
        );
        assert!(
            pinned
                .check(&CertificateDer::from(b"cert".to_vec()))
                .is_ok()
        );
        assert!(
            pinned
                .check(&CertificateDer::from(b"cerT".to_vec()))
                .is_err()
        );
        let schemes = pinned.supported_schemes();
        assert!(schemes.contains(&SignatureScheme::ECDSA_NISTP521_SHA512));
        assert!(schemes.contains(&SignatureScheme::ECDSA_NISTP256_SHA256));
    }
}
