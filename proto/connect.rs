//! How every client (the CLI, the bots, the tests) turns `--server URL [--ca FILE]` into a tonic
//! endpoint: `http://` in clear, `https://` over TLS (rustls) trusting exactly the
//! certificate(s) of the `--ca` file or, without one, the system's roots. One place, so that
//! every client accepts the same URLs and the same certificates.
//!
//! A `--ca` file's certificates are trusted two ways ([`PinnedOrRoots`]): a server that
//! presents one of them byte for byte is trusted by that alone (pinned), whatever its CA flag:
//! the self-signed certificate most guides make (`openssl req -x509 ...`) carries `CA:TRUE`,
//! which WebPKI refuses as a server's own certificate (`CaUsedAsEndEntity`). Any other
//! certificate must chain to one of them as a root (a private CA), with the usual checks.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tonic::transport::{ClientTlsConfig, Endpoint};

/// Why a server URL or CA file cannot be used: said to the user as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadEndpoint(pub String);

impl std::fmt::Display for BadEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadEndpoint {}

/// Longest TLS handshake waited for: a server that accepts TCP but never answers the handshake
/// must not hang a client forever.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The endpoint for `url`. `ca`: a PEM file of the certificate(s) to trust for an `https://`
/// server (its own self-signed certificate, or a private CA); without it the system's roots.
/// A `--ca` with an `http://` URL is refused: the user meant TLS and would not get it.
pub fn endpoint(url: &str, ca: Option<&Path>) -> Result<Endpoint, BadEndpoint> {
    let bad_url = |reason: &str| {
        BadEndpoint(format!(
            "invalid server URL {} ({reason}): use e.g. --server http://127.0.0.1:50051, or https://HOST:PORT for a server with TLS",
            crate::quoted(url)
        ))
    };
    let tls = if url.starts_with("https://") {
        true
    } else if url.starts_with("http://") {
        false
    } else {
        return Err(bad_url("it must start with http:// or https://"));
    };
    let endpoint = Endpoint::from_shared(url.to_string()).map_err(|e| bad_url(&e.to_string()))?;
    if !tls {
        return match ca {
            Some(ca) => Err(BadEndpoint(format!(
                "--ca {} is given but the server URL {} is not https://: use https:// to talk TLS",
                ca.display(),
                crate::quoted(url)
            ))),
            None => Ok(endpoint),
        };
    }
    let config = ClientTlsConfig::new().timeout(TLS_HANDSHAKE_TIMEOUT);
    let configured = match ca {
        Some(path) => {
            let verifier = PinnedOrRoots::from_file(path)?;
            endpoint.tls_config_with_verifier(config, Arc::new(verifier))
        }
        None => endpoint.tls_config(config.with_native_roots()),
    };
    configured.map_err(|e| {
        BadEndpoint(format!(
            "cannot set up TLS for {url}: {}",
            crate::innermost_cause(&e)
        ))
    })
}

