//! Build information baked into libferrodl so the Java loader can check that the native library
//! and the jar belong together. No heavy work here.
use std::process::Command;

fn main() {
    let sha = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    let features: Vec<String> = std::env::vars()
        .filter_map(|(k, _)| k.strip_prefix("CARGO_FEATURE_").map(|f| f.to_lowercase()))
        .collect();
    println!("cargo:rustc-env=FERRODL_GIT_SHA={sha}");
    println!(
        "cargo:rustc-env=FERRODL_TARGET={}",
        std::env::var("TARGET").unwrap_or_default()
    );
    println!(
        "cargo:rustc-env=FERRODL_PROFILE={}",
        std::env::var("PROFILE").unwrap_or_default()
    );
    println!("cargo:rustc-env=FERRODL_FEATURES={}", features.join(","));
    // HEAD names the branch; the branch's commit lives in refs/heads (a directory: cargo scans it)
    // or, after `git gc`, in packed-refs. Watching all three keeps gitSha current on every commit.
    println!("cargo:rerun-if-changed=.git/HEAD");
    for path in [".git/refs/heads", ".git/packed-refs"] {
        if std::path::Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
