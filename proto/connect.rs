//! How every client (the CLI, the bots, the tests) turns `--server URL [--ca FILE]` into a tonic
//! endpoint: `http://` in clear, `https://` over TLS (rustls) trusting the given CA certificate
//! or, without one, the system's roots. One place, so that every client accepts the same URLs.

use std::path::Path;
use std::time::Duration;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint};

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
    let config = match ca {
        Some(path) => {
            let pem = std::fs::read(path).map_err(|e| {
                BadEndpoint(format!("cannot read the CA file {}: {e}", path.display()))
            })?;
            if !String::from_utf8_lossy(&pem).contains("-----BEGIN CERTIFICATE-----") {
                return Err(BadEndpoint(format!(
                    "the CA file {} holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
                    path.display()
                )));
            }
            config.ca_certificate(Certificate::from_pem(pem))
        }
        None => config.with_native_roots(),
    };
    endpoint.tls_config(config).map_err(|e| {
        BadEndpoint(format!(
            "cannot set up TLS for {url}: {}",
            crate::innermost_cause(&e)
        ))
    })
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
}
