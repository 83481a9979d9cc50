//! End to end: serves dist/ locally, drives headless Chromium through chromedriver, and checks the explorer
//! draws, reacts to its controls, restores and repairs URLs, embeds, plans (preset, pasted config.json), exports
//! PNG and CSV, shows the accuracy tab, calibrates the planner on pasted vLLM results, shows hover tooltips, sizes the canvas by devicePixelRatio, stays within its size budget, and logs
//! no errors. Needs dist/ (scripts/build-app.sh); set TWOTOWER_SKIP_BROWSER=1 to skip.

use fantoccini::actions::{InputSource, MouseActions, PointerAction};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BUDGET_GZIP_BYTES: u64 = 500 * 1024;

fn dist() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../dist")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Kills chromedriver (and with it Chromium) when the test ends, passing or not.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A static file server for dist/ on 127.0.0.1; the thread dies with the test process.
fn serve(root: PathBuf) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let root = root.clone();
            std::thread::spawn(move || {
                let _ = respond(stream, &root);
            });
        }
    });
    port
}

fn respond(mut stream: TcpStream, root: &Path) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" || h == "\n" {
            break;
        }
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split(['?', '#']).next().unwrap_or("/");
    let rel = if path == "/" { "index.html" } else { path.trim_start_matches('/') };
    let file = root.join(rel);
    let ok = !rel.contains("..") && file.is_file();
    let (status, body) = if ok { ("200 OK", std::fs::read(&file)?) } else { ("404 Not Found", b"not found".to_vec()) };
    let ctype = match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript",
        Some("wasm") => "application/wasm",
        Some("css") => "text/css",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(&body)?;
    stream.flush()
}

fn gzipped_size(dir: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            total += gzipped_size(&p);
        } else {
            let mut raw = Vec::new();
            std::fs::File::open(&p).unwrap().read_to_end(&mut raw).unwrap();
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            enc.write_all(&raw).unwrap();
            total += enc.finish().unwrap().len() as u64;
        }
    }
    total
}

async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
}

/// The chart wrapper's data attributes: (draws, model, predicted sum).
async fn chart_state(c: &Client) -> (u64, String, String) {
    let v = js(
        c,
        "const w = document.querySelector('.chart-wrap'); if (!w) return null; \
         return [Number(w.dataset.draws || 0), w.dataset.model || '', w.dataset.predictedSum || ''];",
    )
    .await;
    match v {
        Value::Array(a) => {
            (a[0].as_u64().unwrap_or(0), a[1].as_str().unwrap_or("").into(), a[2].as_str().unwrap_or("").into())
        }
        _ => (0, String::new(), String::new()),
    }
}

