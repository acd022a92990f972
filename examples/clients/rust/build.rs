//! Points the client at the stubs `make stubs LANG=rust` wrote: $PROTOKUBE_RUST_STUBS, or the
//! repository's stubs/rust.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=PROTOKUBE_RUST_STUBS");
    let stubs = match std::env::var_os("PROTOKUBE_RUST_STUBS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../stubs/rust"),
    };
    let module = stubs.join("mod.rs");
    assert!(
        module.exists(),
        "{} is missing: run `make stubs LANG=rust` first",
        module.display()
    );
    println!("cargo:rerun-if-changed={}", stubs.display());
    println!(
        "cargo:rustc-env=PROTOKUBE_RUST_STUBS_MOD={}",
        module.canonicalize().unwrap().display()
    );
}
