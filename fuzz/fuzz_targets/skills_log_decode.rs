#![no_main]
#[path = "../src/targets.rs"]
#[allow(dead_code)]
mod targets;
libfuzzer_sys::fuzz_target!(|data: &[u8]| targets::skills_log_decode(data));
