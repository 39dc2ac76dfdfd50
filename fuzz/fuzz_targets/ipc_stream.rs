#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cairn_fuzzing::run("ipc_stream", data);
});
