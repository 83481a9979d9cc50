//! End to end in headless Chromium against dist/, one test per feature so one failure hides no other: first load,
//! pickers, the engine profile picker, what-if, URL restore, gain (and its claims), fabric, embeds (and an embed
//! filling a resized frame), stated ranges, broken links, bad pastes, planner, exports, accuracy, calibration,
//! hover, labels and keyboard on every view, the rate sweep (and its refusals), and the bundle's size budget. Every page is served with a strict Content-Security-Policy and every
//! test fails on a violation of it or a console error. Needs dist/ (scripts/build-app.sh) and
//! Chromium + chromedriver (scripts/setup.sh); TWOTOWER_SKIP_BROWSER=1 skips every test and says so on stderr.
//! The harness and the shared wait-and-assert steps live in browser_support.rs.

mod browser_support;

use browser_support::*;
use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::Locator;
use serde_json::{json, Value};
use std::time::Instant;

/// The page's code (everything in dist/ but its data files): 633,143 bytes gzipped measured (618.3 KiB), rounded up.
/// +1.0 KB since 632,109, under the few KiB a change may add without a cut: the kernel-level step's memory-bound
/// kernels that grow with the tokens and its kernel counts per kind of pass (skipping the per-element checks of
/// pre-checked files was tried as a cut and measured 0.2 KB larger). Before, not paid with a cut (+2.4 KB since
/// 629,679): the DP+EP mode (its ranks, exchange, commands, open loop and chart
/// marks) and the kernel tables' mixed passes. Before: 629,044 (+10.9 KB since 618,106): the modes across four machines
/// (their copies, verdicts, commands and bands), the kernel-level step of the engines that read a kernel table and the
/// per-mode ratio metric; the only cuts found are the dataset's deserializers (a fifth of the wasm's code, a leaner
/// reader of pre-checked data would take 12-16 KB) and the standard library's formatting and tables (a nightly
/// toolchain's smaller panics), neither small. 663,599 bytes with the dataset and its fits compiled in; they are files
/// the page fetches since (`BUDGET_DATA_GZIP_BYTES`): the wasm lost 44.2 KB of them and gained the fetching, the
/// loading and error states and the later evidence. The explorer's size target is under 550 KB. Before: 651,575 before
/// the bands of stated coverage and the costs across machines (+19.8 KB, 7.8 KB of it paid by leaving serde_json's
/// exact float parser out of the page), 625,957 before the kernel tables and the planner's contract (+25.6 KB), 536,755
/// before the open loop, the planner asked by flags, the pp2/ep2 modes, the rate sweep view and the one-Spark and
/// GB10-pair datasets (+87.7 KB). A change that adds more than a few KiB pays for it with a cut, or says here why not.
const BUDGET_GZIP_BYTES: u64 = 619 * 1024;

/// The page's data files in dist/data/ (the dataset without its layout, its fits, the bands' evidence), gzipped
/// as a server sends them: 66,518 bytes measured (59,856 the dataset, 1,695 the fits, 4,824 the evidence), rounded
/// up. The data grows with what is published: 52,896 before the two Sparks (S7) and four GB10 machines (S8) with
/// their model cards, and the kernel table's small kernels and stack that the step now reads. The first chart
/// waits for the dataset and the fits.
const BUDGET_DATA_GZIP_BYTES: u64 = 65 * 1024 + 512;

/// The default page's throughput chart for one model and the 8192/1024 workload (index 1 of the workload picker).
const MINIMAX_LONG: &str = "?model=minimax-m3&workload=8192-1024";

/// The planner from a URL: GLM-5.3 Flash on a DGX Spark, 8192/1024, 1..128 streams.
const PLAN_SPARK: &str = "?view=plan&hw=dgx-spark&model=glm-5.3-flash&isl=8192&osl=1024&cmax=128";

/// The frontier view of the NIM sweep (Llama-3.3-70B on one machine of two H100s): its points state TTFT and ITL.
const NIM_FRONTIER: &str = "?view=frontier&model=nim-llama-3.3-70b-instruct-h100x2";

/// Everything the page downloads stays within its gzipped budgets (no browser needed): its code, and apart from it
/// the data files it fetches, so that moving bytes from one to the other never passes for a cut.
#[test]
fn bundle_within_size_budget() {
    if skip_or_check("bundle_within_size_budget", false) {
        return;
    }
    let data_dir = dist().join("data");
    let data = gzipped_size(&data_dir);
    let code = gzipped_size(&dist()) - data;
    println!("bundle size: {code} bytes gzipped ({:.1} KiB) for everything in dist/ but data/", code as f64 / 1024.0);
    for f in std::fs::read_dir(&data_dir).expect("dist/data/: the page's data files").flatten() {
        println!("  data/{}: {} bytes gzipped", f.file_name().to_string_lossy(), gzipped_size_of(&f.path()));
    }
    println!("data files: {data} bytes gzipped ({:.1} KiB)", data as f64 / 1024.0);
    assert!(code < BUDGET_GZIP_BYTES, "the page's code is {code} bytes gzipped, budget {BUDGET_GZIP_BYTES}");
    assert!(
        data < BUDGET_DATA_GZIP_BYTES,
        "the page's data files are {data} bytes gzipped, budget {BUDGET_DATA_GZIP_BYTES}"
    );
}

/// First load: it draws with ink on the canvas, lists the points, captions the error band with its size per
/// mode, logs no error, and reports the time from navigation to the first draw. With TWOTOWER_SCREENSHOT=1 it
/// saves that view as docs/explorer.png, the README's picture.
#[test]
fn first_load_draws_chart_table_and_band() {
    browser_test("first_load_draws_chart_table_and_band", |p| async move {
        let c = &p.c;
        p.open("", "first load").await;
        let first_ms = js(c, "return window.__firstDrawMs").await;
        println!("time from navigation to first draw: {:.0} ms", first_ms.as_f64().unwrap_or(f64::NAN));
        assert_chart_drawn(c, "first load").await;
        assert_eq!(js(c, "return document.querySelectorAll('table.points tbody tr').length > 0").await, json!(true));
        let band = text_of(c, "band-caption").await;
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
        screenshot_if_asked(c, "explorer.png").await;
    });
}

/// A page whose data files cannot be fetched (a host that lost dist/data/) says so, naming the file and the
/// server's answer, instead of a blank page or a panic; with them it shows a loading state until they arrive.
#[test]
fn missing_data_files_are_a_message_on_the_page() {
    browser_test("missing_data_files_are_a_message_on_the_page", |p| async move {
        let c = &p.c;
        c.goto(&format!("{}__nodata/?model=glm-5.3", p.base)).await.unwrap();
        let shown = wait_for(
            c,
            "const e = document.querySelector('main.dataset-errors[role=alert]'); return e && e.innerText;",
            "the message for missing data files",
        )
        .await;
        let shown = shown.as_str().unwrap_or("");
        println!("missing data files: {}", shown.replace('\n', " / "));
        assert!(shown.contains("could not be loaded") && shown.contains("data/dataset-"), "message: {shown}");
        assert!(shown.contains("404"), "the server's answer is not named: {shown}");
        assert_absent(c, "canvas", "a chart without data").await;
        assert_no_errors(c, "missing data files").await;
    });
}

/// Every view with a chart, as a link opens it: the time to its first chart is what a reader waits for.
const VIEWS_WITH_A_CHART: [(&str, &str); 7] = [
    ("throughput", ""),
    ("frontier", "?view=frontier"),
    ("compare", "?view=compare"),
    ("gain", "?view=gain"),
    ("fabric", "?view=fabric"),
    ("planner", "?view=plan"),
    ("embed", "?embed=1"),
];

