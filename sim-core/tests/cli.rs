//! The command line as a user meets it: exit codes, CSV columns, and a reader that closes the pipe early.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sim-core"))
}

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data")
}

#[test]
fn validate_exit_codes() {
    let ok = bin().args(["validate", "--no-model-check"]).arg(data()).output().expect("run");
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stdout));
    let missing = bin().args(["validate", "/nonexistent/dir"]).output().expect("run");
    assert_eq!(missing.status.code(), Some(2));
    let usage = bin().args(["validate"]).output().expect("run");
    assert_eq!(usage.status.code(), Some(2));
    let broken = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/broken/claim-mismatch");
    let bad = bin().args(["validate", "--no-model-check"]).arg(broken).output().expect("run");
    assert_eq!(bad.status.code(), Some(1), "a dataset with errors exits 1");
}

#[test]
fn points_csv_starts_with_the_documented_columns() {
    let out = bin().args(["points", "--format", "csv"]).arg(data()).output().expect("run");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf8");
    let mut lines = text.lines();
    assert!(lines.next().expect("header").starts_with("model,mode,isl,osl,concurrency,output_tok_s"));
    assert!(text.contains("glm-5.2,tp2,512,512,32,1525,"), "the 1,525 tok/s point is listed");
    assert_eq!(lines.count(), 62);
}

#[test]
fn report_fabric_and_predict_csv_columns() {
    let r = bin().args(["report", "--format", "csv"]).arg(data()).output().expect("run");
    assert!(String::from_utf8_lossy(&r.stdout).starts_with("model,mode,isl,osl,concurrency,measured_tok_s,predicted_tok_s"));
    let f = bin().args(["fabric", "--format", "csv"]).arg(data()).output().expect("run");
    assert!(String::from_utf8_lossy(&f.stdout).starts_with("collective,bytes,measured_busbw_gbps,predicted_busbw_gbps"));
    let p = bin().args(["predict", "--mode", "tp2", "--concurrency", "1,32", "--format", "csv"]).arg(data().join("scenarios/glm-5.2.json")).output().expect("run");
    let text = String::from_utf8_lossy(&p.stdout).into_owned();
    assert!(text.starts_with("mode,isl,osl,concurrency,output_tok_s"), "{text}");
    assert_eq!(text.lines().count(), 1 + 2 * 2, "two workloads x two concurrencies");
    let bad = bin().args(["predict", "--mode", "tp3"]).arg(data().join("scenarios/glm-5.2.json")).output().expect("run");
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn closed_pipe_is_not_a_panic() {
    let mut child = bin().args(["points", "--format", "csv"]).arg(data()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let mut first = [0u8; 16];
    child.stdout.as_mut().expect("stdout").read_exact(&mut first).expect("read");
    drop(child.stdout.take());
    let status = child.wait().expect("wait");
    let mut err = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut err).expect("stderr");
    assert!(!err.contains("panicked"), "{err}");
    assert!(status.success(), "exit {status:?}, stderr {err}");
}
