//! The harness of the browser tests (tests/browser.rs): prerequisites and the skip switch, a static server for
//! dist/ (and the test pages under tests/pages/ at /__test/, dist/ without its data files at /__nodata/) that
//! sends the page's Content-Security-Policy, one
//! chromedriver + headless Chromium per test, and the shared wait-and-assert steps.

use fantoccini::actions::{InputSource, MouseActions, PointerAction};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use std::future::Future;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// The page's policy, sent with every response: no inline script or style, wasm compiled from the same origin.
/// The error hook (public/error-hook.js) records each violation into `__errors`, which every test checks.
pub const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";

/// How long any single page condition may take: the wasm start-up fit and the planner's calibration are the
/// slowest steps (a few seconds on 2 busy cores), so 20 s only trips on a real hang.
const WAIT: Duration = Duration::from_secs(20);

/// The whole of one test (browser start included); the old single test had 180 s for every step together.
const TEST_TIMEOUT: Duration = Duration::from_secs(150);

/// One browser at a time: two Chromium instances running wasm on 2 shared cores make the 20 s waits and the
/// printed timings meaningless. Tests stay separate (each its own chromedriver, profile and server), only their
/// browser sessions queue; cargo may still run them on several threads.
static ONE_BROWSER: Mutex<()> = Mutex::new(());

pub fn dist() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../dist")
}

/// Pages the tests need around the bundle (an iframe host for the embed), served at `/__test/`.
fn test_pages() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("pages")
}

/// Written straight to the process's stderr, past libtest's output capture: a skipped test reports "ok", so the
/// skip must be visible without --nocapture.
fn loud(msg: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{msg}");
}

/// `true` when the test must not run (TWOTOWER_SKIP_BROWSER=1, said loudly); panics with what to do when a
/// prerequisite is missing. A missing dist/ or browser is never a silent pass, in CI (CI=true) or not.
pub fn skip_or_check(test: &str, needs_browser: bool) -> bool {
    let skip = std::env::var("TWOTOWER_SKIP_BROWSER").unwrap_or_default();
    if skip == "1" {
        loud(&format!("\nSKIPPED browser test `{test}`: TWOTOWER_SKIP_BROWSER=1, it did not run"));
        return true;
    }
    let mut missing = Vec::new();
    if !dist().join("index.html").is_file() {
        missing.push(format!("{}/index.html (run scripts/build-app.sh)", dist().display()));
    }
    if needs_browser {
        for bin in [CHROMEDRIVER, CHROMIUM] {
            if !Path::new(bin).is_file() {
                missing.push(format!("{bin} (run scripts/setup.sh)"));
            }
        }
    }
    if !missing.is_empty() {
        let ci = if std::env::var("CI").as_deref() == Ok("true") {
            " (CI=true: a browser test never skips here)"
        } else {
            ""
        };
        let var = if skip.is_empty() { String::new() } else { format!("; TWOTOWER_SKIP_BROWSER={skip:?} is not 1") };
        panic!(
            "browser test `{test}` cannot run{ci}: missing {}{var}. Set TWOTOWER_SKIP_BROWSER=1 to skip it on purpose.",
            missing.join(", ")
        );
    }
    false
}

/// One test's page: the WebDriver client and the URL dist/ is served at (ends with `/`).
pub struct Page {
    pub c: Client,
    pub base: String,
}

impl Page {
    /// Opens `base` + `query` (e.g. `?view=plan`) and waits for its first chart draw; returns the draw count.
    pub async fn open(&self, query: &str, what: &str) -> u64 {
        self.c.goto(&format!("{}{query}", self.base)).await.unwrap_or_else(|e| panic!("{what}: navigation: {e}"));
        wait_draws_above(&self.c, 0, what).await
    }
}

/// Kills chromedriver when the test ends, passing or not (the session close before it ends Chromium).
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `checks` against a fresh page: its own dist/ server, chromedriver, Chromium session and profile
/// directory, so no test sees another's state and parallel threads never share a port (all ports are the
/// kernel's free ones on 127.0.0.1). Skips (loudly) with TWOTOWER_SKIP_BROWSER=1.
pub fn browser_test<F, Fut>(test: &'static str, checks: F)
where
    F: FnOnce(Page) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    if skip_or_check(test, true) {
        return;
    }
    // A test that panicked released the lock by unwinding; its poison says nothing about the next test.
    let _turn = ONE_BROWSER.lock().unwrap_or_else(|p| p.into_inner());
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(run_session(test, checks));
}

