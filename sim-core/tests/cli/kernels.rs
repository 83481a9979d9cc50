//! `--kernels`: a kernel table a user measured on their own GPU, in place of the dataset's table of that GPU, for
//! `plan`, `predict` and `calibrate`, without editing the dataset.

use super::{bin, data};
use std::path::{Path, PathBuf};

/// The shipped H100 table as a user's own (`my-h100`) whose GEMMs all ran twice as long, written into `dir`.
fn slower_table(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(data().join("kernels/h100-sxm.json")).expect("the shipped table");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("json");
    v["id"] = "my-h100".into();
    for row in v["gemm"].as_array_mut().expect("gemm rows") {
        for t in row["seconds"].as_array_mut().expect("seconds") {
            *t = (t.as_f64().expect("a time") * 2.0).into();
        }
    }
    let path = dir.join("my-h100.json");
    std::fs::write(&path, v.to_string()).expect("write");
    path
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("twotower-kernels-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    dir
}

/// The roofline profile reads the table: with the user's slower GEMMs its plan names their table and predicts
/// less throughput at a load where GEMMs matter; `predict` of a scenario on the roofline profile does the same.
#[test]
fn a_users_table_replaces_the_table_of_its_gpu() {
    let dir = temp_dir("plan");
    let table = slower_table(&dir);
    let plan = |kernels: Option<&Path>| {
        let mut c = bin();
        c.args(["plan", "--model", "llama-3.3-70b-instruct", "--hardware", "h100-sxm", "--engine", "roofline"]);
        c.args(["--workload", "chat", "--concurrency", "64", "--format", "csv"]).arg("--data").arg(data());
        if let Some(k) = kernels {
            c.arg("--kernels").arg(k);
        }
        let out = c.output().expect("run");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (String::from_utf8(out.stdout).expect("utf8"), String::from_utf8(out.stderr).expect("utf8"))
    };
    let single = |csv: &str| -> f64 {
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().expect("header").split(',').collect();
        let col = header.iter().position(|h| *h == "single_tok_s").expect("a single_tok_s column");
        lines.next().expect("a row").split(',').nth(col).expect("a value").parse().expect("a number")
    };
    let ((shipped, _), (own, note)) = (plan(None), plan(Some(&table)));
    assert!(note.contains("in place of h100-sxm"), "{note}");
    assert!(single(&own) < single(&shipped), "{own}\n{shipped}");

    let scenario = dir.join("nim-on-the-roofline.json");
    let text = std::fs::read_to_string(data().join("scenarios/nim-llama-3.3-70b-instruct-h100x2.json")).expect("nim");
    std::fs::write(&scenario, text.replace("\"engine\": \"nim-trtllm\"", "\"engine\": \"roofline\"")).expect("write");
    let predict = |kernels: Option<&Path>| {
        let mut c = bin();
        c.arg("predict").arg(&scenario).arg("--data").arg(data()).args(["--concurrency", "25", "--format", "csv"]);
        if let Some(k) = kernels {
            c.arg("--kernels").arg(k);
        }
        let out = c.output().expect("run");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).expect("utf8")
    };
    assert_ne!(predict(None), predict(Some(&table)));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A missing file is a usage error (exit 2); a table that is no kernel table, or names a GPU the dataset does not
/// hold, is a finding (exit 1) that names the file and the field.
#[test]
fn a_bad_table_is_refused_with_its_file_and_field() {
    let dir = temp_dir("bad");
    let table = slower_table(&dir);
    let plan = |kernels: &Path| {
        let mut c = bin();
        c.args(["plan", "--model", "llama-3.3-70b-instruct", "--hardware", "h100-sxm", "--workload", "chat"]);
        c.arg("--data").arg(data()).arg("--kernels").arg(kernels);
        let out = c.output().expect("run");
        (out.status.code(), String::from_utf8(out.stderr).expect("utf8"))
    };
    let (code, err) = plan(&dir.join("absent.json"));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("absent.json"), "{err}");

    let text = std::fs::read_to_string(&table).expect("table");
    std::fs::write(&table, text.replace("\"hardware\":\"h100-sxm\"", "\"hardware\":\"no-such-gpu\"")).expect("write");
    let (code, err) = plan(&table);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("my-h100.json") && err.contains("/hardware") && err.contains("no-such-gpu"), "{err}");

    let (code, err) = plan(&data().join("models/glm-5.2.json"));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("glm-5.2.json:4:11") && err.contains("not a kernel table"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
