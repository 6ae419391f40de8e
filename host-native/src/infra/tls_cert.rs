//! Self-signed certificates for the HTTPS listeners, as MentisDB 0.10
//! makes them: `<dir>/tls/cert.pem` and `<dir>/tls/key.pem` unless
//! MENTISDB_TLS_CERT / MENTISDB_TLS_KEY name other files. [`ensure`]
//! creates the pair on a daemon's first HTTPS start; `mentisdbd cert
//! [NAME...]` ([`mint`]) makes one valid for extra host names or IP
//! addresses. Every certificate names `localhost`, `127.0.0.1` and `::1`.
//! The key is written readable by its owner only (Unix), both files by
//! temp file and rename, so a reader never sees half a file.

use std::path::{Path, PathBuf};

/// The names every minted certificate is valid for.
pub const STANDARD_NAMES: &[&str] = &["localhost", "127.0.0.1", "::1"];

/// `<dir>/tls/cert.pem` and `<dir>/tls/key.pem`.
pub fn default_paths(dir: &Path) -> (PathBuf, PathBuf) {
    let tls = dir.join("tls");
    (tls.join("cert.pem"), tls.join("key.pem"))
}

/// Why a certificate could not be made or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CertError {
    /// `mentisdbd cert` without `--force` over an existing file.
    #[error("{} exists; pass --force to replace the certificate and key", .0.display())]
    Exists(PathBuf),
    /// An extra name that is neither a host name nor an IP address (cut to 80 characters).
    #[error("'{0}' is not a host name or IP address")]
    BadName(String),
    /// rcgen refused the names.
    #[error("cannot make a certificate for {names:?}: {source}")]
    Generate { names: Vec<String>, source: rcgen::Error },
    /// The file's directory cannot be created.
    #[error("cannot create {}: {source}", dir.display())]
    CreateDir { dir: PathBuf, source: std::io::Error },
    /// No temporary file can be made beside the file.
    #[error("cannot write in {}: {source}", dir.display())]
    TempFile { dir: PathBuf, source: std::io::Error },
    /// The key's temporary file cannot be made private.
    #[error("cannot restrict {}: {source}", path.display())]
    Restrict { path: PathBuf, source: std::io::Error },
    /// The file cannot be written or renamed into place.
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

/// A certificate just written.
#[derive(Debug, Clone)]
pub struct Minted {
    /// The names (DNS names and IP addresses) it is valid for.
    pub names: Vec<String>,
    /// SHA-256 of the DER certificate, hex, for pinning and checking.
    pub sha256: String,
}

/// Creates the pair when either file is missing; `Ok(None)` when both exist.
pub fn ensure(cert: &Path, key: &Path) -> Result<Option<Minted>, CertError> {
    if cert.is_file() && key.is_file() {
        return Ok(None);
    }
    mint(cert, key, &[], true).map(Some)
}

/// Writes a fresh self-signed certificate for [`STANDARD_NAMES`] plus
/// `extra` (each a DNS name or an IP address). Refuses to replace existing
/// files unless `overwrite`.
pub fn mint(cert: &Path, key: &Path, extra: &[String], overwrite: bool) -> Result<Minted, CertError> {
    if !overwrite {
        if let Some(existing) = [cert, key].into_iter().find(|p| p.exists()) {
            return Err(CertError::Exists(existing.to_path_buf()));
        }
    }
    let mut names: Vec<String> = STANDARD_NAMES.iter().map(|s| s.to_string()).collect();
    for name in extra {
        let name = name.trim();
        if name.is_empty() || name.len() > 253 || name.chars().any(|c| c.is_whitespace() || c.is_control() || c == '/') {
            return Err(CertError::BadName(name.chars().take(80).collect()));
        }
        if !names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            names.push(name.to_string());
        }
    }
    let rcgen::CertifiedKey { cert: certificate, key_pair } = rcgen::generate_simple_self_signed(names.clone()).map_err(|source| CertError::Generate { names: names.clone(), source })?;
    write_file(cert, certificate.pem().as_bytes(), false)?;
    write_file(key, key_pair.serialize_pem().as_bytes(), true)?;
    let sha256 = hex::encode(ring::digest::digest(&ring::digest::SHA256, certificate.der()).as_ref());
    Ok(Minted { names, sha256 })
}

/// Writes `bytes` to `path` through a temp file in the same directory.
pub(crate) fn write_file(path: &Path, bytes: &[u8], private: bool) -> Result<(), CertError> {
    use std::io::Write;
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    mentisdb_fs_storage::private::create_private_dir(parent, true).map_err(|source| CertError::CreateDir { dir: parent.to_path_buf(), source })?;
    let mut tmp = tempfile::NamedTempFile::new_in(parent).map_err(|source| CertError::TempFile { dir: parent.to_path_buf(), source })?;
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o600)).map_err(|source| CertError::Restrict { path: path.to_path_buf(), source })?;
    }
    #[cfg(not(unix))]
    let _ = private;
    tmp.write_all(bytes).and_then(|()| tmp.as_file().sync_all()).map_err(|source| CertError::Write { path: path.to_path_buf(), source })?;
    tmp.persist(path).map_err(|e| CertError::Write { path: path.to_path_buf(), source: e.error })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minting_refuses_to_overwrite_without_force_and_checks_names() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = default_paths(dir.path());
        let first = ensure(&cert, &key).unwrap().expect("created on first start");
        assert_eq!(first.names, STANDARD_NAMES);
        assert!(ensure(&cert, &key).unwrap().is_none(), "kept on later starts");
        let err = mint(&cert, &key, &["db.example".into()], false).unwrap_err();
        assert!(err.to_string().contains("--force"), "{err}");
        let again = mint(&cert, &key, &["db.example".into(), "192.0.2.10".into()], true).unwrap();
        assert!(again.names.contains(&"db.example".to_string()) && again.names.contains(&"192.0.2.10".to_string()));
        assert_ne!(again.sha256, first.sha256);
        assert!(mint(&cert, &key, &["a b".into()], true).is_err());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&key).unwrap().permissions().mode() & 0o777, 0o600);
        }
    }
}
