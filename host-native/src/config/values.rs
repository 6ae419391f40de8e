//! How single settings are read: the flag and switch words, numbers in
//! range, and the PostgreSQL URL (never shown with its password). Each
//! parser is a clap `value_parser`; its error is the text after clap's
//! "invalid value ... for ...".

/// A setting's value that does not read (the value shown cut to 32 characters).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// Not a number from 0.0 to 1.0.
    #[error("'{0}' is not a number from 0.0 to 1.0")]
    NotUnitInterval(String),
    /// Not a whole number from 1 to 100000.
    #[error("'{0}' is not a whole number from 1 to 100000")]
    NotScanWindow(String),
    /// Not 1, 0, true or false.
    #[error("expected one of 1, 0, true, false; got '{0}'")]
    NotFlag(String),
    /// Not one of 0.10's switch words.
    #[error("expected true or false (1/0, yes/no, on/off); got '{0}'")]
    NotSwitch(String),
    /// Neither on nor off (nor 1, 0, true, false).
    #[error("expected on or off; got '{0}'")]
    NotOnOff(String),
}

/// At most 32 characters of a value, for a message.
fn shown(s: &str) -> String {
    s.chars().take(32).collect()
}

/// A number in `0.0..=1.0` (a similarity threshold).
pub(super) fn parse_unit_interval(s: &str) -> Result<f64, ValueError> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(ValueError::NotUnitInterval(shown(s))),
    }
}

/// A dedup scan window: 1 to 100000 thoughts.
pub(super) fn parse_scan_window(s: &str) -> Result<usize, ValueError> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=100_000).contains(&n) => Ok(n),
        _ => Err(ValueError::NotScanWindow(shown(s))),
    }
}

/// Parses `1`, `0`, `true`, `false` (case-insensitive).
pub(super) fn parse_flag(s: &str) -> Result<bool, ValueError> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        other => Err(ValueError::NotFlag(other.to_string())),
    }
}

/// Parses MentisDB 0.10's switch values: `1`, `true`, `yes`, `on` and
/// `0`, `false`, `no`, `off` (case-insensitive). Anything else is an error,
/// not "off": a typo must not leave a daemon open.
pub(super) fn parse_switch(s: &str) -> Result<bool, ValueError> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        other => Err(ValueError::NotSwitch(shown(other))),
    }
}

/// Parses `on`, `off` (and `1`, `0`, `true`, `false`), case-insensitive.
pub(super) fn parse_on_off(s: &str) -> Result<bool, ValueError> {
    match s.trim().to_ascii_lowercase().as_str() {
        "on" => Ok(true),
        "off" => Ok(false),
        other => parse_flag(other).map_err(|_| ValueError::NotOnOff(other.to_string())),
    }
}

/// A `postgres://` or `postgresql://` URL. It may hold a password, so its
/// `Debug` and `Display` show only the scheme, host, port and database.
#[derive(Clone, PartialEq, Eq)]
pub struct StorageUrl(String);

impl StorageUrl {
    /// Takes any value; [`super::Config::validate`] refuses what is not
    /// `postgres://...` or `postgresql://...` in one line that never repeats
    /// the value (a parser error of clap would, password included).
    pub fn from_arg(s: &str) -> Result<StorageUrl, std::convert::Infallible> {
        Ok(StorageUrl(s.trim().to_string()))
    }

    /// Whether the scheme is `postgres://` or `postgresql://`.
    pub fn is_postgres(&self) -> bool {
        self.0.starts_with("postgres://") || self.0.starts_with("postgresql://")
    }

    /// The URL as given, password included: for connecting, never for logs.
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for StorageUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Some((scheme, rest)) = self.0.split_once("://") else { return f.write_str("(not a URL)") };
        // Drop `user[:password]@` and anything after the database (`?options`).
        let host_and_db = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
        write!(f, "{scheme}://{}", host_and_db.split('?').next().unwrap_or(""))
    }
}

impl std::fmt::Debug for StorageUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StorageUrl({self})")
    }
}
