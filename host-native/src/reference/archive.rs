//! MentisDB 0.10's `.mentis` backup: a zip archive with a manifest of
//! every file's size and SHA-256, unpacked into a temporary data directory
//! after every file was checked.

use super::ReferenceError;
use serde::Deserialize;
use std::path::Path;

/// The manifest of a MentisDB 0.10 `.mentis` backup (a zip archive).
#[derive(Deserialize)]
struct MentisManifest {
    files: Vec<MentisFile>,
}

#[derive(Deserialize)]
struct MentisFile {
    relative_path: String,
    sha256: String,
    uncompressed_bytes: u64,
}

/// Largest file taken out of a `.mentis` archive.
const MAX_ARCHIVE_FILE: u64 = 4 << 30;

/// Unpacks MentisDB 0.10's `.mentis` backup `archive` into a new temporary
/// directory, laid out as the data directory it was made from. Every file
/// its manifest lists is checked (size and SHA-256) before anything is
/// imported; a file that does not match, a path that is not a plain name
/// in the directory, or a missing file refuses the whole archive. Its TLS
/// keys are left out. `progress(name)` is told of each file.
pub fn unpack_mentis_archive(archive: &Path, mut progress: impl FnMut(&str)) -> Result<tempfile::TempDir, ReferenceError> {
    let fail = |e: ReferenceError| e.in_file(archive);
    let file = std::fs::File::open(archive).map_err(|e| fail(ReferenceError::Io(e)))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| fail(ReferenceError::NotZip(e)))?;
    let manifest: MentisManifest = {
        let entry = zip.by_name("mentisdb.manifest.json").map_err(|_| fail(ReferenceError::NoManifest))?;
        serde_json::from_reader(entry).map_err(|e| fail(ReferenceError::Manifest(e)))?
    };
    let out = tempfile::tempdir().map_err(|e| fail(ReferenceError::Io(e)))?;
    for f in &manifest.files {
        let name = f.relative_path.as_str();
        if name.starts_with("tls/") {
            continue;
        }
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') || name.len() > 255 {
            return Err(fail(ReferenceError::NotPlainName(name.to_string())));
        }
        if f.uncompressed_bytes > MAX_ARCHIVE_FILE {
            return Err(fail(ReferenceError::FileTooLarge { name: name.to_string(), bytes: f.uncompressed_bytes }));
        }
        let mut entry = zip.by_name(name).map_err(|_| fail(ReferenceError::FileMissing(name.to_string())))?;
        let mut bytes = Vec::with_capacity(f.uncompressed_bytes as usize);
        let unpacked = |source| fail(ReferenceError::Unpack { name: name.to_string(), source });
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut entry, MAX_ARCHIVE_FILE + 1), &mut bytes).map_err(unpacked)?;
        let digest = hex::encode(ring::digest::digest(&ring::digest::SHA256, &bytes));
        if bytes.len() as u64 != f.uncompressed_bytes || digest != f.sha256.to_ascii_lowercase() {
            return Err(fail(ReferenceError::FileMismatch { name: name.to_string(), sha256: digest, bytes: bytes.len() as u64, listed_sha256: f.sha256.clone(), listed_bytes: f.uncompressed_bytes }));
        }
        std::fs::write(out.path().join(name), &bytes).map_err(unpacked)?;
        progress(name);
    }
    Ok(out)
}
