//! Looks for `ferrodl_tensor::active_gemm_kernel()` in the engine's source: when the tensor crate
//! has run-time GEMM kernel dispatch (FMA / AMX), the bench reports which kernel ran; before that
//! it reports "matrixmultiply (no dispatch)". A cfg, not a feature, so that the bench builds
//! against the engine as it is either way.
use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(ferrodl_gemm_dispatch)");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../native/tensor/src");
    println!("cargo::rerun-if-changed={}", src.display());
    let mut found = false;
    let mut stack = vec![src];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                println!("cargo::rerun-if-changed={}", p.display());
                if std::fs::read_to_string(&p)
                    .is_ok_and(|s| s.contains("pub fn active_gemm_kernel"))
                {
                    found = true;
                }
            }
        }
    }
    if found {
        println!("cargo::rustc-cfg=ferrodl_gemm_dispatch");
    }
}
