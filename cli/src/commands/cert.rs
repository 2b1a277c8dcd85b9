//! `gangs cert --host NAME --out DIR`: a private key and a self-signed certificate for a
//! server's TLS, ready at once: `gangs-server --tls-cert DIR/cert.pem --tls-key DIR/key.pem`,
//! and every client with `--ca DIR/cert.pem`. The certificate is an end-entity one (`CA:FALSE`,
//! server authentication), so it works as well with clients that do not pin certificates as
//! the gangs ones do (any WebPKI or OpenSSL client given it as its root).

use crate::client::Context;
use crate::error::CliError;
use clap::Args;
use serde_json::json;
use std::path::{Path, PathBuf};

/// Years the certificate is valid, from the start of this year.
const VALID_YEARS: i32 = 10;

#[derive(Args)]
pub struct CertArgs {
    /// A name clients reach the server by: a DNS name or an IP address (repeatable, e.g.
    /// --host localhost --host 127.0.0.1).
    #[arg(long = "host", value_name = "NAME", required = true)]
    hosts: Vec<String>,
    /// The directory to write cert.pem and key.pem to (made if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Replace cert.pem and key.pem when they exist (else refused: a key is not overwritten
    /// by accident).
    #[arg(long)]
    force: bool,
}

pub async fn run(args: CertArgs, context: &Context) -> Result<(), CliError> {
    for host in &args.hosts {
        if host.is_empty()
            || host.len() > 253
            || !host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'*'))
        {
            return Err(CliError::invalid(format!(
                "--host {}: expected a DNS name or an IP address",
                gangs_proto::quoted(host)
            )));
        }
    }
    let cert_path = args.out.join("cert.pem");
    let key_path = args.out.join("key.pem");
    if !args.force {
        for path in [&cert_path, &key_path] {
            if path.exists() {
                return Err(CliError::new(
                    "ALREADY_EXISTS",
                    format!(
                        "{} exists: give --force to replace it, or another --out",
                        path.display()
                    ),
                ));
            }
        }
    }
    let (cert, key) = make(&args.hosts)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError::local(format!("cannot make {}: {e}", args.out.display())))?;
    write(&key_path, &key, true)?;
    write(&cert_path, &cert, false)?;
    let value = json!({
        "cert": cert_path.display().to_string(),
        "key": key_path.display().to_string(),
        "hosts": args.hosts,
    });
    context.out.emit(value, || {
        format!(
            "wrote {cert} and {key} (for {hosts})\nserver: gangs-server --tls-cert {cert} --tls-key {key}\nclients: gangs --server https://{host}:50051 --ca {cert} ...",
            cert = cert_path.display(),
            key = key_path.display(),
            hosts = args.hosts.join(", "),
            host = url_host(&args.hosts[0]),
        )
    });
    Ok(())
}

/// (certificate PEM, private key PEM) for `hosts`.
fn make(hosts: &[String]) -> Result<(String, String), CliError> {
    let mut params = rcgen::CertificateParams::new(hosts.to_vec())
        .map_err(|e| CliError::invalid(format!("--host: {e}")))?;
    let mut name = rcgen::DistinguishedName::new();
    name.push(rcgen::DnType::CommonName, hosts[0].clone());
    params.distinguished_name = name;
    params.is_ca = rcgen::IsCa::ExplicitNoCa;
    params.key_usages = vec![rcgen::KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let year = this_year();
    params.not_before = rcgen::date_time_ymd(year, 1, 1);
    params.not_after = rcgen::date_time_ymd(year + VALID_YEARS, 1, 1);
    let key = rcgen::KeyPair::generate()
        .map_err(|e| CliError::local(format!("cannot make a key: {e}")))?;
    let cert = params
        .self_signed(&key)
        .map_err(|e| CliError::local(format!("cannot sign the certificate: {e}")))?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// The current year (UTC), from the system clock (no calendar crate for one number: the mean
/// Gregorian year is exact enough for the 1st of January of a validity period).
fn this_year() -> i32 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    1970 + (secs / 31_556_952) as i32
}

/// `host` as it goes in a URL (an IPv6 address in brackets).
fn url_host(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// Writes `text` to `path`; a private key readable by its owner only.
fn write(path: &Path, text: &str, private: bool) -> Result<(), CliError> {
    let failed =
        |e: std::io::Error| CliError::local(format!("cannot write {}: {e}", path.display()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    let mut file = options.open(path).map_err(failed)?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(failed)?;
    // An existing key file keeps its old mode through open(): set it.
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(failed)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_certificate_is_pinned_and_rooted_by_the_clients_check() {
        let (cert, _key) = make(&["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
        assert!(cert.contains("-----BEGIN CERTIFICATE-----"));
        // The clients' own check accepts it as a root too (CA:FALSE, self-signed).
        assert!(gangs_proto::connect::PinnedOrRoots::from_pem(cert.as_bytes()).is_ok());
        assert!((2024..2200).contains(&this_year()));
        assert_eq!(url_host("::1"), "[::1]");
    }
}