/// The time from navigation to the first chart of every view, as a first visit sees it (the HTTP cache off, so
/// no compiled wasm is reused), with the CPU as it is and throttled 4x (a mid-range laptop on battery): the
/// median of five loads each. Printed, not asserted: on a shared 2-core machine a timing is noise to a test;
/// docs/explorer.md records the figures.
#[test]
fn first_chart_time_per_view_at_1x_and_4x_cpu() {
    browser_test("first_chart_time_per_view_at_1x_and_4x_cpu", |p| async move {
        let c = &p.c;
        devtools(c, "Network.enable", json!({})).await;
        devtools(c, "Network.setCacheDisabled", json!({ "cacheDisabled": true })).await;
        for rate in [1, 4] {
            devtools(c, "Emulation.setCPUThrottlingRate", json!({ "rate": rate })).await;
            for (view, query) in VIEWS_WITH_A_CHART {
                let mut ms = Vec::new();
                for _ in 0..5 {
                    p.open(query, view).await;
                    ms.push(js(c, "return window.__firstDrawMs").await.as_f64().unwrap_or(f64::NAN));
                }
                ms.sort_by(f64::total_cmp);
                println!(
                    "first chart, CPU {rate}x, {view}: {:.0} ms (loads: {})",
                    ms[2],
                    ms.iter().map(|m| format!("{m:.0}")).collect::<Vec<_>>().join(", ")
                );
            }
        }
        devtools(c, "Emulation.setCPUThrottlingRate", json!({ "rate": 1 })).await;
        assert_no_errors(c, "first chart timings").await;
    });
}

/// The model and workload pickers redraw the chart (new pixels, the model's data attribute) and go into the URL.
#[test]
fn pickers_redraw_and_update_url() {
    browser_test("pickers_redraw_and_update_url", |p| async move {
        let c = &p.c;
        let d0 = p.open("", "first load").await;
        let (_, hash0) = pixels(c).await;
        set_value(c, "#model", "minimax-m3", "change").await;
        let d1 = wait_draws_above(c, d0, "model change").await;
        assert_eq!(chart_state(c).await.1, "minimax-m3");
        set_value(c, "#workload", "1", "change").await;
        wait_draws_above(c, d1, "workload change").await;
        let (_, hash2) = pixels(c).await;
        assert_ne!(hash0, hash2, "chart pixels unchanged after switching model and workload");
        let u = url(c).await;
        assert!(u.contains("model=minimax-m3") && u.contains("workload=8192-1024"), "URL not updated: {u}");
        assert_no_errors(c, "pickers").await;
    });
}

/// A what-if control moves the predicted curves (values and pixels) and goes into the URL; the recompute +
/// redraw time is printed.
#[test]
fn what_if_moves_predictions() {
    browser_test("what_if_moves_predictions", |p| async move {
        let c = &p.c;
        let d0 = p.open(MINIMAX_LONG, "minimax-m3 8192/1024").await;
        let (_, _, sum_before) = chart_state(c).await;
        let (_, hash_before) = pixels(c).await;
        set_value(c, "#knob-hbm", "20", "input").await;
        wait_draws_above(c, d0, "what-if change").await;
        let (_, _, sum_after) = chart_state(c).await;
        let (_, hash_after) = pixels(c).await;
        assert_ne!(sum_before, sum_after, "predicted values unchanged after moving the HBM control");
        assert_ne!(hash_before, hash_after, "chart pixels unchanged after moving the HBM control");
        assert_url_has(c, "hbm=20").await;
        // Reported, not asserted: timing on a shared 2-core machine is noise; the README records the figure.
        let redraw = js(
            c,
            "const e = document.querySelector('[data-last-redraw-ms]'); return e && e.getAttribute('data-last-redraw-ms');",
        )
        .await;
        println!("recompute + redraw after a what-if change: {} ms", redraw.as_str().unwrap_or("?"));
        assert_no_errors(c, "what-if").await;
    });
}

/// State set through the controls (model, workload, a what-if knob) survives reloading the page's URL.
#[test]
fn reload_restores_url_state() {
    browser_test("reload_restores_url_state", |p| async move {
        let c = &p.c;
        let d0 = p.open("", "first load").await;
        set_value(c, "#model", "minimax-m3", "change").await;
        let d1 = wait_draws_above(c, d0, "model change").await;
        set_value(c, "#workload", "1", "change").await;
        let d2 = wait_draws_above(c, d1, "workload change").await;
        set_value(c, "#knob-hbm", "20", "input").await;
        wait_draws_above(c, d2, "what-if change").await;
        let (_, _, sum) = chart_state(c).await;
        let saved = url(c).await;
        p.c.goto(&saved).await.unwrap();
        wait_draws_above(c, 0, "reload").await;
        assert_eq!(chart_state(c).await.2, sum, "reloaded URL did not restore the what-if state ({saved})");
        assert_eq!(js(c, "return document.getElementById('model').value").await, json!("minimax-m3"));
        assert_no_errors(c, "reload").await;
    });
}

/// The gain tab draws and goes into the URL; glm-5.3 at 512/512 places the report's 27x claim (pair at 256 over
/// one station at 32, marked *) with its caveat, the equal-concurrency ratio, a note under the chart and the
/// model's claims.
#[test]
fn gain_view_and_claims() {
    browser_test("gain_view_and_claims", |p| async move {
        let c = &p.c;
        p.open(&format!("{MINIMAX_LONG}&hbm=20"), "explorer").await;
        let before = chart_state(c).await.0;
        click_tab(c, "gain").await;
        wait_draws_above(c, before, "gain tab").await;
        assert_url_has(c, "view=gain").await;
        assert_chart_drawn(c, "gain tab").await;
        assert_no_errors(c, "gain tab").await;

        p.open("?view=gain&model=glm-5.3&workload=512-512", "gain glm-5.3").await;
        assert_chart_drawn(c, "gain glm-5.3").await;
        let text = js(c, "return document.body.innerText").await;
        let text = text.as_str().unwrap_or("");
        assert!(text.contains("27x*"), "27x claim not shown: {text}");
        assert!(
            text.contains("compares different concurrencies (pair at 256 streams, one station at 32)"),
            "27x caveat missing: {text}"
        );
        assert!(text.contains("853 / 188 = 4.5x"), "equal-concurrency ratio missing: {text}");
        let note = text_of(c, "claim-notes").await;
        println!("gain claim note: {note}");
        assert!(note.contains("27x"), "no note under the chart for the 27x claim");
        assert_eq!(
            js(c, "return document.querySelectorAll('#claims li').length >= 5").await,
            json!(true),
            "claims of glm-5.3 not listed"
        );
        assert_no_errors(c, "gain claims").await;
    });
}

/// The fabric tab draws and goes into the URL.
#[test]
fn fabric_view_draws() {
    browser_test("fabric_view_draws", |p| async move {
        let c = &p.c;
        p.open(&format!("{MINIMAX_LONG}&hbm=20"), "explorer").await;
        let before = chart_state(c).await.0;
        click_tab(c, "fabric").await;
        wait_draws_above(c, before, "fabric tab").await;
        assert_url_has(c, "view=fabric").await;
        assert_chart_drawn(c, "fabric tab").await;
        assert_no_errors(c, "fabric tab").await;
    });
}

/// Embed mode shows the chart only: no controls, no header.
#[test]
fn embed_shows_chart_only() {
    browser_test("embed_shows_chart_only", |p| async move {
        let c = &p.c;
        p.open("?model=glm-5.3&embed=1", "embed").await;
        assert_chart_drawn(c, "embedded chart").await;
        assert_absent(c, "#model", "controls shown in embed mode").await;
        assert_absent(c, "header", "header shown in embed mode").await;
        assert_no_errors(c, "embed").await;
    });
}