async fn run_session<F, Fut>(test: &'static str, checks: F)
where
    F: FnOnce(Page) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let started = Instant::now();
    let http = serve(dist());
    let base = format!("http://127.0.0.1:{http}/");
    let wd_port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let driver = Command::new(CHROMEDRIVER)
        .arg(format!("--port={wd_port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{test}: start {CHROMEDRIVER}: {e}"));
    let _guard = Guard(driver);
    while TcpStream::connect(("127.0.0.1", wd_port)).is_err() {
        assert!(started.elapsed() < WAIT, "{test}: chromedriver did not listen on 127.0.0.1:{wd_port} within {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let profile = std::env::temp_dir().join(format!("twotower-chromium-{}-{wd_port}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    let mut caps = serde_json::Map::new();
    // Exactly these flags: no GPU, no QUIC, no background, component or sync traffic, a fresh profile. The window
    // size is set over WebDriver below instead of by flag.
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": CHROMIUM,
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     format!("--user-data-dir={}", profile.display())]
        }),
    );
    let client = ClientBuilder::native()
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{wd_port}"))
        .await
        .unwrap_or_else(|e| panic!("{test}: connect to chromedriver: {e}"));
    // The chart's size, and with it every hit point the hover checks aim at, follows the window.
    client.set_window_size(1200, 900).await.unwrap_or_else(|e| panic!("{test}: set window size: {e}"));
    let browser_ms = started.elapsed().as_secs_f64() * 1e3;
    // The checks run in their own task so a failed assertion still closes the browser before it is reported.
    let page = Page { c: client.clone(), base };
    let task = tokio::spawn(async move {
        tokio::time::timeout(TEST_TIMEOUT, async move {
            let c = page.c.clone();
            checks(page).await;
            assert_local_only(&c).await;
            // Whatever the checks asserted, the page they end on has no console error or CSP violation.
            assert_no_errors(&c, test).await;
        })
        .await
    });
    let outcome = task.await;
    let _ = client.close().await;
    let _ = std::fs::remove_dir_all(&profile);
    println!("[{test}] {:.1} s (chromedriver + Chromium start {browser_ms:.0} ms)", started.elapsed().as_secs_f64());
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(_)) => panic!("{test}: timed out after {TEST_TIMEOUT:?}"),
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// A static file server for dist/ (and tests/pages/ at /__test/) on 127.0.0.1; the thread dies with the test
/// process.
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
    // `/__nodata/`: the page as a host that lost its data/ folder serves it.
    let (rel, without_data) = match rel.strip_prefix("__nodata/") {
        Some("") => ("index.html", true),
        Some(r) => (r, true),
        None => (rel, false),
    };
    let file = match rel.strip_prefix("__test/") {
        Some(page) => test_pages().join(page),
        None => root.join(rel),
    };
    let ok = !rel.contains("..") && file.is_file() && !(without_data && rel.starts_with("data/"));
    let (status, body) = if ok { ("200 OK", std::fs::read(&file)?) } else { ("404 Not Found", b"not found".to_vec()) };
    let ctype = match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript",
        Some("wasm") => "application/wasm",
        Some("css") => "text/css",
        Some("json") => "application/json",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Security-Policy: {CSP}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(&body)?;
    stream.flush()
}

/// With TWOTOWER_SCREENSHOT=1, saves what the browser shows as `docs/<name>` (PNG): the README's picture of the
/// explorer is made by the browser test, so it shows the page as built.
pub async fn screenshot_if_asked(c: &Client, name: &str) {
    if std::env::var("TWOTOWER_SCREENSHOT").as_deref() != Ok("1") {
        return;
    }
    let png = c.screenshot().await.unwrap_or_else(|e| panic!("screenshot {name}: {e}"));
    assert!(png.starts_with(b"\x89PNG"), "screenshot {name}: not a PNG");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, &png).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    loud(&format!("wrote {} ({} bytes)", path.display(), png.len()));
}

/// Everything in `dir`, each file gzipped on its own (what a static host serving gzip would send).
pub fn gzipped_size(dir: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        total += if p.is_dir() { gzipped_size(&p) } else { gzipped_size_of(&p) };
    }
    total
}

