//! The temp-file rule of [`crate::FsStorage::write_atomic`].
//!
//! A temp file lives in its target's directory (so the rename stays within
//! one directory) and is named `.tmp-<target file name>.<n>`; `n` counts up
//! until a name is free, so two writers never share a temp file. Temp files
//! are not objects: listing skips them and opening a directory deletes them.
//! Names left by the two backends this one replaced are recognised too.

/// Prefix of every temp file (also the prefix the daemon's old backend used).
pub const TEMP_PREFIX: &str = ".tmp-";

/// Suffix of the temp files the WASI component's old backend left
/// (`<target file name>.mentisdb-tmp`); recognised so they are cleaned up.
pub const LEGACY_WASI_TEMP_SUFFIX: &str = ".mentisdb-tmp";

/// The file name of temp file number `n` for the target file `file_name`.
pub fn temp_file_name(file_name: &str, n: u64) -> String {
    format!("{TEMP_PREFIX}{file_name}.{n}")
}

/// Whether a file name (one path segment) is a temp file under this or an
/// earlier rule, i.e. left by `write_atomic` and never an object.
pub fn is_temp_file(file_name: &str) -> bool {
    file_name.starts_with(TEMP_PREFIX) || file_name.ends_with(LEGACY_WASI_TEMP_SUFFIX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mentisdb_core::storage::validate_object_name;

    #[test]
    fn temp_names_of_every_rule_are_recognised() {
        let name = temp_file_name("abc.agents.json", 7);
        assert_eq!(name, ".tmp-abc.agents.json.7");
        assert!(is_temp_file(&name));
        assert!(is_temp_file(".tmp-abc.agents.json.00ff00ff00ff00ff"), "the daemon's old naming");
        assert!(is_temp_file("abc.agents.json.mentisdb-tmp"), "the WASI component's old naming");
        for object in ["abc.mdb", "abc.agents.json", "abc.jsonl", "skills.log"] {
            assert!(!is_temp_file(object), "{object} is an object");
        }
    }

    #[test]
    fn temp_names_are_valid_segments_so_listing_must_skip_them() {
        // They pass the core's name check, which is why `is_temp_file` exists.
        assert!(validate_object_name(&format!("chains/{}", temp_file_name("x.mdb", 1))).is_ok());
    }
}
