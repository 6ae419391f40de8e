//! Proof verifiers for a browser page: check a daemon's Merkle proofs and
//! signed checkpoints without trusting the daemon (or this module's
//! database): pure functions over the core's RFC 9162 and signed-note
//! verifiers ([`mentisdb_core::merkle`], [`mentisdb_core::checkpoint`]).
//!
//! ```js
//! import init, { verifyCheckpoint, verifyInclusion } from "./pkg/mentisdb_wasm.js";
//! await init();
//! const head = verifyCheckpoint(checkpointText, pinnedVerifierKey); // throws if not signed by it
//! verifyInclusion(proof.leaf_hash, proof.index, proof.tree_size, proof.hashes, head.root); // true
//! ```
//!
//! Hashes are lowercase or uppercase hex, as the daemon's proof tools return
//! them; sizes and indices are integers up to 2^53.

use mentisdb_core::checkpoint::{parse_verifier_key, verify_checkpoint as verify_note};
use mentisdb_core::merkle::{self, Hash};
use wasm_bindgen::prelude::*;

fn hash(field: &str, text: &str) -> Result<Hash, JsValue> {
    let mut h = [0u8; 32];
    hex::decode_to_slice(text.trim(), &mut h).map_err(|_| JsValue::from(js_sys::Error::new(&format!("{field} is not 64 hex digits"))))?;
    Ok(h)
}

fn hashes(field: &str, list: &[String]) -> Result<Vec<Hash>, JsValue> {
    list.iter().map(|h| hash(field, h)).collect()
}

fn size(field: &str, n: f64) -> Result<u64, JsValue> {
    if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_992.0 {
        Ok(n as u64)
    } else {
        Err(js_sys::Error::new(&format!("{field} must be a whole number from 0 to 2^53")).into())
    }
}

/// Whether `hashes` prove that the leaf `leafHash` is thought `index` of the
/// tree of `treeSize` thoughts whose root is `root` (RFC 9162 §2.1.3.2).
/// Throws only on malformed input (bad hex, a size that is not a whole number).
#[wasm_bindgen(js_name = verifyInclusion)]
pub fn verify_inclusion(leaf_hash: &str, index: f64, tree_size: f64, hashes_hex: Vec<String>, root: &str) -> Result<bool, JsValue> {
    Ok(merkle::verify_inclusion(&hash("leafHash", leaf_hash)?, size("index", index)?, size("treeSize", tree_size)?, &hashes("hashes", &hashes_hex)?, &hash("root", root)?))
}

/// Whether `hashes` prove that the tree of `first` thoughts (root
/// `firstRoot`) is a prefix of the tree of `second` (root `secondRoot`)
/// (RFC 9162 §2.1.4.2): the chain only grew.
#[wasm_bindgen(js_name = verifyConsistency)]
pub fn verify_consistency(first: f64, second: f64, hashes_hex: Vec<String>, first_root: &str, second_root: &str) -> Result<bool, JsValue> {
    Ok(merkle::verify_consistency(size("first", first)?, size("second", second)?, &hash("firstRoot", first_root)?, &hash("secondRoot", second_root)?, &hashes("hashes", &hashes_hex)?))
}

/// The tree head a checkpoint states, after checking that the key of
/// `verifierKey` (`<name>+<key id>+<base64 key>`, as `GET /v1/identity`
/// serves it) signed it: `{origin, tree_size, root}` (root in hex). Throws
/// when the note is malformed or not signed by that key.
#[wasm_bindgen(js_name = verifyCheckpoint, unchecked_return_type = "CheckpointHead")]
pub fn verify_checkpoint(checkpoint: &str, verifier_key: &str) -> Result<JsValue, JsValue> {
    let fail = |e: mentisdb_core::checkpoint::CheckpointError| JsValue::from(js_sys::Error::new(&e.to_string()));
    let (name, key) = parse_verifier_key(verifier_key).map_err(fail)?;
    let head = verify_note(checkpoint, &name, &key).map_err(fail)?;
    let out = js_sys::Object::new();
    js_sys::Reflect::set(&out, &"origin".into(), &head.origin.into())?;
    js_sys::Reflect::set(&out, &"tree_size".into(), &(head.tree_size as f64).into())?;
    js_sys::Reflect::set(&out, &"root".into(), &hex::encode(head.root).into())?;
    Ok(out.into())
}