/// One file's size gzipped at the best level.
pub fn gzipped_size_of(file: &Path) -> u64 {
    let mut raw = Vec::new();
    std::fs::File::open(file).unwrap().read_to_end(&mut raw).unwrap();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&raw).unwrap();
    enc.finish().unwrap().len() as u64
}

pub fn sample(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("import-samples").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A Chrome DevTools Protocol command sent through chromedriver's `goog/cdp/execute` endpoint: WebDriver itself
/// can neither throttle the CPU nor turn the HTTP cache off.
#[derive(Debug)]
struct DevToolsCommand {
    method: &'static str,
    params: Value,
}

impl fantoccini::wd::WebDriverCompatibleCommand for DevToolsCommand {
    fn endpoint(&self, base: &url::Url, session: Option<&str>) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/goog/cdp/execute", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(json!({ "cmd": self.method, "params": self.params }).to_string()))
    }
}

/// Sends the DevTools command `method` with `params` to the page's tab (e.g. `Emulation.setCPUThrottlingRate`).
pub async fn devtools(c: &Client, method: &'static str, params: Value) {
    c.issue_cmd(DevToolsCommand { method, params }).await.unwrap_or_else(|e| panic!("DevTools command {method}: {e}"));
}

/// Runs `script` (a function body; `return` gives the value) in the page.
pub async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
}

/// The `innerText` of the element with `id`, or "" when there is none.
pub async fn text_of(c: &Client, id: &str) -> String {
    let v = js(c, &format!("const e = document.getElementById({id:?}); return e && e.innerText;")).await;
    v.as_str().unwrap_or("").to_string()
}

/// The page's collected errors (index.html's hook), for failure messages.
async fn page_errors(c: &Client) -> Value {
    js(c, "return window.__errors || []").await
}

