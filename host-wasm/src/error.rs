//! The one place where Rust errors become JavaScript `Error`s.
//!
//! A tool error's message is exactly the core's `Display` text (the same
//! human-readable text the daemon returns); its machine-readable
//! [`ToolError::kind`] rides along as the `kind` property. Failures of the
//! browser itself (IndexedDB, `crypto`) become `Error`s whose message names
//! what was being done and what the browser said.

use mentisdb_core::{ErrorKind, ImportError, StorageError, ToolError};
use wasm_bindgen::{JsCast, JsValue};

/// A JS `Error` with `message` and a `kind` property (the kind's stable name).
pub(crate) fn with_kind(message: &str, kind: ErrorKind) -> JsValue {
    let err = js_sys::Error::new(message);
    // Setting a property on a fresh Error object cannot fail.
    let _ = js_sys::Reflect::set(&err, &JsValue::from_str("kind"), &JsValue::from_str(kind.as_str()));
    err.into()
}

/// A core tool error, with the daemon's message text.
pub(crate) fn tool_error(e: &ToolError) -> JsValue {
    with_kind(&e.to_string(), e.kind())
}

/// A storage error raised outside a tool call (open, import, export).
pub(crate) fn storage_error(e: &StorageError) -> JsValue {
    with_kind(&e.to_string(), ErrorKind::Storage)
}

/// A usage error of the JS API itself (closed handle, bad argument type).
pub(crate) fn usage_error(message: &str) -> JsValue {
    with_kind(message, ErrorKind::InvalidArguments)
}

/// A refused open or export, with the core's kind for it.
pub(crate) fn refused(message: &str, kind: ErrorKind) -> JsValue {
    with_kind(message, kind)
}

/// A refused import: the core's message (naming this database when the
/// chain exists) with the kind a tool error of the same cause would have.
pub(crate) fn import_error(e: &ImportError, database: &str) -> JsValue {
    match e {
        ImportError::ChainExists { chain_key } => {
            with_kind(&format!("chain '{chain_key}' already exists in database '{database}'; import refuses to overwrite it"), e.kind())
        }
        ImportError::Storage(s) => storage_error(s),
        _ => with_kind(&e.to_string(), e.kind()),
    }
}

/// Describes whatever the browser threw (a `DOMException`, an `Error`, or
/// anything else) as text.
pub(crate) fn describe_js(value: &JsValue) -> String {
    if let Some(e) = value.dyn_ref::<js_sys::Error>() {
        let name = String::from(e.name());
        let message = String::from(e.message());
        return if name.is_empty() || name == "Error" { message } else { format!("{name}: {message}") };
    }
    if let Some(dom) = value.dyn_ref::<web_sys::DomException>() {
        return format!("{}: {}", dom.name(), dom.message());
    }
    value.as_string().unwrap_or_else(|| format!("{value:?}"))
}

/// A browser failure while doing `what`.
pub(crate) fn browser_error(what: &str, cause: &JsValue) -> JsValue {
    with_kind(&format!("{what}: {}", describe_js(cause)), ErrorKind::Storage)
}
