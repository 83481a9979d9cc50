//! Stamps the library with a fingerprint of its own source (`TWOTOWER_MODEL_FINGERPRINT`): the stored fits under
//! `data/fitted/` name the model they were computed by, and a library built from other source does not adopt
//! them. Comment lines and blank lines are left out (a reworded comment computes the same fits); the CLI's own
//! folder `src/bin/` is left out (it renders answers, it computes none).

use std::path::Path;

/// FNV-1a over bytes, continuing from `h`.
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn sources(root: &Path, dir: &Path, out: &mut Vec<(String, std::path::PathBuf)>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p != root.join("bin") {
                sources(root, &p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root).unwrap_or(&p).to_string_lossy().replace('\\', "/");
            out.push((rel, p));
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (rel, p) in &files {
        let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
        h = fnv(h, rel.as_bytes());
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("//")) {
            h = fnv(fnv(h, line.as_bytes()), b"\n");
        }
    }
    println!("cargo:rustc-env=TWOTOWER_MODEL_FINGERPRINT={h:016x}");
}
