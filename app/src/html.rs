//! Static markup as text, for the big tables: a table built with `view!` costs the bundle a monomorphised
//! render function per cell type, markup set as `inner_html` costs one string builder (the page's strict CSP
//! is unaffected: no script or style attribute is ever written, and every text is escaped).

use std::fmt::Write;

/// `s` with `& < > " '` escaped, safe as element text and as a double-quoted attribute value.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A string of markup under construction.
#[derive(Debug, Default)]
pub struct Html(String);

impl Html {
    pub fn new() -> Self {
        Html(String::new())
    }

    /// Opens `tag` with attributes (`(name, value)`; names are literals, values are escaped; an empty value
    /// leaves the attribute out).
    pub fn open(&mut self, tag: &str, attrs: &[(&str, &str)]) -> &mut Self {
        let _ = write!(self.0, "<{tag}");
        for (k, v) in attrs.iter().filter(|(_, v)| !v.is_empty()) {
            let _ = write!(self.0, " {k}=\"{}\"", escape(v));
        }
        self.0.push('>');
        self
    }

    pub fn close(&mut self, tag: &str) -> &mut Self {
        let _ = write!(self.0, "</{tag}>");
        self
    }

    /// Escaped text.
    pub fn text(&mut self, s: &str) -> &mut Self {
        self.0.push_str(&escape(s));
        self
    }

    /// `<tag attrs>text</tag>`.
    pub fn el(&mut self, tag: &str, attrs: &[(&str, &str)], text: &str) -> &mut Self {
        self.open(tag, attrs).text(text).close(tag)
    }

    /// A source and its quote as the tables show them: `<span class="src">source</span> “quote”`.
    pub fn quote(&mut self, source: &str, quote: &str) -> &mut Self {
        if source.is_empty() {
            return self;
        }
        self.el("span", &[("class", "src")], source).text(&format!(" \u{201c}{quote}\u{201d}"))
    }

    pub fn finish(self) -> String {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_attributes_are_escaped() {
        let mut h = Html::new();
        h.open("td", &[("class", "a\"b"), ("id", "")]).text("<script>&").close("td");
        assert_eq!(h.finish(), "<td class=\"a&quot;b\">&lt;script&gt;&amp;</td>");
        let mut q = Html::new();
        q.quote("s", "it's");
        assert_eq!(q.finish(), "<span class=\"src\">s</span> \u{201c}it&#39;s\u{201d}");
    }
}