/// The planner embeds too: a chart, no controls, no verdict.
#[test]
fn planner_embed_shows_chart_only() {
    browser_test("planner_embed_shows_chart_only", |p| async move {
        let c = &p.c;
        p.open("?view=plan&embed=1", "planner embed").await;
        assert_chart_drawn(c, "embedded planner chart").await;
        for sel in [".controls", "#plan-hw", "#verdict", "header", ".tabs"] {
            assert_absent(c, sel, "shown in the embedded planner").await;
        }
        assert_no_errors(c, "planner embed").await;
    });
}

/// Values that are not points: glm-5.3 tp2 8192/1024's range (573 to 611 at 32 through 256 streams) and
/// glm-5.2's values without a concurrency (710, 725, 740) are listed under the throughput chart, with the
/// diamonds' hit points after the published points and a tooltip that says the concurrency is not stated.
#[test]
fn stated_ranges_and_unplaced_values() {
    browser_test("stated_ranges_and_unplaced_values", |p| async move {
        let c = &p.c;
        p.open("?model=glm-5.3&workload=8192-1024", "glm-5.3 8192/1024").await;
        let table = js(c, "const t = document.querySelector('table.points'); return t && t.innerText;").await;
        let table = table.as_str().unwrap_or("");
        assert!(
            table.contains("573") && table.contains("611") && table.contains("range 32-256"),
            "range not in the table: {table}"
        );
        let range_row =
            js(c, "const r = document.querySelector('table.points tr.stated'); return r && r.innerText;").await;
        println!("range row: {}", range_row.as_str().unwrap_or("(none)").replace(['\n', '\t'], " | "));
        assert!(!range_row.as_str().unwrap_or("").contains('%'), "a range has an error %: {range_row}");

        p.open("?model=glm-5.2&workload=8192-1024", "glm-5.2 8192/1024").await;
        let table = js(c, "const t = document.querySelector('table.points'); return t && t.innerText;").await;
        let table = table.as_str().unwrap_or("");
        assert!(
            table.contains("710") && table.contains("concurrency not stated (likely 64)"),
            "unplaced values not in the table: {table}"
        );
        assert_eq!(js(c, "return document.querySelectorAll('table.points tr.stated').length").await, json!(3));
        let hits = hit_points(c).await;
        let points = js(c, "return document.querySelectorAll('table.points tbody tr:not(.stated)').length")
            .await
            .as_u64()
            .unwrap() as usize;
        assert_eq!(hits.len(), points + 3, "hit points: {hits:?}");
        let (x, y) = hits[points];
        let t = tooltip_at(c, x, y, "unplaced tooltip").await;
        c.release_actions().await.unwrap();
        println!("unplaced tooltip: {}", t.replace('\n', " / "));
        assert!(t.contains("not stated") && t.contains("710") && t.contains("likely"), "unplaced tooltip: {t}");
        assert_no_errors(c, "ranges and unplaced values").await;
    });
}

/// Broken parameters: a visible warning naming them, the defaults, and still a chart.
#[test]
fn broken_url_warns_and_falls_back() {
    browser_test("broken_url_warns_and_falls_back", |p| async move {
        let c = &p.c;
        p.open("?model=nope&gpu_mem=abc&hbm=-3&view=zzz", "broken link").await;
        let warning = c.find(Locator::Css(".url-warning")).await.expect("no .url-warning element");
        assert!(warning.is_displayed().await.unwrap(), "url-warning not visible");
        let text = warning.text().await.unwrap();
        assert!(text.contains("nope") && text.contains("gpu_mem"), "warning text: {text}");
        assert_chart_drawn(c, "chart after broken link").await;
        assert_eq!(chart_state(c).await.1, "glm-5.2", "did not fall back to the default model");
        assert_no_errors(c, "broken link").await;
    });
}

/// The predicted tok/s of the points table's row at the highest concurrency of any mode (the first such row),
/// with that mode and concurrency (the table shows the same answer the chart draws). The top of the range is
/// where a step's overheads weigh most, so a profile without them must predict more there; lower down a fitted
/// profile's per-model knobs (draft acceptance, spilled experts' routing share), which the roofline takes from
/// the model card, can outweigh them (GLM-5.2 one station at 32 streams: 143 fitted, 142 roofline).
async fn predicted_at_top(c: &fantoccini::Client) -> (String, u64, f64) {
    let v = js(
        c,
        "const rows = [...document.querySelectorAll('#points-table tbody tr:not(.stated)')] \
           .map(r => [...r.cells].map(x => x.textContent.trim())); \
         if (!rows.length) return null; \
         const top = rows.reduce((a, r) => Number(r[1]) > Number(a[1]) ? r : a); \
         return [top[0], Number(top[1]), Number(top[3])];",
    )
    .await;
    let a = v.as_array().unwrap_or_else(|| panic!("no points table rows: {v}"));
    (a[0].as_str().unwrap_or("").into(), a[1].as_u64().unwrap_or(0), a[2].as_f64().unwrap_or(f64::NAN))
}

/// The engine profile picker lists every profile, re-predicts with the chosen one (the roofline predicts more at
/// the top of the range than the fitted default), names it under the chart, puts it in the link, and the link
/// reopens with it; an unknown profile in a link is a visible warning and the default, with a chart.
#[test]
fn engine_picker_repredicts_and_is_shared() {
    browser_test("engine_picker_repredicts_and_is_shared", |p| async move {
        let c = &p.c;
        let d0 = p.open("", "first load").await;
        let ids = js(c, "return [...document.querySelectorAll('#engine option')].map(o => o.value)").await;
        println!("engine profiles offered: {ids}");
        for id in ["vllm-gb300-report", "vllm-generic", "roofline", "nim-trtllm"] {
            assert!(ids.as_array().unwrap().iter().any(|v| v == id), "{id} not offered: {ids}");
        }
        let label = js(c, "return document.querySelector('label[for=engine]').textContent").await;
        assert_eq!(label, json!("Engine profile"));
        let own = js(c, "return document.getElementById('engine').value").await;
        let caption0 = text_of(c, "engine-caption").await;
        assert!(caption0.contains(own.as_str().unwrap()), "caption {caption0} does not name {own}");
        let (mode, conc, before) = predicted_at_top(c).await;
        set_value(c, "#engine", "roofline", "change").await;
        wait_draws_above(c, d0, "engine change").await;
        assert_url_has(c, "engine=roofline").await;
        let caption1 = text_of(c, "engine-caption").await;
        assert!(caption1 != caption0 && caption1.contains("roofline"), "caption after the change: {caption1}");
        let (mode1, conc1, after) = predicted_at_top(c).await;
        assert_eq!((&mode1, conc1), (&mode, conc));
        println!("predicted {mode} at {conc}: {before} tok/s with {own}, {after} tok/s with the roofline");
        assert!(after > before, "roofline {after} not above the default {before} ({mode} at {conc})");
        // The share link reopens with the roofline.
        let saved = url(c).await;
        p.c.goto(&saved).await.unwrap();
        wait_draws_above(c, 0, "reopened link").await;
        assert_eq!(js(c, "return document.getElementById('engine').value").await, json!("roofline"));
        assert!(text_of(c, "engine-caption").await.contains("roofline"));
        assert_eq!(predicted_at_top(c).await.2, after, "the reopened link predicts otherwise ({saved})");
        assert_no_errors(c, "engine picker").await;
        p.open("?engine=nonsense", "unknown engine").await;
        let warning = c.find(Locator::Css(".url-warning")).await.expect("no .url-warning element");
        assert!(warning.is_displayed().await.unwrap(), "url-warning not visible");
        let text = warning.text().await.unwrap();
        assert!(text.contains("nonsense") && text.contains("roofline"), "warning text: {text}");
        assert_chart_drawn(c, "chart after an unknown engine").await;
        assert_eq!(js(c, "return document.getElementById('engine').value").await, own);
        assert!(!url(c).await.contains("engine="), "the unknown profile stayed in the link");
        assert_no_errors(c, "unknown engine").await;
    });
}

