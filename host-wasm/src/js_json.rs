//! Plain JS values <-> `serde_json::Value`, through the engine's own
//! `JSON.stringify` / `JSON.parse` (small code, exact JSON semantics).

use crate::error::{describe_js, usage_error};
use serde_json::Value;
use wasm_bindgen::JsValue;

/// A plain JS value (object, array, string, number, boolean, null) as JSON.
/// `undefined` and `null` become `Value::Null` (a tool's "no arguments").
pub(crate) fn from_js(value: &JsValue, what: &str) -> Result<Value, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(Value::Null);
    }
    let text = js_sys::JSON::stringify(value).map_err(|e| usage_error(&format!("{what} must be plain JSON data: {}", describe_js(&e))))?;
    let text = text.as_string().ok_or_else(|| usage_error(&format!("{what} must be plain JSON data (got a function or symbol)")))?;
    serde_json::from_str(&text).map_err(|e| usage_error(&format!("{what} must be plain JSON data: {e}")))
}

/// JSON text the engine wrote (a tool's reply) as a plain JS value.
pub(crate) fn raw_to_js(raw: &mentisdb_core::json_text::JsonText) -> JsValue {
    js_sys::JSON::parse(raw.get()).expect("the dispatcher writes valid JSON")
}

/// A JSON value as a plain JS value.
pub(crate) fn to_js(value: &Value) -> JsValue {
    let text = serde_json::to_string(value).expect("a serde_json::Value always serializes");
    js_sys::JSON::parse(&text).expect("serde_json output is valid JSON")
}