/// The server certificate check of a `--ca` file: a certificate of the file presented as the
/// server's own is trusted by its exact bytes (pinned: its CA flag, names and dates are not
/// looked at; only the holder of its private key can complete the handshake, which is checked
/// as always); any other must chain to one of the file's certificates as a root, checked by
/// WebPKI (name, dates, usage).
#[derive(Debug)]
pub struct PinnedOrRoots {
    pinned: Vec<CertificateDer<'static>>,
    /// None when no certificate of the file can be a root (then only pinning trusts).
    roots: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl PinnedOrRoots {
    /// The verifier for the PEM certificates in `path`; an error naming the file when it cannot
    /// be read or holds no certificate.
    pub fn from_file(path: &Path) -> Result<PinnedOrRoots, BadEndpoint> {
        let pem = std::fs::read(path)
            .map_err(|e| BadEndpoint(format!("cannot read the CA file {}: {e}", path.display())))?;
        PinnedOrRoots::from_pem(&pem)
            .map_err(|why| BadEndpoint(format!("the CA file {} {why}", path.display())))
    }

    /// The verifier for the PEM certificates in `pem`; the error completes "the CA file X ...".
    pub fn from_pem(pem: &[u8]) -> Result<PinnedOrRoots, String> {
        let pinned = CertificateDer::pem_slice_iter(pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("is not a valid PEM file ({e})"))?;
        if pinned.is_empty() {
            return Err("holds no PEM certificate (-----BEGIN CERTIFICATE-----)".to_string());
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut store = rustls::RootCertStore::empty();
        store.add_parsable_certificates(pinned.iter().cloned());
        let roots = if store.is_empty() {
            None
        } else {
            Some(
                rustls::client::WebPkiServerVerifier::builder_with_provider(
                    Arc::new(store),
                    provider.clone(),
                )
                .build()
                .map_err(|e| format!("cannot be used as roots ({e})"))?,
            )
        };
        Ok(PinnedOrRoots {
            pinned,
            roots,
            provider,
        })
    }
}

impl ServerCertVerifier for PinnedOrRoots {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if self
            .pinned
            .iter()
            .any(|pinned| pinned.as_ref() == end_entity.as_ref())
        {
            return Ok(ServerCertVerified::assertion());
        }
        match &self.roots {
            Some(roots) => {
                roots.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            }
            None => Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::UnknownIssuer,
            )),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// What to tell the user when connecting failed on TLS (an untrusted or wrong certificate, a
/// server that does not speak TLS): no retry cures that, so clients stop at once and say it.
/// `None` when the failure is not TLS's (the server is down or restarting: worth a retry).
pub fn tls_failure(url: &str, error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut current = Some(error);
    while let Some(e) = current {
        let rustls_error = e.downcast_ref::<rustls::Error>().or_else(|| {
            e.downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        });
        if let Some(tls) = rustls_error {
            let hint = match tls {
                rustls::Error::InvalidCertificate(_) => {
                    ": give --ca FILE with the server's certificate (or the CA that signed it)"
                }
                _ => ": is the server started with --tls-cert/--tls-key?",
            };
            return Some(format!("TLS with the server at {url} failed ({tls}){hint}"));
        }
        current = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_tls_urls() {
        assert!(endpoint("http://127.0.0.1:1", None).is_ok());
        assert!(endpoint("https://127.0.0.1:1", None).is_ok());
        let err = endpoint("127.0.0.1:1", None).unwrap_err();
        assert!(err.0.contains("http:// or https://"), "{err}");
    }

    #[test]
    fn ca_needs_https_and_a_certificate() {
        let dir = std::env::temp_dir().join(format!("gangs-ca-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let not_pem = dir.join("not.pem");
        std::fs::write(&not_pem, "hello").unwrap();
        let err = endpoint("http://127.0.0.1:1", Some(&not_pem)).unwrap_err();
        assert!(err.0.contains("not https://"), "{err}");
        let err = endpoint("https://127.0.0.1:1", Some(&not_pem)).unwrap_err();
        assert!(err.0.contains("no PEM certificate"), "{err}");
        let err = endpoint("https://127.0.0.1:1", Some(&dir.join("missing.pem"))).unwrap_err();
        assert!(err.0.contains("cannot read the CA file"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_ca_true_certificate_of_the_file_is_pinned_and_others_are_refused() {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca_true = params.self_signed(&key).unwrap();
        let other = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        let name = ServerName::try_from("localhost").unwrap();
        let now = UnixTime::now();

        // WebPKI alone refuses it as the server's own certificate (the bug this fixes).
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca_true.der().clone()).unwrap();
        let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(rustls::crypto::ring::default_provider()),
        )
        .build()
        .unwrap();
        let refused = webpki.verify_server_cert(ca_true.der(), &[], &name, &[], now);
        assert!(
            format!("{refused:?}").contains("CaUsedAsEndEntity"),
            "{refused:?}"
        );

        let verifier = PinnedOrRoots::from_pem(ca_true.pem().as_bytes()).unwrap();
        assert!(verifier
            .verify_server_cert(ca_true.der(), &[], &name, &[], now)
            .is_ok());
        let err = verifier
            .verify_server_cert(other.cert.der(), &[], &name, &[], now)
            .unwrap_err();
        assert!(matches!(err, rustls::Error::InvalidCertificate(_)), "{err}");
        assert!(!verifier.supported_verify_schemes().is_empty());
    }
}