/// A small DeepSeek-V3-shaped config.json (MLA, 256 routed experts, top-8, one MTP layer).
const V3_CONFIG: &str = r#"{"architectures": ["DeepseekV3ForCausalLM"], "num_hidden_layers": 61, "hidden_size": 7168,
  "num_attention_heads": 128, "num_key_value_heads": 128, "vocab_size": 129280, "kv_lora_rank": 512,
  "qk_rope_head_dim": 64, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "v_head_dim": 128,
  "n_routed_experts": 256, "num_experts_per_tok": 8, "n_shared_experts": 1, "intermediate_size": 18432,
  "moe_intermediate_size": 2048, "first_k_dense_replace": 3, "num_nextn_predict_layers": 1}"#;

/// The planner: loads from a URL, gives a verdict, draws, then its answer at the latency target with its bands,
/// reacts to the hardware preset and a field edit, plans a pasted config.json, shows a broken one's error inline,
/// and restores the pasted plan from its URL.
#[test]
fn planner_presets_fields_and_pasted_config() {
    browser_test("planner_presets_fields_and_pasted_config", |p| async move {
        let c = &p.c;
        let d0 = p.open(PLAN_SPARK, "planner load").await;
        assert_absent(c, ".url-warning", "planner URL produced warnings").await;
        let (mode0, text0) = verdict(c).await;
        println!("planner verdict (glm-5.3-flash on DGX Spark): [{mode0}] {}", text0.replace('\n', " / "));
        assert!(!mode0.is_empty(), "no recommended mode: {text0}");
        assert_eq!(js(c, "return document.getElementById('verdict').dataset.fits").await, json!("true"), "{text0}");
        assert!(text0.contains("Why:"), "verdict has no reason: {text0}");
        // How TP2 across the machines costs its all-reduces: the DGX Spark file gives no measured sweep.
        let link = js(c, "return document.getElementById('verdict-link').textContent").await;
        assert!(link.as_str().is_some_and(|t| t.contains("no measured all-reduce sweep")), "{link}");
        assert_chart_drawn(c, "planner chart").await;
        assert_eq!(js(c, "return document.getElementById('plan-hw').value").await, json!("dgx-spark"));
        // 8 concurrency levels (1..128) x 7 modes (one machine, TP2, PP2, EP2, DP+EP, PD, two copies), and the
        // placement table's two setups.
        assert_eq!(js(c, "return document.querySelectorAll('#plan-table tbody tr').length").await, json!(56));
        assert_eq!(js(c, "return document.querySelectorAll('#plan-placement tbody tr').length").await, json!(2));
        // The answer at the latency target waits for the bands' evidence, fetched after the first chart.
        let card = wait_for(
            c,
            "const e = document.getElementById('target-card'); \
             return e && e.getAttribute('aria-busy') !== 'true' && e.innerText;",
            "the target card with the bands' evidence",
        )
        .await;
        let card = card.as_str().unwrap_or("");
        assert!(card.contains("users within the target") && card.contains("tok/s band"), "target card: {card}");
        let (_, _, sum0) = chart_state(c).await;

        // Up to four machines: the four-machine modes join the table, and the verdict and the target card say
        // what the third and fourth machines add; back to a pair.
        set_value(c, "#plan-machines", "4", "change").await;
        let d4 = wait_draws_above(c, d0, "four machines").await;
        assert_url_has(c, "machines=4").await;
        assert_eq!(js(c, "return document.querySelectorAll('#plan-table tbody tr').length").await, json!(80));
        let four = wait_for(
            c,
            "const v = document.getElementById('verdict-four'), t = document.getElementById('target-four'); \
             return v && t && [v.innerText, t.innerText];",
            "what four machines add",
        )
        .await;
        println!("four machines: {four}");
        set_value(c, "#plan-machines", "2", "change").await;
        let d0 = wait_draws_above(c, d4, "back to a pair").await;
        assert_absent(c, "#verdict-four", "a pair's plan says nothing of four machines").await;
        assert_eq!(chart_state(c).await.2, sum0, "back to a pair draws the pair's plan");

        set_value(c, "#plan-hw", "h200-sxm", "change").await;
        let d1 = wait_draws_above(c, d0, "hardware preset change").await;
        let (mode1, text1) = verdict(c).await;
        let (_, _, sum1) = chart_state(c).await;
        println!("planner verdict (glm-5.3-flash on 8x H200): [{mode1}] {}", text1.replace('\n', " / "));
        assert!(sum0 != sum1 && text0 != text1, "changing the preset changed neither the numbers nor the verdict");
        assert_url_has(c, "hw=h200-sxm").await;
        // The preset's GPU memory is shown in its field.
        let mem = js(c, "return Number(document.getElementById('plan-hw_mem').value)").await;
        assert!(mem.as_f64().unwrap_or(0.0) > 100.0, "GPU memory field shows {mem}");

        // A field edit goes into the URL and the numbers.
        set_value(c, "#plan-hw_hbm", "9", "change").await;
        let d2 = wait_draws_above(c, d1, "HBM field change").await;
        assert_url_has(c, "hw_hbm=9").await;
        assert_ne!(chart_state(c).await.2, sum1, "HBM field did not change the prediction");

        // Paste a config.json.
        set_value(c, "#plan-src", "hf", "change").await;
        wait_for(c, "return document.getElementById('plan-hf-error') !== null", "empty config message").await;
        set_value(c, "#plan-hf", V3_CONFIG, "input").await;
        wait_draws_above(c, d2, "pasted config").await;
        wait_for(
            c,
            "const v = document.getElementById('verdict'); \
             return v && v.dataset.mode !== '' && !document.getElementById('plan-hf-error');",
            "plan from the pasted config",
        )
        .await;
        let (mode2, text2) = verdict(c).await;
        println!("planner verdict (pasted DeepSeek-V3 config on 8x H200): [{mode2}] {}", text2.replace('\n', " / "));
        assert_chart_drawn(c, "chart after pasting a config").await;
        assert_url_has(c, "src=hf").await;
        // A broken config: its error inline, no panic.
        set_value(c, "#plan-hf", "{\"num_hidden_layers\": 61,", "input").await;
        let err =
            wait_for(c, "const e = document.getElementById('plan-hf-error'); return e && e.innerText;", "config error")
                .await;
        assert!(err.as_str().unwrap_or("").contains("not valid JSON"), "config error text: {err}");
        set_value(c, "#plan-hf", V3_CONFIG, "input").await;
        wait_for(c, "return !document.getElementById('plan-hf-error')", "error cleared").await;
        // The whole state is in the URL: reloading restores the pasted plan.
        let saved = url(c).await;
        c.goto(&saved).await.unwrap();
        wait_draws_above(c, 0, "planner reload").await;
        assert_eq!(verdict(c).await, (mode2, text2), "reloading the planner URL did not restore the plan");
        assert_no_errors(c, "planner").await;
    });
}

