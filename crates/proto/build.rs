//! Compiles every `.proto` file under `proto/` with prost, using the vendored
//! protoc so that no system protoc is needed.

use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "proto") {
            out.push(path);
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let mut files = Vec::new();
    collect(Path::new("proto"), &mut files)?;
    files.sort();
    println!("cargo:rerun-if-changed=proto");
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc);
    config.bytes(["."]);
    config.compile_protos(&files, &["proto"])?;
    Ok(())
}
