//! The core's [`Clock`] from the browser's `Date.now()`.

use mentisdb_core::{Clock, UnixMillis};

/// Wall-clock time from `Date.now()` (milliseconds since the epoch, UTC).
#[derive(Debug, Clone, Copy, Default)]
pub struct DateClock;

impl Clock for DateClock {
    fn now_millis(&self) -> UnixMillis {
        js_sys::Date::now() as UnixMillis
    }
}