/// The export buttons produce a CSV blob with the planner's header and a PNG data URL of the chart.
#[test]
fn exports_csv_and_png() {
    browser_test("exports_csv_and_png", |p| async move {
        let c = &p.c;
        p.open(PLAN_SPARK, "planner load").await;
        js(c, "window.__lastExport = null; document.getElementById('export-csv').click(); return 1;").await;
        let csv =
            wait_for(c, "const e = window.__lastExport; return e && [e.kind, e.href, e.text];", "CSV export").await;
        assert_eq!(csv[0], json!("csv"));
        assert!(csv[1].as_str().unwrap().starts_with("blob:"), "CSV href: {}", csv[1]);
        let text = csv[2].as_str().unwrap();
        assert!(
            text.starts_with("mode,concurrency,output_tok_s,ttft_s,tpot_ms,gain_over_single,bound\n"),
            "CSV: {text}"
        );
        assert!(text.lines().count() > 3, "CSV has no rows: {text}");
        js(c, "window.__lastExport = null; document.getElementById('export-png').click(); return 1;").await;
        let png = wait_for(
            c,
            "const e = window.__lastExport; return e && [e.kind, e.href.slice(0, 30), e.href.length];",
            "PNG export",
        )
        .await;
        assert_eq!(png[0], json!("png"));
        assert!(png[1].as_str().unwrap().starts_with("data:image/png"), "PNG href: {}", png[1]);
        assert!(png[2].as_u64().unwrap() > 5000, "PNG suspiciously small");
        assert_no_errors(c, "exports").await;
    });
}

/// The accuracy tab: the fitted overall median (all points) and the predictive one (fit on one station, predict
/// the pair; computed when the tab opens), both within the dataset's targets; coefficients and flagged points
/// listed; the chart draws again at full width on the way back.
#[test]
fn accuracy_tab() {
    browser_test("accuracy_tab", |p| async move {
        let c = &p.c;
        p.open("", "accuracy: first load").await;
        click_tab(c, "accuracy").await;
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
        assert_url_has(c, "view=accuracy").await;
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
        let text = text_of(c, "accuracy").await;
        assert!(text.contains("no single-station run"), "DeepSeek note missing");
        let coefficients = js(c, "return document.querySelectorAll('#acc-coefficients tbody tr').length").await;
        assert!(coefficients.as_u64().unwrap_or(0) >= 10, "coefficient rows: {coefficients}");
        let flagged = js(c, "return document.querySelectorAll('#acc-flagged tbody tr').length").await;
        assert!(flagged.as_u64().unwrap_or(0) >= 1, "flagged rows: {flagged}");
        assert!(text.contains("hbm_efficiency") && text.contains("fitted on"), "coefficients or their basis missing");
        // The chart is hidden here, and draws again at full width on the way back.
        let before = chart_state(c).await.0;
        click_tab(c, "explorer").await;
        wait_draws_above(c, before, "back from accuracy").await;
        assert_chart_drawn(c, "chart after the accuracy tab").await;
        assert_no_errors(c, "accuracy").await;
    });
}

/// Pasting three `vllm bench serve` results into the planner calibrates it (3 points, with the fit's error) and
/// changes the plan's numbers; a truncated result names the problem instead and drops the calibration.
#[test]
fn planner_calibration_from_pasted_results() {
    browser_test("planner_calibration_from_pasted_results", |p| async move {
        let c = &p.c;
        let d0 = p.open("?view=plan&model=glm-5.2&isl=1024&osl=1024&cmax=64", "calibration: planner").await;
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
        let note = text_of(c, "plan-meas-link").await;
        assert!(note.contains("share link"), "share-link note: {note}");
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
        // The paste is one importer input: the error names it and the line where the cut result starts.
        let line = sample("vllm-serve-c1.json").trim().lines().count() + 1;
        assert!(err.contains("truncated") && err.contains(&format!("pasted results:{line}:")), "error: {err}");
        assert_absent(c, "#plan-calibration", "stale calibration status shown").await;
        wait_for(c, "return document.querySelector('.chart-wrap').dataset.predictedSum", "redraw").await;
        assert_no_errors(c, "calibration").await;
    });
}

