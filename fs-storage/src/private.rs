//! The file-mode rule: every directory this backend creates is `0700` and
//! every file `0600`, whatever the process's umask (a umask only takes bits
//! away), so other local users cannot read memory past the daemon's tokens.
//! On platforms without Unix modes (WASI, Windows) the host's defaults apply.

use std::fs::{DirBuilder, OpenOptions};
use std::io;
use std::path::Path;

/// The mode of every file the backend creates.
pub const FILE_MODE: u32 = 0o600;
/// The mode of every directory the backend creates.
pub const DIR_MODE: u32 = 0o700;

/// `options` creating files readable and writable by their owner only.
pub fn private_file(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(options, FILE_MODE);
    options
}

/// Creates directory `path` (with its missing parents when `recursive`)
/// for its owner only. An existing directory is left as it is.
pub fn create_private_dir(path: &Path, recursive: bool) -> io::Result<()> {
    let mut builder = DirBuilder::new();
    builder.recursive(recursive);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, DIR_MODE);
    builder.create(path)
}

/// The permission bits of `path` that let users other than its owner in
/// (group and others), when the platform has Unix modes; `None` otherwise.
pub fn shared_bits(path: &Path) -> io::Result<Option<u32>> {
    let meta = std::fs::metadata(path)?;
    #[cfg(unix)]
    return Ok(Some(std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o077));
    #[cfg(not(unix))]
    {
        let _ = meta;
        Ok(None)
    }
}
