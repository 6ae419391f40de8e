//! The daemon's Ed25519 identity: the key that signs checkpoints.
//!
//! Contract: the 32-byte secret seed is 64 hex digits and a newline, created
//! from the operating system's random source on first start and never
//! rewritten. With file storage it lives in `<data dir>/identity.ed25519`,
//! file mode 0600. With PostgreSQL storage it is the object
//! `identity.ed25519` in the database, so every daemon on one database signs
//! as one identity (a client behind a load balancer pins one key); it is
//! created by a conditional write at length 0, so of two daemons starting at
//! once one key wins and both use it. The signer name is
//! `mentisdb-<first 8 hex digits of the public key>`.

use super::tls_cert::CertError;
use mentisdb_core::checkpoint::{CheckpointError, CheckpointSigner};
use mentisdb_core::{Storage, StorageError};
use std::path::{Path, PathBuf};

/// The key file's name in the data directory.
pub const KEY_FILE: &str = "identity.ed25519";

/// Why the signing key cannot be read or created.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IdentityError {
    /// The key file exists but cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    ReadFile { path: PathBuf, source: std::io::Error },
    /// The key object of a shared store cannot be read.
    #[error("cannot read {location}: {source}")]
    ReadObject { location: String, source: StorageError },
    /// The key object is still missing after it was written.
    #[error("{location} was not created")]
    NotCreated { location: String },
    /// The key is not 64 hex digits.
    #[error("{location} does not hold 64 hex digits")]
    NotHex { location: String },
    /// The operating system gave no random bytes for a new key.
    #[error("no random source for a new key: {0}")]
    NoRandomness(getrandom::Error),
    /// The new key file could not be written.
    #[error(transparent)]
    Write(#[from] CertError),
    /// The seed makes no signer.
    #[error(transparent)]
    Signer(#[from] CheckpointError),
}

/// Where the key of the daemon with data directory `dir` is.
pub fn key_path(dir: &Path) -> PathBuf {
    dir.join(KEY_FILE)
}

/// The signer of the daemon with data directory `dir`, creating its key on first use.
pub fn load_or_create(dir: &Path) -> Result<CheckpointSigner, IdentityError> {
    let path = key_path(dir);
    let seed = match std::fs::read_to_string(&path) {
        Ok(text) => parse_seed(&text, &path.display().to_string())?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let seed = new_seed()?;
            super::tls_cert::write_file(&path, format!("{}\n", hex::encode(seed)).as_bytes(), true)?;
            seed
        }
        Err(source) => return Err(IdentityError::ReadFile { path, source }),
    };
    signer(&seed)
}

/// The signer of every daemon on `storage` (PostgreSQL), creating the key
/// object on first use.
pub fn load_or_create_in(storage: &dyn Storage) -> Result<CheckpointSigner, IdentityError> {
    let location = storage.location(KEY_FILE);
    let read = || storage.read(KEY_FILE).map_err(|source| IdentityError::ReadObject { location: location.clone(), source });
    if read()?.is_none() {
        // Only the first writer at length 0 succeeds; a loser's error is
        // expected, and both read the winner's key below.
        let _ = storage.append_at(KEY_FILE, 0, format!("{}\n", hex::encode(new_seed()?)).as_bytes());
    }
    let bytes = read()?.ok_or_else(|| IdentityError::NotCreated { location: location.clone() })?;
    signer(&parse_seed(&String::from_utf8_lossy(&bytes), &location)?)
}

fn new_seed() -> Result<[u8; 32], IdentityError> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(IdentityError::NoRandomness)?;
    Ok(seed)
}

fn parse_seed(text: &str, location: &str) -> Result<[u8; 32], IdentityError> {
    let mut seed = [0u8; 32];
    hex::decode_to_slice(text.trim(), &mut seed).map_err(|_| IdentityError::NotHex { location: location.to_string() })?;
    Ok(seed)
}

fn signer(seed: &[u8; 32]) -> Result<CheckpointSigner, IdentityError> {
    let public = CheckpointSigner::new("mentisdb", seed)?.public_key();
    Ok(CheckpointSigner::new(&format!("mentisdb-{}", hex::encode(&public[..4])), seed)?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_key_is_created_once_private_and_then_reused() {
        let dir = tempfile::tempdir().unwrap();
        let a = super::load_or_create(dir.path()).unwrap();
        let b = super::load_or_create(dir.path()).unwrap();
        assert_eq!((a.name(), a.public_key()), (b.name(), b.public_key()));
        assert!(a.name().starts_with("mentisdb-") && a.name().len() == 17);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(super::key_path(dir.path())).unwrap().permissions().mode() & 0o777, 0o600);
        }
        std::fs::write(super::key_path(dir.path()), "nothex\n").unwrap();
        assert!(super::load_or_create(dir.path()).is_err());
    }

    #[test]
    fn a_shared_store_holds_one_key_for_every_daemon() {
        let storage = mentisdb_core::MemoryStorage::new();
        let a = super::load_or_create_in(&storage).unwrap();
        let b = super::load_or_create_in(&storage).unwrap();
        assert_eq!((a.name(), a.public_key()), (b.name(), b.public_key()));
    }
}