/// Hovering each published point shows its tooltip with the source quote; the dip says why it is flagged;
/// moving away hides it. The canvas backing store follows devicePixelRatio.
#[test]
fn hover_tooltips_and_device_pixels() {
    browser_test("hover_tooltips_and_device_pixels", |p| async move {
        let c = &p.c;
        p.open("?model=glm-5.2&workload=512-512", "hover page").await;
        let dims = js(
            c,
            "const c = document.getElementById('chart'); \
             return [c.width, c.height, c.clientWidth, c.clientHeight, window.devicePixelRatio];",
        )
        .await;
        let [w, h, cw, ch, dpr] = [0, 1, 2, 3, 4].map(|i| dims[i].as_f64().unwrap());
        assert_eq!(
            (w, h),
            ((cw * dpr).round(), (ch * dpr).round()),
            "canvas backing store not sized by devicePixelRatio"
        );
        let hits = hit_points(c).await;
        assert_eq!(hits.len(), 7, "hit points: {hits:?}");
        let mut texts = Vec::new();
        for (x, y) in &hits {
            texts.push(tooltip_at(c, *x, *y, "tooltip").await);
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
        // Moving away (the bottom edge, below the plot) hides it.
        mouse_to(c, cw / 2.0, ch - 3.0, None).await;
        c.release_actions().await.unwrap();
        wait_for(c, "return !document.getElementById('chart-tooltip')", "tooltip hidden").await;
        assert_no_errors(c, "hover").await;
    });
}

/// Checks the current page's controls and charts for what a screen reader and a keyboard need; returns the
/// problems: a control without an accessible name (label, aria-label, aria-labelledby, or a button's text), a
/// canvas without role=img and a non-empty aria-label (or whose aria-describedby names a missing element while it
/// is shown), and any positive tabindex (it breaks the document's tab order).
const A11Y_PROBLEMS: &str = r#"
const named = e => {
  const aria = (e.getAttribute('aria-label') || '').trim();
  if (aria) return aria;
  const by = (e.getAttribute('aria-labelledby') || '').split(/\s+/).filter(Boolean);
  const byText = by.map(id => { const x = document.getElementById(id); return x ? x.textContent : ''; }).join(' ').trim();
  if (byText) return byText;
  const labels = e.labels ? Array.from(e.labels).map(l => l.textContent).join(' ').trim() : '';
  if (labels) return labels;
  return e.tagName === 'BUTTON' ? e.textContent.trim() : '';
};
const problems = [];
for (const e of document.querySelectorAll('input, select, button, textarea')) {
  if (e.type !== 'hidden' && !named(e)) problems.push('no accessible name: ' + e.outerHTML.slice(0, 120));
}
for (const c of document.querySelectorAll('canvas')) {
  if (c.getAttribute('role') !== 'img') problems.push('canvas ' + c.id + ' has no role=img');
  if (!(c.getAttribute('aria-label') || '').trim()) problems.push('canvas ' + c.id + ' has no aria-label');
  const shown = c.offsetParent !== null;
  for (const id of (c.getAttribute('aria-describedby') || '').split(/\s+/).filter(Boolean)) {
    if (shown && !document.getElementById(id)) problems.push('canvas ' + c.id + ' described by missing #' + id);
  }
}
for (const e of document.querySelectorAll('[tabindex]')) {
  if (e.tabIndex > 0) problems.push('positive tabindex: ' + e.outerHTML.slice(0, 80));
}
return problems;
"#;

/// Every view (explorer, gain, fabric, plan, accuracy) names every control and describes every chart; the
/// chart's description says what it shows and points at the table with its numbers; Tab walks from the view
/// tabs to the model picker, which shows a visible focus ring.
#[test]
fn accessible_names_roles_and_keyboard() {
    browser_test("accessible_names_roles_and_keyboard", |p| async move {
        let c = &p.c;
        for (query, view) in [
            ("", "explorer"),
            ("?view=gain", "gain"),
            ("?view=fabric", "fabric"),
            (PLAN_SPARK, "plan"),
            ("?view=plan&src=hf", "plan (config.json)"),
            ("?view=plan&src=form", "plan (form)"),
        ] {
            p.open(query, view).await;
            assert_eq!(js(c, A11Y_PROBLEMS).await, json!([]), "accessibility problems on the {view} view");
            let chart = js(
                c,
                "const e = document.getElementById('chart'); \
                 return [e.getAttribute('aria-label'), e.getAttribute('aria-describedby')];",
            )
            .await;
            let label = chart[0].as_str().unwrap_or("");
            println!("{view} chart: aria-label {label:?}, aria-describedby {}", chart[1]);
            // An empty config.json box gives no plan and no table: the label says so and points nowhere.
            let has_table = view != "plan (config.json)";
            assert!(label.len() > 20 && label.contains("chart"), "{view}: chart label says little: {label}");
            assert_eq!(label.contains("table below"), has_table, "{view}: the label's mention of a table: {label}");
            assert_eq!(
                chart[1].as_str().is_some_and(|d| !d.is_empty()),
                has_table,
                "{view}: the chart's aria-describedby ({}) against the table under it",
                chart[1]
            );
            assert_no_errors(c, view).await;
        }
        // The accuracy view hides the chart and shows tables computed on demand; its controls are checked too.
        click_tab(c, "accuracy").await;
        wait_for(c, "return document.getElementById('acc-predictive-overall') !== null", "accuracy tables").await;
        assert_eq!(js(c, A11Y_PROBLEMS).await, json!([]), "accessibility problems on the accuracy view");
        // The embed's chart has a text alternative as well (no table there, so no aria-describedby).
        p.open("?embed=1", "embed").await;
        assert_eq!(js(c, A11Y_PROBLEMS).await, json!([]), "accessibility problems in the embed");

        // Keyboard: from the top of the explorer, Tab goes through the view tabs and lands on the model picker.
        p.open("", "keyboard").await;
        let mut visited = Vec::new();
        // One stop per view tab, then the model picker.
        for _ in 0..10 {
            let tab = KeyActions::new("keyboard".into())
                .then(KeyAction::Down { value: '\u{E004}' })
                .then(KeyAction::Up { value: '\u{E004}' });
            c.perform_actions(tab).await.unwrap();
            let at =
                js(c, "const e = document.activeElement; return e ? (e.id || e.dataset.view || e.tagName) : '';").await;
            visited.push(at.as_str().unwrap_or("").to_string());
            if visited.last().is_some_and(|v| v == "model") {
                break;
            }
        }
        println!("tab order from the top: {}", visited.join(" -> "));
        assert_eq!(
            visited.last().map(String::as_str),
            Some("model"),
            "Tab never reached the model picker: {visited:?}"
        );
        assert_eq!(
            visited.first().map(String::as_str),
            Some("explorer"),
            "the first Tab stop is not the first view tab"
        );
        let ring = js(
            c,
            "const s = getComputedStyle(document.getElementById('model')); return [s.outlineStyle, s.outlineWidth];",
        )
        .await;
        assert!(
            ring[0] != json!("none")
                && ring[1].as_str().and_then(|w| w.trim_end_matches("px").parse::<f64>().ok()) >= Some(2.0),
            "no visible focus ring on the focused model picker: {ring}"
        );
        assert_no_errors(c, "keyboard").await;
    });
}

/// The embed fills its frame: in a 1280x500 iframe the canvas is the frame's width (within 2%) and height, the
/// chart draws ink across its right part (it used to stop near 1,050 px), and when the frame shrinks the chart
/// redraws to the new size.
#[test]
fn embed_fills_and_follows_its_frame() {
    browser_test("embed_fills_and_follows_its_frame", |p| async move {
        let c = &p.c;
        c.goto(&format!("{}__test/embed-frame.html", p.base)).await.unwrap();
        let state = "const f = document.getElementById('frame'); const d = f && f.contentDocument; \
                     const w = d && d.querySelector('.chart-wrap'); const k = d && d.getElementById('chart'); \
                     if (!w || !k || !(Number(w.dataset.draws) > 0)) return null; \
                     return [Number(w.dataset.draws), k.clientWidth, k.clientHeight, f.clientWidth, f.clientHeight, \
                             d.documentElement.clientHeight - w.getBoundingClientRect().top];";
        let s = wait_for(c, state, "embedded chart in the frame").await;
        let num = |v: &Value, i: usize| v[i].as_f64().unwrap_or(f64::NAN);
        let (draws, cw, ch, fw, fh, room) = (num(&s, 0), num(&s, 1), num(&s, 2), num(&s, 3), num(&s, 4), num(&s, 5));
        println!("embed in a {fw}x{fh} frame: canvas {cw}x{ch} (room under the warning: {room} px), {draws} draws");
        assert_eq!((fw, fh), (1280.0, 500.0), "the host page's frame is not 1280x500");
        assert!((cw - fw).abs() <= 0.02 * fw, "canvas {cw} px wide in a {fw} px frame");
        assert!(ch >= room - 2.0 && ch <= fh, "canvas {ch} px high with {room} px of room in a {fh} px frame");
        let ink = js(
            c,
            "const k = document.getElementById('frame').contentDocument.getElementById('chart'); \
             const r = k.width / k.clientWidth; \
             const d = k.getContext('2d').getImageData(Math.round(1100 * r), 0, Math.round(140 * r), k.height).data; \
             let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] < 250 || d[i+1] < 250 || d[i+2] < 250) n++; \
             return n;",
        )
        .await;
        assert!(ink.as_u64().unwrap_or(0) > 200, "nothing drawn between x = 1100 and 1240 px: {ink} non-white pixels");
        // Shrink the frame: the chart follows.
        js(
            c,
            "const f = document.getElementById('frame'); f.style.width = '800px'; f.style.height = '360px'; return 1;",
        )
        .await;
        let script = format!(
            "const f = document.getElementById('frame'); const d = f.contentDocument; \
             const w = d.querySelector('.chart-wrap'); const k = d.getElementById('chart'); \
             return Number(w.dataset.draws) > {draws} && Math.abs(k.clientWidth - 800) <= 16 \
                 && k.clientHeight <= 360 && k.clientHeight >= 340 && [k.clientWidth, k.clientHeight];"
        );
        let resized = wait_for(c, &script, "redraw at the frame's new size (800x360)").await;
        println!("after resizing the frame to 800x360: canvas {}x{}", resized[0], resized[1]);
        let frame_errors =
            js(c, "return document.getElementById('frame').contentWindow.__errors || ['no hook'];").await;
        assert_eq!(frame_errors, json!([]), "console errors or CSP violations inside the frame");
        assert_no_errors(c, "embed host page").await;
    });
}

/// config.json files of models without the fields the planner reads: a convolutional vision model and a
/// state-space model (Mamba has layers and a width but no attention heads).
const CONVNEXT_CONFIG: &str = r#"{"architectures": ["ConvNextForImageClassification"], "model_type": "convnext",
  "depths": [3, 3, 9, 3], "hidden_sizes": [96, 192, 384, 768], "num_channels": 3, "patch_size": 4, "image_size": 224}"#;
const MAMBA_CONFIG: &str = r#"{"architectures": ["MambaForCausalLM"], "model_type": "mamba", "d_model": 2560,
  "n_layer": 64, "vocab_size": 50280, "ssm_cfg": {}, "rms_norm": true, "residual_in_fp32": true}"#;