/// Polls `script` until it returns something other than null/false; panics after 20 s naming `what`, the last
/// value and the page's errors.
pub async fn wait_for(c: &Client, script: &str, what: &str) -> Value {
    let start = Instant::now();
    loop {
        let v = js(c, script).await;
        if !v.is_null() && v != json!(false) {
            return v;
        }
        if start.elapsed() > WAIT {
            panic!("{what}: not seen after {WAIT:?} (last value {v}); page errors: {}", page_errors(c).await);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The chart wrapper's data attributes: (draws, model, predicted sum).
pub async fn chart_state(c: &Client) -> (u64, String, String) {
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

/// Waits until the chart has drawn more than `n` times; returns the new count.
pub async fn wait_draws_above(c: &Client, n: u64, what: &str) -> u64 {
    let start = Instant::now();
    loop {
        let (d, _, _) = chart_state(c).await;
        if d > n {
            return d;
        }
        if start.elapsed() > WAIT {
            panic!(
                "{what}: no chart draw after {WAIT:?} (draws = {d}, waiting for > {n}); page errors: {}",
                page_errors(c).await
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Non-white pixels of the canvas and a hash of all its pixels.
pub async fn pixels(c: &Client) -> (u64, String) {
    let v = js(
        c,
        "const c = document.getElementById('chart'); if (!c) return null; \
         const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; \
         let n = 0, h = 2166136261 >>> 0; \
         for (let i = 0; i < d.length; i += 4) { if (d[i] < 250 || d[i+1] < 250 || d[i+2] < 250) n++; \
           h = Math.imul(h ^ (d[i] + 7 * d[i+1] + 13 * d[i+2]), 16777619) >>> 0; } \
         return [n, String(h)];",
    )
    .await;
    assert!(v.is_array(), "no #chart canvas on the page");
    (v[0].as_u64().unwrap(), v[1].as_str().unwrap().to_string())
}

/// The canvas has ink: more than 2000 non-white pixels.
pub async fn assert_chart_drawn(c: &Client, what: &str) {
    let (ink, _) = pixels(c).await;
    assert!(ink > 2000, "{what}: canvas looks empty ({ink} non-white pixels)");
}

/// No console error, panic, uncaught error or Content-Security-Policy violation on the page so far.
pub async fn assert_no_errors(c: &Client, page: &str) {
    let errors = js(c, "return window.__errors || ['__errors hook missing']").await;
    assert_eq!(errors, json!([]), "console errors, panics or CSP violations on {page}");
}

/// Every resource the current page loaded came from the local server (127.0.0.1), none from elsewhere.
pub async fn assert_local_only(c: &Client) {
    let urls = js(
        c,
        "return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource')) \
         .map(e => e.name).filter(n => /^(https?|wss?):/.test(n) && !n.startsWith('http://127.0.0.1:'));",
    )
    .await;
    assert_eq!(urls, json!([]), "the page fetched from somewhere other than 127.0.0.1");
}

/// Sets a control's value and fires `event` (`input` or `change`) on it, as a user edit would.
pub async fn set_value(c: &Client, selector: &str, value: &str, event: &str) {
    let script = format!(
        "const e = document.querySelector({selector:?}); if (!e) return false; e.value = {value:?}; \
         e.dispatchEvent(new Event({event:?}, {{bubbles: true}})); return true;"
    );
    assert_eq!(js(c, &script).await, json!(true), "no element {selector} to set to {value:?}");
}

/// Clicks the view tab `view` (`.tab[data-view=...]`).
pub async fn click_tab(c: &Client, view: &str) {
    let clicked = js(
        c,
        &format!(
            "const t = document.querySelector('.tab[data-view={view}]'); if (!t) return false; t.click(); return true;"
        ),
    )
    .await;
    assert_eq!(clicked, json!(true), "no tab for view {view}");
}

pub async fn url(c: &Client) -> String {
    c.current_url().await.unwrap().as_str().to_string()
}

/// Asserts the current URL contains `part`.
pub async fn assert_url_has(c: &Client, part: &str) {
    let u = url(c).await;
    assert!(u.contains(part), "URL has no {part}: {u}");
}

/// Asserts no element matches `selector`.
pub async fn assert_absent(c: &Client, selector: &str, why: &str) {
    assert!(c.find(Locator::Css(selector)).await.is_err(), "{selector} present: {why}");
}

/// The chart's hit points (canvas CSS pixels), in the order the page lists them.
pub async fn hit_points(c: &Client) -> Vec<(f64, f64)> {
    let hits = js(c, "const w = document.querySelector('.chart-wrap'); return w && w.dataset.hitPoints;").await;
    hits.as_str()
        .unwrap_or_else(|| panic!("no data-hit-points on .chart-wrap: {hits}"))
        .split(';')
        .filter_map(|p| p.split_once(',').and_then(|(x, y)| Some((x.parse().ok()?, y.parse().ok()?))))
        .collect()
}

/// The canvas's CSS size (clientWidth, clientHeight).
pub async fn canvas_css_size(c: &Client) -> (f64, f64) {
    let dims = js(c, "const c = document.getElementById('chart'); return [c.clientWidth, c.clientHeight];").await;
    (dims[0].as_f64().unwrap(), dims[1].as_f64().unwrap())
}

/// Moves the mouse to (x, y) in the canvas's CSS pixels (WebDriver offsets are from the element's centre).
pub async fn mouse_to(c: &Client, x: f64, y: f64, duration: Option<Duration>) {
    let (cw, ch) = canvas_css_size(c).await;
    let canvas = c.find(Locator::Css("#chart")).await.unwrap();
    let act = MouseActions::new("mouse".into()).then(PointerAction::MoveToElement {
        element: canvas,
        duration,
        x: (x - cw / 2.0).round(),
        y: (y - ch / 2.0).round(),
    });
    c.perform_actions(act).await.unwrap();
}

/// Hovers (x, y) of the canvas and returns the tooltip's text once it shows.
pub async fn tooltip_at(c: &Client, x: f64, y: f64, what: &str) -> String {
    mouse_to(c, x, y, Some(Duration::from_millis(20))).await;
    let t = wait_for(c, "const t = document.getElementById('chart-tooltip'); return t && t.innerText;", what).await;
    t.as_str().unwrap_or("").to_string()
}

/// The planner's verdict box: (recommended mode, full text).
pub async fn verdict(c: &Client) -> (String, String) {
    let v =
        js(c, "const v = document.getElementById('verdict'); return v ? [v.dataset.mode || '', v.innerText] : null;")
            .await;
    match v {
        Value::Array(a) => (a[0].as_str().unwrap_or("").into(), a[1].as_str().unwrap_or("").into()),
        _ => panic!("no #verdict element"),
    }
}
