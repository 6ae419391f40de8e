//! The daemon's Ed25519 identity: the key that signs checkpoints.
//!
//! Contract: the 32-byte secret seed lives in `<data dir>/identity.ed25519`
//! as 64 hex digits and a newline, file mode 0600, created from the
//! operating system's random source on first start and never rewritten.
//! On PostgreSQL storage it lives in the same place (`--dir`/`MENTISDB_DIR`,
//! else `~/.mentisdb`: the daemon's config directory, which also holds TLS
//! certificates): several daemons sharing one database each sign with their
//! own key and name. The signer name is `mentisdb-<first 8 hex digits of
//! the public key>`, so each daemon's checkpoints have their own origin.

use mentisdb_core::checkpoint::CheckpointSigner;
use std::path::{Path, PathBuf};

/// The key file's name in the data directory.
pub const KEY_FILE: &str = "identity.ed25519";

/// Where the key of the daemon with data directory `dir` is.
pub fn key_path(dir: &Path) -> PathBuf {
    dir.join(KEY_FILE)
}

/// The signer of the daemon with data directory `dir`, creating its key on first use.
pub fn load_or_create(dir: &Path) -> Result<CheckpointSigner, String> {
    let path = key_path(dir);
    let seed: [u8; 32] = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let mut seed = [0u8; 32];
            hex::decode_to_slice(text.trim(), &mut seed).map_err(|_| format!("{} does not hold 64 hex digits", path.display()))?;
            seed
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut seed = [0u8; 32];
            getrandom::fill(&mut seed).map_err(|e| format!("no random source for a new key: {e}"))?;
            crate::tls_cert::write_file(&path, format!("{}\n", hex::encode(seed)).as_bytes(), true)?;
            seed
        }
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let public = CheckpointSigner::new("mentisdb", &seed).map_err(|e| e.to_string())?.public_key();
    CheckpointSigner::new(&format!("mentisdb-{}", hex::encode(&public[..4])), &seed).map_err(|e| e.to_string())
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
}