/// Sets the text box `id` to what `expr` (JavaScript) evaluates to and fires `input`, as a paste would; large
/// texts are built in the page so they do not cross the WebDriver wire.
async fn paste(c: &fantoccini::Client, id: &str, expr: &str) {
    let script = format!(
        "const e = document.getElementById({id:?}); if (!e) return false; e.value = {expr}; \
         e.dispatchEvent(new Event('input', {{bubbles: true}})); return true;"
    );
    assert_eq!(js(c, &script).await, json!(true), "no #{id} to paste into");
}

/// After bad input the page still works: a valid edit redraws the chart with ink and a verdict.
async fn assert_still_works(c: &fantoccini::Client, step: &str) {
    let before = chart_state(c).await.0;
    // A different value each time: an edit to the same value changes nothing and draws nothing.
    let isl = js(c, "return document.getElementById('plan-isl').value === '2048' ? '4096' : '2048';").await;
    set_value(c, "#plan-isl", isl.as_str().unwrap_or("2048"), "change").await;
    wait_draws_above(c, before, &format!("{step}: redraw after a valid edit")).await;
    assert_chart_drawn(c, step).await;
    assert_no_errors(c, step).await;
}

/// Bad input never blanks the page: 10 MB pasted into the measurements box and into the config.json box, a
/// binary file's bytes, and config.json files of other architectures each give a visible message naming the
/// problem, and the chart draws again after each.
#[test]
fn bad_pastes_show_a_message_and_keep_the_page() {
    browser_test("bad_pastes_show_a_message_and_keep_the_page", |p| async move {
        let c = &p.c;
        p.open("?view=plan&model=glm-5.2&isl=1024&osl=1024&cmax=64", "planner").await;
        let visible_text = |id: &str| {
            format!(
                "const e = document.getElementById({id:?}); \
                 return e && e.offsetParent !== null && e.innerText.trim().length > 0 && e.innerText;"
            )
        };

        // 1. Ten megabytes of text in the measurements box: the importer's message, the published fit stays.
        let started = Instant::now();
        paste(c, "plan-meas", "'{\"max_concurrency\": 8, \"output_throughput\": '.padEnd(10 * 1024 * 1024, '9 ')")
            .await;
        let err = wait_for(c, &visible_text("plan-meas-error"), "10 MB measurements: message").await;
        println!(
            "10 MB of measurements: message after {:.0} ms: {}",
            started.elapsed().as_secs_f64() * 1e3,
            err.as_str().unwrap_or("").lines().next().unwrap_or("")
        );
        assert!(err.as_str().unwrap_or("").contains("pasted results"), "message does not name the input: {err}");
        paste(c, "plan-meas", "''").await;
        wait_for(c, "return !document.getElementById('plan-meas-error')", "measurements error cleared").await;
        assert_still_works(c, "after 10 MB of measurements").await;

        // 2. A binary file's bytes (a PNG header, NULs and every byte value) in the measurements box.
        paste(
            c,
            "plan-meas",
            "'\\x89PNG\\r\\n\\x1a\\n' + Array.from({length: 4096}, (_, i) => String.fromCharCode(i % 256)).join('')",
        )
        .await;
        let err = wait_for(c, &visible_text("plan-meas-error"), "binary measurements: message").await;
        println!("binary measurements: {}", err.as_str().unwrap_or("").lines().next().unwrap_or(""));
        paste(c, "plan-meas", "''").await;
        assert_still_works(c, "after binary measurements").await;

        // 3. The config.json box: 10 MB, binary bytes, then a vision and a state-space model's configs.
        set_value(c, "#plan-src", "hf", "change").await;
        wait_for(c, &visible_text("plan-hf-error"), "empty config message").await;
        let cases: [(&str, String, &str); 4] = [
            (
                "10 MB config.json",
                "'{\"num_hidden_layers\": 61, \"pad\": \"'.padEnd(10 * 1024 * 1024, 'x')".into(),
                "not valid JSON",
            ),
            (
                "binary config.json",
                "Array.from({length: 4096}, (_, i) => String.fromCharCode(i % 256)).join('')".into(),
                "not valid JSON",
            ),
            ("vision model config.json", format!("{CONVNEXT_CONFIG:?}"), "describe reads decoder-only language models"),
            ("state-space model config.json", format!("{MAMBA_CONFIG:?}"), "config.json has none of the fields"),
        ];
        for (what, expr, expected) in cases {
            paste(c, "plan-hf", &expr).await;
            let err = wait_for(
                c,
                &format!(
                    "const e = document.getElementById('plan-hf-error'); \
                     return e && e.offsetParent !== null && e.innerText.includes({expected:?}) && e.innerText;"
                ),
                &format!("{what}: message"),
            )
            .await;
            let err = err.as_str().unwrap_or("");
            println!("{what}: {}", err.chars().take(160).collect::<String>());
            let (mode, verdict_text) = verdict(c).await;
            assert!(mode.is_empty() && verdict_text.contains("No plan"), "{what}: verdict {verdict_text}");
            assert_eq!(
                js(c, "return document.querySelectorAll('aside select, aside input').length > 10").await,
                json!(true)
            );
            // Cleared (a visible 10 MB text box costs Chromium seconds of layout on every later edit), then back to
            // a report model: the plan and the chart return.
            paste(c, "plan-hf", "''").await;
            set_value(c, "#plan-src", "report", "change").await;
            wait_for(c, "const v = document.getElementById('verdict'); return v && v.dataset.mode !== '';", what).await;
            assert_still_works(c, what).await;
            set_value(c, "#plan-src", "hf", "change").await;
        }
    });
}

/// The frontier view: throughput per GPU against tok/s per user with the frontier marked, a headline marked as
/// interpolated (or as a predicted point), latencies in the table and the tooltips, the frontier-only toggle and
/// the TTFT axis going into the URL and redrawing with fewer points.
#[test]
fn frontier_view_headline_latencies_and_toggle() {
    browser_test("frontier_view_headline_latencies_and_toggle", |p| async move {
        let c = &p.c;
        let d0 = p.open(NIM_FRONTIER, "frontier view").await;
        assert_chart_drawn(c, "frontier view").await;
        let head = text_of(c, "frontier-headline").await;
        assert!(
            head.contains("output tok/s per GPU at")
                && (head.contains("interpolated") || head.contains("predicted at")),
            "headline: {head}"
        );
        println!("frontier headline: {head}");
        // Published NIM points state their TTFT: no dash in that column for them.
        let ttft = js(
            c,
            "return Array.from(document.querySelectorAll('#frontier-table tbody tr')) \
             .filter(r => r.cells[0].innerText === 'published').map(r => r.cells[7].innerText);",
        )
        .await;
        let ttft: Vec<&str> = ttft.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert!(!ttft.is_empty() && ttft.iter().all(|t| *t != "-"), "published TTFT cells: {ttft:?}");
        let hits = hit_points(c).await;
        let rows = js(c, "return document.querySelectorAll('#frontier-table tbody tr').length").await;
        assert_eq!(json!(hits.len()), rows, "one hit point per table row");
        let tip = tooltip_at(c, hits[hits.len() - 1].0, hits[hits.len() - 1].1, "frontier tooltip").await;
        c.release_actions().await.unwrap();
        assert!(tip.contains("tok/s per GPU") && tip.contains("TTFT") && tip.contains("TPOT"), "tooltip: {tip}");
        js(c, "document.getElementById('frontier-only').click(); return 1;").await;
        let d1 = wait_draws_above(c, d0, "frontier only").await;
        assert_url_has(c, "front=1").await;
        let only = hit_points(c).await;
        assert!(!only.is_empty() && only.len() < hits.len(), "frontier only: {} of {} points", only.len(), hits.len());
        let marked = js(c, "return Array.from(document.querySelectorAll('#frontier-table tbody tr')).every(r => r.classList.contains('on-frontier'))").await;
        assert_eq!(marked, json!(true), "frontier only lists points off the frontier");
        set_value(c, "#x-axis", "ttft", "change").await;
        wait_draws_above(c, d1, "TTFT axis").await;
        assert_url_has(c, "x=ttft").await;
        let label = js(c, "return document.getElementById('chart').getAttribute('aria-label')").await;
        assert!(label.as_str().unwrap().contains("time to first token"), "chart label: {label}");
        set_value(c, "#at", "30", "change").await;
        assert_url_has(c, "at=30").await;
        // Every control labelled, the chart described (checked here rather than in the all-views test, which
        // has no time left for two more page loads).
        assert_eq!(js(c, A11Y_PROBLEMS).await, json!([]), "accessibility problems on the frontier view");
        // The throughput view's table shows the same stated TTFT beside the model's.
        click_tab(c, "explorer").await;
        let ttft = wait_for(
            c,
            "const r = Array.from(document.querySelectorAll('#points-table tbody tr:not(.stated)')); \
             return r.length > 0 && r.map(x => x.cells[5].innerText);",
            "throughput table with latencies",
        )
        .await;
        let ttft: Vec<&str> = ttft.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert!(ttft.iter().all(|t| !t.starts_with('-') && t.contains(" / ")), "TTFT stated / predicted: {ttft:?}");
        assert_no_errors(c, "frontier").await;
    });
}

