//! MentisDB 0.10.10's chain file names, kept byte for byte for callers that
//! derive names or keys from them. This engine stores a chain at
//! `chains/<stem>.mdb` (`mentisdb_core::naming`); these names are 0.10.10's.

use crate::StorageAdapterKind;
use sha2::{Digest, Sha256};

/// 0.10.10's file name for a chain: depends on `chain_key` only (the
/// descriptor arguments are ignored, so changing them never forks memory);
/// ends in `.tcbin`.
pub fn chain_filename(chain_key: &str, _agent_name: &str, _expertise: Option<&str>, _personality: Option<&str>) -> String {
    chain_storage_filename(chain_key, StorageAdapterKind::default())
}

/// 0.10.10's file name for a chain key and storage kind:
/// `<key with characters other than alphanumerics, '-' and '_' as '_'>-<16 hex digits of its SHA-256>.<extension>`.
pub fn chain_storage_filename(chain_key: &str, kind: StorageAdapterKind) -> String {
    let digest = Sha256::digest(chain_key.as_bytes());
    let fingerprint: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let safe_key: String = chain_key.chars().map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    format!("{safe_key}-{fingerprint}.{}", kind.file_extension())
}
