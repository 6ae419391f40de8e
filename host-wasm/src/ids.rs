//! The core's [`IdSource`] from `crypto.getRandomValues`.

use mentisdb_core::IdSource;
use wasm_bindgen::{JsCast, JsValue};

/// Fresh 128-bit ids from the Web Crypto CSPRNG of the current global
/// (window or worker).
#[derive(Debug, Clone, Copy, Default)]
pub struct CryptoIds;

/// The global's `crypto` object, or a description of why there is none.
pub(crate) fn global_crypto() -> Result<web_sys::Crypto, String> {
    let crypto = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("crypto")).map_err(|e| crate::error::describe_js(&e))?;
    crypto.dyn_into::<web_sys::Crypto>().map_err(|_| "this JavaScript environment has no Web Crypto (globalThis.crypto)".to_string())
}

impl IdSource for CryptoIds {
    fn next_id_bytes(&self) -> [u8; 16] {
        let mut bytes = [0u8; 16];
        // `MentisDb.open` checks that Web Crypto works before any id is drawn,
        // so a failure here means the environment broke underneath us; ids
        // must never repeat, so refusing to continue is the only safe answer.
        let crypto = global_crypto().unwrap_or_else(|e| panic!("crypto.getRandomValues unavailable: {e}"));
        crypto.get_random_values_with_u8_array(&mut bytes).unwrap_or_else(|e| panic!("crypto.getRandomValues failed: {}", crate::error::describe_js(&e)));
        bytes
    }
}