async fn wait_draws_above(c: &Client, n: u64, what: &str) -> u64 {
    let start = Instant::now();
    loop {
        let (d, _, _) = chart_state(c).await;
        if d > n {
            return d;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let errors = js(c, "return window.__errors || []").await;
            panic!("{what}: no draw after 20 s (draws = {d}); page errors: {errors}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Non-white pixels of the canvas and a hash of all its pixels.
async fn pixels(c: &Client) -> (u64, String) {
    let v = js(
        c,
        "const c = document.getElementById('chart'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; \
         let n = 0, h = 2166136261 >>> 0; \
         for (let i = 0; i < d.length; i += 4) { if (d[i] < 250 || d[i+1] < 250 || d[i+2] < 250) n++; \
           h = Math.imul(h ^ (d[i] + 7 * d[i+1] + 13 * d[i+2]), 16777619) >>> 0; } \
         return [n, String(h)];",
    )
    .await;
    (v[0].as_u64().unwrap(), v[1].as_str().unwrap().to_string())
}

async fn assert_no_errors(c: &Client, page: &str) {
    let errors = js(c, "return window.__errors || ['__errors hook missing']").await;
    assert_eq!(errors, json!([]), "console errors or panics on {page}");
}

async fn set_value(c: &Client, selector: &str, value: &str, event: &str) {
    let script = format!(
        "const e = document.querySelector({selector:?}); e.value = {value:?}; e.dispatchEvent(new Event({event:?}, {{bubbles: true}})); return e.value;"
    );
    js(c, &script).await;
}

async fn run(c: &Client, base: &str) {
    // 1. First load: it draws, with ink on the canvas, and reports the time to first draw.
    c.goto(base).await.unwrap();
    let d0 = wait_draws_above(c, 0, "first load").await;
    let first_ms = js(c, "return window.__firstDrawMs").await;
    println!("time from navigation to first draw: {:.0} ms", first_ms.as_f64().unwrap_or(f64::NAN));
    let (ink, hash0) = pixels(c).await;
    assert!(ink > 2000, "canvas looks empty: {ink} non-white pixels");
    assert_eq!(js(c, "return document.querySelectorAll('table.points tbody tr').length > 0").await, json!(true));
    // The caption says what the shaded band is, with its size per mode.
    let band = js(c, "const e = document.getElementById('band-caption'); return e && e.innerText;").await;
    let band = band.as_str().unwrap_or("");
    assert!(
        band.contains("band: 90th-percentile error of the fitted points for this model and mode"),
        "band caption: {band}"
    );
    assert!(
        band.contains("single \u{b1}") && band.contains("tp2 \u{b1}") && band.contains('%'),
        "band caption has no numbers: {band}"
    );
    println!("band caption: {band}");
    assert_no_errors(c, "first load").await;

    // 2. Model and workload pickers redraw the chart.
    set_value(c, "#model", "minimax-m3", "change").await;
    let d1 = wait_draws_above(c, d0, "model change").await;
    let (_, model, _) = chart_state(c).await;
    assert_eq!(model, "minimax-m3");
    set_value(c, "#workload", "1", "change").await;
    let d2 = wait_draws_above(c, d1, "workload change").await;
    let (_, hash2) = pixels(c).await;
    assert_ne!(hash0, hash2, "chart pixels unchanged after switching model and workload");
    let url = c.current_url().await.unwrap();
    assert!(
        url.as_str().contains("model=minimax-m3") && url.as_str().contains("workload=8192-1024"),
        "URL not updated: {url}"
    );

    // 3. A what-if control moves the predicted curves.
    let (_, _, sum_before) = chart_state(c).await;
    set_value(c, "#knob-hbm", "20", "input").await;
    let d3 = wait_draws_above(c, d2, "what-if change").await;
    let (_, _, sum_after) = chart_state(c).await;
    let (_, hash3) = pixels(c).await;
    assert_ne!(sum_before, sum_after, "predicted values unchanged after moving the HBM control");
    assert_ne!(hash2, hash3, "chart pixels unchanged after moving the HBM control");
    assert!(c.current_url().await.unwrap().as_str().contains("hbm=20"));
    // Reported, not asserted: timing on a shared 2-core machine is noise; the README records the figure.
    let redraw = c
        .execute("return document.querySelector('[data-last-redraw-ms]').getAttribute('data-last-redraw-ms')", vec![])
        .await
        .unwrap();
    println!("recompute + redraw after a what-if change: {} ms", redraw.as_str().unwrap_or("?"));

    // 4. Reloading the URL restores the state.
    let saved = c.current_url().await.unwrap();
    c.goto(saved.as_str()).await.unwrap();
    wait_draws_above(c, 0, "reload").await;
    assert_eq!(chart_state(c).await.2, sum_after, "reloaded URL did not restore the what-if state");
    assert_eq!(js(c, "return document.getElementById('model').value").await, json!("minimax-m3"));

    // 5. Gain and fabric tabs draw.
    for view in ["gain", "fabric"] {
        let before = chart_state(c).await.0;
        js(c, &format!("document.querySelector('.tab[data-view={view}]').click(); return 1;")).await;
        wait_draws_above(c, before, view).await;
        assert!(c.current_url().await.unwrap().as_str().contains(&format!("view={view}")));
        assert!(pixels(c).await.0 > 2000, "{view} chart looks empty");
    }
    let _ = d3;
    assert_no_errors(c, "after interaction").await;

    // 6. Embed mode: chart only.
    c.goto(&format!("{base}?model=glm-5.3&embed=1")).await.unwrap();
    wait_draws_above(c, 0, "embed").await;
    assert!(pixels(c).await.0 > 2000, "embedded chart looks empty");
    assert!(c.find(Locator::Css("#model")).await.is_err(), "controls shown in embed mode");
    assert!(c.find(Locator::Css("header")).await.is_err(), "header shown in embed mode");
    assert_no_errors(c, "embed").await;

    // 6b. The planner embeds too: a chart, no controls, no verdict.
    c.goto(&format!("{base}?view=plan&embed=1")).await.unwrap();
    wait_draws_above(c, 0, "planner embed").await;
    assert!(pixels(c).await.0 > 2000, "embedded planner chart looks empty");
    for sel in [".controls", "#plan-hw", "#verdict", "header", ".tabs"] {
        assert!(c.find(Locator::Css(sel)).await.is_err(), "{sel} shown in the embedded planner");
    }
    assert_no_errors(c, "planner embed").await;

    // 6c. Gain view of glm-5.3 at 512/512: the report's 27x claim is placed (pair at 256 over one station at
    // 32, marked *) and the page gives its caveat and the equal-concurrency ratio.
    c.goto(&format!("{base}?view=gain&model=glm-5.3&workload=512-512")).await.unwrap();
    wait_draws_above(c, 0, "gain glm-5.3").await;
    assert!(pixels(c).await.0 > 2000, "gain chart looks empty");
    let text = js(c, "return document.body.innerText").await;
    let text = text.as_str().unwrap_or("");
    assert!(text.contains("27x*"), "27x claim not shown: {text}");
    assert!(
        text.contains("compares different concurrencies (pair at 256 streams, one station at 32)"),
        "27x caveat missing: {text}"
    );
    assert!(text.contains("853 / 188 = 4.5x"), "equal-concurrency ratio missing: {text}");
    let note = js(c, "const e = document.getElementById('claim-notes'); return e && e.innerText;").await;
    println!("gain claim note: {}", note.as_str().unwrap_or("(none)"));
    assert!(note.as_str().unwrap_or("").contains("27x"), "no note under the chart for the 27x claim");
    assert_eq!(
        js(c, "return document.querySelectorAll('#claims li').length >= 5").await,
        json!(true),
        "claims of glm-5.3 not listed"
    );
    assert_no_errors(c, "gain claims").await;

    // 6d. Values that are not points: glm-5.3 tp2 8192/1024's range (573 to 611 at 32 through 256 streams) and
    // glm-5.2's values without a concurrency (710, 725, 740) are listed under the throughput chart, with the
    // diamonds' hit points after the published points and a tooltip that says the concurrency is not stated.
    c.goto(&format!("{base}?model=glm-5.3&workload=8192-1024")).await.unwrap();
    wait_draws_above(c, 0, "glm-5.3 8192/1024").await;
    let table = js(c, "const t = document.querySelector('table.points'); return t && t.innerText;").await;
    let table = table.as_str().unwrap_or("");
    assert!(
        table.contains("573") && table.contains("611") && table.contains("range 32-256"),
        "range not in the table: {table}"
    );
    let range_row = js(c, "const r = document.querySelector('table.points tr.stated'); return r && r.innerText;").await;
    println!("range row: {}", range_row.as_str().unwrap_or("(none)").replace(['\n', '\t'], " | "));
    assert!(!range_row.as_str().unwrap_or("").contains('%'), "a range has an error %: {range_row}");
    c.goto(&format!("{base}?model=glm-5.2&workload=8192-1024")).await.unwrap();
    wait_draws_above(c, 0, "glm-5.2 8192/1024").await;
    let table = js(c, "const t = document.querySelector('table.points'); return t && t.innerText;").await;
    let table = table.as_str().unwrap_or("");
    assert!(
        table.contains("710") && table.contains("concurrency not stated (likely 64)"),
        "unplaced values not in the table: {table}"
    );
    assert_eq!(js(c, "return document.querySelectorAll('table.points tr.stated').length").await, json!(3));
    let hits = js(c, "return document.querySelector('.chart-wrap').dataset.hitPoints").await;
    let hits: Vec<(f64, f64)> = hits
        .as_str()
        .unwrap()
        .split(';')
        .filter_map(|p| p.split_once(',').and_then(|(x, y)| Some((x.parse().ok()?, y.parse().ok()?))))
        .collect();
    let points =
        js(c, "return document.querySelectorAll('table.points tbody tr:not(.stated)').length").await.as_u64().unwrap()
            as usize;
    assert_eq!(hits.len(), points + 3, "hit points: {hits:?}");
    let dims = js(c, "const c = document.getElementById('chart'); return [c.clientWidth, c.clientHeight];").await;
    let (cw, ch) = (dims[0].as_f64().unwrap(), dims[1].as_f64().unwrap());
    let canvas = c.find(Locator::Css("#chart")).await.unwrap();
    let (x, y) = hits[points];
    let act = MouseActions::new("mouse".into()).then(PointerAction::MoveToElement {
        element: canvas.clone(),
        duration: Some(Duration::from_millis(20)),
        x: (x - cw / 2.0).round(),
        y: (y - ch / 2.0).round(),
    });
    c.perform_actions(act).await.unwrap();
    let t =
        wait_for(c, "const t = document.getElementById('chart-tooltip'); return t && t.innerText;", "unplaced tooltip")
            .await;
    c.release_actions().await.unwrap();
    let t = t.as_str().unwrap_or("");
    println!("unplaced tooltip: {}", t.replace('\n', " / "));
    assert!(t.contains("not stated") && t.contains("710") && t.contains("likely"), "unplaced tooltip: {t}");
    assert_no_errors(c, "ranges and unplaced values").await;

    // 7. Broken parameters: a visible warning, defaults, and still a chart.
    c.goto(&format!("{base}?model=nope&gpu_mem=abc&hbm=-3&view=zzz")).await.unwrap();
    wait_draws_above(c, 0, "broken link").await;
    let warning = c.find(Locator::Css(".url-warning")).await.expect("no .url-warning element");
    assert!(warning.is_displayed().await.unwrap(), "url-warning not visible");
    let text = warning.text().await.unwrap();
    assert!(text.contains("nope") && text.contains("gpu_mem"), "warning text: {text}");
    assert!(pixels(c).await.0 > 2000, "chart missing after broken link");
    assert_eq!(chart_state(c).await.1, "glm-5.2", "did not fall back to the default model");
    assert_no_errors(c, "broken link").await;

    planner(c, base).await;
    exports(c).await;
    accuracy(c, base).await;
    calibration(c, base).await;
    hover(c, base).await;
}

/// Step 11, the accuracy tab: the fitted overall median (all points) and the predictive one (fit on one station,
/// predict the pair; computed when the tab opens), both within the dataset's targets; coefficients and flagged
/// points listed.
async fn accuracy(c: &Client, base: &str) {
    c.goto(base).await.unwrap();
    wait_draws_above(c, 0, "accuracy: first load").await;
    js(c, "document.querySelector('.tab[data-view=accuracy]').click(); return 1;").await;
    let start = Instant::now();
    let fitted = wait_for(
        c,
        "const e = document.getElementById('acc-fitted-overall'); return e && [e.dataset.median, e.innerText];",
        "fitted overall",
    )
    .await;
    let predictive = wait_for(
        c,
        "const e = document.getElementById('acc-predictive-overall'); return e && [e.dataset.median, e.innerText];",
        "predictive overall",
    )
    .await;
    println!(
        "accuracy: single-station fit shown {:.0} ms after the tab was clicked",
        start.elapsed().as_secs_f64() * 1e3
    );
    assert!(c.current_url().await.unwrap().as_str().contains("view=accuracy"));
    let median = |v: &Value| v[0].as_str().and_then(|s| s.parse::<f64>().ok()).unwrap_or(f64::NAN);
    let (fm, pm) = (median(&fitted), median(&predictive));
    println!(
        "accuracy: fitted overall [{}], predictive overall [{}]",
        fitted[1].as_str().unwrap_or("").replace(['\n', '\t'], " | "),
        predictive[1].as_str().unwrap_or("").replace(['\n', '\t'], " | ")
    );
    assert!(fm > 0.0 && fm <= 12.0, "fitted overall median {fm}");
    assert!(pm > 0.0 && pm <= 25.0, "predictive overall median {pm}");
    for (v, m) in [(&fitted, fm), (&predictive, pm)] {
        assert!(v[1].as_str().unwrap_or("").contains(&format!("{m:.1}%")), "median not shown: {v}");
    }
    let text = js(c, "return document.getElementById('accuracy').innerText").await;
    let text = text.as_str().unwrap_or("");
    assert!(text.contains("no single-station run"), "DeepSeek note missing");
    assert!(
        js(c, "return document.querySelectorAll('#acc-coefficients tbody tr').length").await.as_u64().unwrap_or(0)
            >= 10
    );
    assert!(js(c, "return document.querySelectorAll('#acc-flagged tbody tr').length").await.as_u64().unwrap_or(0) >= 1);
    assert!(text.contains("hbm_efficiency") && text.contains("fitted on"), "coefficients or their basis missing");
    // The chart is hidden here, and draws again at full width on the way back.
    let before = chart_state(c).await.0;
    js(c, "document.querySelector('.tab[data-view=explorer]').click(); return 1;").await;
    wait_draws_above(c, before, "back from accuracy").await;
    assert!(pixels(c).await.0 > 2000, "chart empty after the accuracy tab");
    assert_no_errors(c, "accuracy").await;
}

fn sample(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("import-samples").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Step 12: pasting three `vllm bench serve` results into the planner calibrates it (3 points, with the fit's
/// error) and changes the plan's numbers; a truncated result names the problem instead.
async fn calibration(c: &Client, base: &str) {
    c.goto(&format!("{base}?view=plan&model=glm-5.2&isl=1024&osl=1024&cmax=64")).await.unwrap();
    let d0 = wait_draws_above(c, 0, "calibration: planner").await;
    let (_, _, sum0) = chart_state(c).await;
    let (_, text0) = verdict(c).await;
    let three = ["vllm-serve-c1.json", "vllm-serve-c8.json", "vllm-serve-c32.json"]
        .iter()
        .map(|f| sample(f).trim().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    set_value(c, "#plan-meas", &three, "input").await;
    let status = wait_for(
        c,
        "const e = document.getElementById('plan-calibration'); return e && e.innerText;",
        "calibration status",
    )
    .await;
    let status = status.as_str().unwrap_or("");
    println!("calibration: {status}");
    assert!(status.contains("Calibrated on 3 points") && status.contains("median error"), "status: {status}");
    wait_draws_above(c, d0, "calibrated plan").await;
    let (_, _, sum1) = chart_state(c).await;
    let (_, text1) = verdict(c).await;
    assert_ne!(sum0, sum1, "calibration did not change the plan's numbers");
    assert_ne!(text0, text1, "calibration did not change the verdict's numbers");
    assert!(text1.contains("Calibrated on your 3 measured points"), "verdict: {text1}");
    let note = js(c, "const e = document.getElementById('plan-meas-link'); return e && e.innerText;").await;
    assert!(note.as_str().unwrap_or("").contains("share link"), "share-link note: {note}");
    // A truncated result: its problem, named, and the published fit again.
    let cut = format!("{}\n{}", sample("vllm-serve-c1.json").trim(), sample("broken-truncated.json"));
    set_value(c, "#plan-meas", &cut, "input").await;
    let err = wait_for(
        c,
        "const e = document.getElementById('plan-meas-error'); return e && e.innerText;",
        "calibration error",
    )
    .await;
    let err = err.as_str().unwrap_or("");
    println!("calibration error: {}", err.replace('\n', " / "));
    assert!(err.contains("truncated") && err.contains("pasted result 2"), "error: {err}");
    assert!(c.find(Locator::Css("#plan-calibration")).await.is_err(), "stale calibration status shown");
    wait_for(c, "return document.querySelector('.chart-wrap').dataset.predictedSum", "redraw").await;
    assert_no_errors(c, "calibration").await;
}

/// A small DeepSeek-V3-shaped config.json (MLA, 256 routed experts, top-8, one MTP layer).
const V3_CONFIG: &str = r#"{"architectures": ["DeepseekV3ForCausalLM"], "num_hidden_layers": 61, "hidden_size": 7168,
  "num_attention_heads": 128, "num_key_value_heads": 128, "vocab_size": 129280, "kv_lora_rank": 512,
  "qk_rope_head_dim": 64, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "v_head_dim": 128,
  "n_routed_experts": 256, "num_experts_per_tok": 8, "n_shared_experts": 1, "intermediate_size": 18432,
  "moe_intermediate_size": 2048, "first_k_dense_replace": 3, "num_nextn_predict_layers": 1}"#;

/// The verdict box: (recommended mode, full text).
async fn verdict(c: &Client) -> (String, String) {
    let v =
        js(c, "const v = document.getElementById('verdict'); return v ? [v.dataset.mode || '', v.innerText] : null;")
            .await;
    match v {
        Value::Array(a) => (a[0].as_str().unwrap_or("").into(), a[1].as_str().unwrap_or("").into()),
        _ => panic!("no #verdict element"),
    }
}

async fn wait_for(c: &Client, script: &str, what: &str) -> Value {
    let start = Instant::now();
    loop {
        let v = js(c, script).await;
        if !v.is_null() && v != json!(false) {
            return v;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let errors = js(c, "return window.__errors || []").await;
            panic!("{what}: not seen after 20 s; page errors: {errors}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Step 8, the planner: loads from a URL, gives a verdict, draws, reacts to the hardware preset, plans a
/// pasted config.json and shows a broken one's error inline.
async fn planner(c: &Client, base: &str) {
    c.goto(&format!("{base}?view=plan&hw=dgx-spark&model=glm-5.3-flash&isl=8192&osl=1024&cmax=128")).await.unwrap();
    let d0 = wait_draws_above(c, 0, "planner load").await;
    assert!(c.find(Locator::Css(".url-warning")).await.is_err(), "planner URL produced warnings");
    let (mode0, text0) = verdict(c).await;
    println!("planner verdict (glm-5.3-flash on DGX Spark): [{mode0}] {}", text0.replace('\n', " / "));
    assert!(!mode0.is_empty(), "no recommended mode: {text0}");
    assert_eq!(js(c, "return document.getElementById('verdict').dataset.fits").await, json!("true"), "{text0}");
    assert!(text0.contains("Why:"), "verdict has no reason: {text0}");
    assert!(pixels(c).await.0 > 2000, "planner chart looks empty");
    assert_eq!(js(c, "return document.getElementById('plan-hw').value").await, json!("dgx-spark"));
    // 8 concurrency levels (1..128) x 3 modes, and the placement table's two setups.
    assert_eq!(js(c, "return document.querySelectorAll('#plan-table tbody tr').length").await, json!(24));
    assert_eq!(js(c, "return document.querySelectorAll('#plan-placement tbody tr').length").await, json!(2));
    let (_, _, sum0) = chart_state(c).await;

    set_value(c, "#plan-hw", "h200-sxm", "change").await;
    let d1 = wait_draws_above(c, d0, "hardware preset change").await;
    let (mode1, text1) = verdict(c).await;
    let (_, _, sum1) = chart_state(c).await;
    println!("planner verdict (glm-5.3-flash on 8x H200): [{mode1}] {}", text1.replace('\n', " / "));
    assert!(sum0 != sum1 && text0 != text1, "changing the preset changed neither the numbers nor the verdict");
    assert!(c.current_url().await.unwrap().as_str().contains("hw=h200-sxm"));
    // The preset's GPU memory is shown in its field.
    let mem = js(c, "return Number(document.getElementById('plan-hw_mem').value)").await;
    assert!(mem.as_f64().unwrap_or(0.0) > 100.0, "GPU memory field shows {mem}");

    // A field edit goes into the URL and the numbers.
    set_value(c, "#plan-hw_hbm", "9", "change").await;
    let d2 = wait_draws_above(c, d1, "HBM field change").await;
    assert!(c.current_url().await.unwrap().as_str().contains("hw_hbm=9"));
    assert_ne!(chart_state(c).await.2, sum1, "HBM field did not change the prediction");

    // Paste a config.json.
    set_value(c, "#plan-src", "hf", "change").await;
    wait_for(c, "return document.getElementById('plan-hf-error') !== null", "empty config message").await;
    set_value(c, "#plan-hf", V3_CONFIG, "input").await;
    wait_draws_above(c, d2, "pasted config").await;
    wait_for(c, "const v = document.getElementById('verdict'); return v && v.dataset.mode !== '' && !document.getElementById('plan-hf-error');", "plan from the pasted config").await;
    let (mode2, text2) = verdict(c).await;
    println!("planner verdict (pasted DeepSeek-V3 config on 8x H200): [{mode2}] {}", text2.replace('\n', " / "));
    assert!(pixels(c).await.0 > 2000, "chart empty after pasting a config");
    assert!(c.current_url().await.unwrap().as_str().contains("src=hf"));
    // A broken config: its error inline, no panic.
    set_value(c, "#plan-hf", "{\"num_hidden_layers\": 61,", "input").await;
    let err =
        wait_for(c, "const e = document.getElementById('plan-hf-error'); return e && e.innerText;", "config error")
            .await;
    assert!(err.as_str().unwrap_or("").contains("not valid JSON"), "config error text: {err}");
    set_value(c, "#plan-hf", V3_CONFIG, "input").await;
    wait_for(c, "return !document.getElementById('plan-hf-error')", "error cleared").await;
    // The whole state is in the URL: reloading restores the pasted plan.
    let saved = c.current_url().await.unwrap();
    c.goto(saved.as_str()).await.unwrap();
    wait_draws_above(c, 0, "planner reload").await;
    assert_eq!(verdict(c).await, (mode2, text2), "reloading the planner URL did not restore the plan");
    assert_no_errors(c, "planner").await;
}

/// 9. The export buttons produce a PNG data URL and a CSV blob with the planner's header.
async fn exports(c: &Client) {
    js(c, "window.__lastExport = null; document.getElementById('export-csv').click(); return 1;").await;
    let csv = js(c, "const e = window.__lastExport; return e && [e.kind, e.href, e.text];").await;
    assert_eq!(csv[0], json!("csv"));
    assert!(csv[1].as_str().unwrap().starts_with("blob:"), "CSV href: {}", csv[1]);
    let text = csv[2].as_str().unwrap();
    assert!(text.starts_with("mode,concurrency,output_tok_s,ttft_s,tpot_ms,gain_over_single,bound\n"), "CSV: {text}");
    assert!(text.lines().count() > 3);
    js(c, "window.__lastExport = null; document.getElementById('export-png').click(); return 1;").await;
    let png = js(c, "const e = window.__lastExport; return e && [e.kind, e.href.slice(0, 30), e.href.length];").await;
    assert_eq!(png[0], json!("png"));
    assert!(png[1].as_str().unwrap().starts_with("data:image/png"), "PNG href: {}", png[1]);
    assert!(png[2].as_u64().unwrap() > 5000, "PNG suspiciously small");
    assert_no_errors(c, "exports").await;
}

/// Step 10: hovering each published point shows its tooltip with the source quote; the dip says why it is
/// flagged. The canvas backing store also follows devicePixelRatio.
async fn hover(c: &Client, base: &str) {
    c.goto(&format!("{base}?model=glm-5.2&workload=512-512")).await.unwrap();
    wait_draws_above(c, 0, "hover page").await;
    let dims = js(c, "const c = document.getElementById('chart'); return [c.width, c.height, c.clientWidth, c.clientHeight, window.devicePixelRatio];").await;
    let (w, h, cw, ch, dpr) = (
        dims[0].as_f64().unwrap(),
        dims[1].as_f64().unwrap(),
        dims[2].as_f64().unwrap(),
        dims[3].as_f64().unwrap(),
        dims[4].as_f64().unwrap(),
    );
    assert_eq!((w, h), ((cw * dpr).round(), (ch * dpr).round()), "canvas backing store not sized by devicePixelRatio");
    let hits = js(c, "return document.querySelector('.chart-wrap').dataset.hitPoints").await;
    let hits: Vec<(f64, f64)> = hits
        .as_str()
        .unwrap()
        .split(';')
        .filter_map(|p| p.split_once(',').and_then(|(x, y)| Some((x.parse().ok()?, y.parse().ok()?))))
        .collect();
    assert_eq!(hits.len(), 7, "hit points: {hits:?}");
    let canvas = c.find(Locator::Css("#chart")).await.unwrap();
    let mut texts = Vec::new();
    for (x, y) in &hits {
        let act = MouseActions::new("mouse".into()).then(PointerAction::MoveToElement {
            element: canvas.clone(),
            duration: Some(Duration::from_millis(20)),
            x: (x - cw / 2.0).round(),
            y: (y - ch / 2.0).round(),
        });
        c.perform_actions(act).await.unwrap();
        let t = wait_for(c, "const t = document.getElementById('chart-tooltip'); return t && t.innerText;", "tooltip")
            .await;
        texts.push(t.as_str().unwrap().to_string());
    }
    c.release_actions().await.unwrap();
    for t in &texts {
        assert!(
            t.contains("measured") && t.contains("predicted") && t.contains('%') && t.contains('\u{201c}'),
            "tooltip: {t}"
        );
    }
    println!("tooltip: {}", texts[0].replace('\n', " / "));
    assert!(texts.iter().any(|t| t.contains("Flagged")), "no tooltip explains the dip: {texts:?}");
    // Moving away hides it.
    let act = MouseActions::new("mouse".into()).then(PointerAction::MoveToElement {
        element: canvas.clone(),
        duration: None,
        x: 0.0,
        y: (ch / 2.0 - 3.0).round(),
    });
    c.perform_actions(act).await.unwrap();
    c.release_actions().await.unwrap();
    wait_for(c, "return !document.getElementById('chart-tooltip')", "tooltip hidden").await;
    assert_no_errors(c, "hover").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explorer_end_to_end() {
    if std::env::var("TWOTOWER_SKIP_BROWSER").as_deref() == Ok("1") {
        eprintln!("SKIPPED: TWOTOWER_SKIP_BROWSER=1, the browser test did not run");
        return;
    }
    let dist = dist();
    assert!(
        dist.join("index.html").is_file(),
        "{} is missing: run scripts/build-app.sh first (or set TWOTOWER_SKIP_BROWSER=1)",
        dist.display()
    );

    let gz = gzipped_size(&dist);
    println!("bundle size: {gz} bytes gzipped ({:.1} KB) for everything in dist/", gz as f64 / 1024.0);
    assert!(gz < BUDGET_GZIP_BYTES, "bundle is {gz} bytes gzipped, budget {BUDGET_GZIP_BYTES}");

    let http = serve(dist);
    let base = format!("http://127.0.0.1:{http}/");
    let wd_port = free_port();
    let driver = Command::new("/usr/bin/chromedriver")
        .arg(format!("--port={wd_port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start /usr/bin/chromedriver");
    let _guard = Guard(driver);
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", wd_port)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(20), "chromedriver did not listen on {wd_port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let profile = std::env::temp_dir().join(format!("twotower-chromium-{}-{wd_port}", std::process::id()));
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": "/usr/bin/chromium",
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", "--window-size=1200,900",
                     format!("--user-data-dir={}", profile.display())]
        }),
    );
    let client = ClientBuilder::native()
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{wd_port}"))
        .await
        .expect("connect to chromedriver");
    // Run the checks in their own task so a failed assertion still closes the browser before it is reported.
    let c = client.clone();
    let task = tokio::spawn(async move { tokio::time::timeout(Duration::from_secs(180), run(&c, &base)).await });
    let outcome = task.await;
    let _ = client.close().await;
    let _ = std::fs::remove_dir_all(&profile);
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(_)) => panic!("browser test timed out after 180 s"),
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}
