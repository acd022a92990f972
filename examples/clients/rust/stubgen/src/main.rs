//! Rust stubs of .proto files with prost-build, called by tools/stubs.py the way protoc is:
//!
//!     protokube-stubgen --protoc=/usr/bin/protoc --out=DIR -Iproto -I... a.proto b.proto
//!
//! writes one module file per proto package into DIR and `mod.rs`, which nests them
//! (`k8s::io::api::core::v1`, ...): `include!("DIR/mod.rs")` in a crate depending on prost and
//! prost-types 0.14.6.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut protoc = None;
    let mut out = None;
    let mut includes = Vec::new();
    let mut protos = Vec::new();
    for arg in std::env::args().skip(1) {
        if let Some(path) = arg.strip_prefix("--protoc=") {
            protoc = Some(PathBuf::from(path));
        } else if let Some(path) = arg.strip_prefix("--out=") {
            out = Some(PathBuf::from(path));
        } else if let Some(path) = arg.strip_prefix("-I") {
            includes.push(PathBuf::from(path));
        } else {
            protos.push(PathBuf::from(arg));
        }
    }
    let (Some(protoc), Some(out)) = (protoc, out) else {
        eprintln!("usage: protokube-stubgen --protoc=PROTOC --out=DIR -IDIR... FILE.proto...");
        return ExitCode::from(2);
    };
    let mut config = prost_build::Config::new();
    config
        .protoc_executable(protoc)
        .out_dir(out)
        .include_file("mod.rs");
    match config.compile_protos(&protos, &includes) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{err}");
            ExitCode::FAILURE
        }
    }
}