/// The compare view: one dataset against another on the same axes (a side column in the table, both in the
/// chart's description), then against the planner's model and hardware, all in a shareable URL.
#[test]
fn compare_view_datasets_and_planner() {
    browser_test("compare_view_datasets_and_planner", |p| async move {
        let c = &p.c;
        let d0 = p.open("?view=compare&model=glm-5.2&vs=glm-5.3", "compare view").await;
        assert_chart_drawn(c, "compare view").await;
        let sides = js(
            c,
            "return Array.from(new Set(Array.from(document.querySelectorAll('#frontier-table tbody tr')) \
             .map(r => r.cells[0].innerText)));",
        )
        .await;
        assert_eq!(sides, json!(["glm-5.2", "glm-5.3"]), "sides in the table");
        let label = js(c, "return document.getElementById('chart').getAttribute('aria-label')").await;
        assert!(label.as_str().unwrap().contains(" and glm-5.3 ("), "chart label: {label}");
        set_value(c, "#vs", "plan", "change").await;
        wait_draws_above(c, d0, "compare against the planner").await;
        assert_url_has(c, "vs=plan").await;
        let head = text_of(c, "frontier-headline").await;
        assert!(head.contains("planner (gb300-station)"), "headline: {head}");
        assert_eq!(js(c, A11Y_PROBLEMS).await, json!([]), "accessibility problems on the compare view");
        assert_no_errors(c, "compare").await;
    });
}

/// The downloads of exactly the current view: SVG of the chart, CSV of the frontier's points (with latencies),
/// and the JSON metadata naming the sources, the model version, the engine profile and its coefficients.
#[test]
fn exports_svg_csv_of_the_view_and_json_metadata() {
    browser_test("exports_svg_csv_of_the_view_and_json_metadata", |p| async move {
        let c = &p.c;
        p.open(&format!("{NIM_FRONTIER}&front=1"), "frontier only").await;
        let export = |id: &'static str| async move {
            js(c, &format!("window.__lastExport = null; document.getElementById('{id}').click(); return 1;")).await;
            wait_for(c, "const e = window.__lastExport; return e && [e.kind, e.href, e.text];", id).await
        };
        let svg = export("export-svg").await;
        assert_eq!(svg[0], json!("svg"));
        let text = svg[2].as_str().unwrap();
        assert!(text.starts_with("<svg") && text.contains("Pareto frontier"), "SVG: {}", &text[..text.len().min(300)]);
        let csv = export("export-csv").await;
        let text = csv[2].as_str().unwrap();
        assert!(text
            .starts_with("side,kind,mode,concurrency,output_tok_s,gpus,tok_s_per_gpu,tok_s_per_user,ttft_s,tpot_s,"));
        // Frontier only: every point row of the CSV is on the frontier, as on the chart.
        let rows = js(c, "return document.querySelectorAll('#frontier-table tbody tr').length").await.as_u64().unwrap();
        let points: Vec<&str> = text.lines().skip(1).filter(|l| !l.contains(",headline")).collect();
        assert_eq!(points.len() as u64, rows, "CSV rows against the table: {text}");
        assert!(points.iter().all(|l| l.contains(",true,false,")), "{text}");
        let meta = export("export-json").await;
        let v: serde_json::Value = serde_json::from_str(meta[2].as_str().unwrap()).expect("metadata is JSON");
        assert!(v["model_version"].as_str().unwrap().starts_with("sim-core "), "{v}");
        let by = &v["predicted_by"][0];
        assert!(by["engine_profile"].as_str().is_some_and(|e| !e.is_empty()), "{v}");
        let k = by["coefficients"].as_array().expect("coefficients listed");
        assert!(!k.is_empty() && k.iter().all(|c| c["basis"].is_string()), "{v}");
        assert!(v["sources"].as_array().is_some_and(|s| !s.is_empty()), "{v}");
        assert_eq!(v["chart"], json!("frontier"));
        assert_no_errors(c, "exports").await;
    });
}

/// The rate sweep opened by its link: a table row per rate and mode (offered rates as asked) and its chart; a bad
/// rate typed in shows sim-core's refusal and the page keeps working (a good list brings the table back).
#[test]
fn rate_sweep_table_and_refusal() {
    browser_test("rate_sweep_table_and_refusal", |p| async move {
        let c = &p.c;
        c.goto(&format!("{}?view=rates&model=glm-5.2&rate=0.5,2,inf&num_prompts=50", p.base))
            .await
            .unwrap_or_else(|e| panic!("rate sweep: navigation: {e}"));
        let offered = "const r = [...document.querySelectorAll('#rate-table tr.rate-row')]; \
                       return r.length > 0 && r.map(t => t.cells[1].innerText.trim());";
        let rates = wait_for(c, offered, "rate sweep table").await;
        let rates: Vec<&str> = rates.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(rates.len() % 3, 0, "not one row per rate and mode: {rates:?}");
        for r in ["0.500", "2.00", "inf"] {
            assert_eq!(rates.iter().filter(|x| **x == r).count(), rates.len() / 3, "rate {r}: {rates:?}");
        }
        let modes = rates.len() / 3;
        let drawn =
            "const s = document.querySelector('.rate-chart svg'); return !!s && s.querySelectorAll('polyline').length;";
        assert!(wait_for(c, drawn, "rate sweep chart").await.as_u64().unwrap_or(0) >= modes as u64);
        assert_eq!(js(c, A11Y_PROBLEMS).await, json!([]), "accessibility problems on the rate sweep view");

        set_value(c, "#rs-rate", "0.5,-1", "change").await;
        let refusal =
            wait_for(c, "const e = document.getElementById('rate-refusal'); return e && e.innerText;", "refusal").await;
        assert!(refusal.as_str().unwrap_or("").contains("rate -1"), "refusal does not name the rate: {refusal}");
        assert_absent(c, "#rate-table", "a table beside the refusal").await;
        assert_url_has(c, "rate=0.5%2C-1").await;
        assert_no_errors(c, "after a bad rate").await;

        set_value(c, "#rs-rate", "1,2", "change").await;
        let back = "const n = document.querySelectorAll('#rate-table tr.rate-row').length; return n > 0 && n;";
        assert_eq!(wait_for(c, back, "table after a good list").await, json!(2 * modes));
        assert_no_errors(c, "rate sweep").await;
    });
}
