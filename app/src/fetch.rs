//! Fetching the page's data files: each request starts when asked (so several run at once) and is awaited as
//! text; a failed request or an HTTP error is a message naming the file, never a panic.

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::Response;

/// A request in flight for one data file, named relative to the page (`data/<name>`).
pub struct Pending {
    path: String,
    response: JsFuture,
}

/// Starts fetching `data/<name>`, relative to the page's own URL: the page and its data files are one folder
/// wherever it is hosted, embedded in an iframe included.
pub fn start(name: &str) -> Pending {
    let path = format!("{}/{name}", crate::data::DATA_DIR);
    let response = JsFuture::from(leptos::prelude::window().fetch_with_str(&path));
    Pending { path, response }
}

impl Pending {
    /// The file's text once it has arrived.
    pub async fn text(self) -> Result<String, String> {
        let path = self.path;
        let failed = |what: &str, e: wasm_bindgen::JsValue| {
            let why = e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).or_else(|| e.as_string());
            format!("{path}: {what}: {}", why.unwrap_or_else(|| "no reason given".into()))
        };
        let response = self.response.await.map_err(|e| failed("could not be fetched", e))?;
        let response: Response = response.dyn_into().map_err(|e| failed("no response", e))?;
        if !response.ok() {
            return Err(format!("{path}: the server answered {} {}", response.status(), response.status_text()));
        }
        let body = response.text().map_err(|e| failed("no body", e))?;
        let text = JsFuture::from(body).await.map_err(|e| failed("could not be read", e))?;
        text.as_string().ok_or_else(|| format!("{path}: its body is not text"))
    }
}
