//! Provenance: source ids, and every `from` naming a known source and quoting it verbatim with the numbers
//! it gives (`quote_mentions` reads them in each translation's number style).

use super::Checker;
use crate::dataset::schema::From;
use crate::diagnostic::Diagnostic;
use std::collections::BTreeSet;

impl Checker<'_> {
    pub(super) fn sources(&mut self) {
        let mut ids = BTreeSet::new();
        for s in &self.ds.sources {
            if !ids.insert(s.id.as_str()) {
                self.out.push(
                    Diagnostic::error("sources.json", "", format!("source id `{}` is defined twice", s.id))
                        .with_hint("source ids are unique across sources.json and imported files"),
                );
            }
        }
        if self.ds.sources.is_empty() {
            self.out.push(
                Diagnostic::error("sources.json", "", "no sources defined")
                    .with_hint("add sources.json listing the seed files every `from.source` refers to"),
            );
        }
    }

    /// A `from` must name a known source and quote it verbatim; for published numbers the quote must hold the number.
    pub(super) fn from(&mut self, file: &str, pointer: &str, from: &From, number: Option<f64>) {
        self.provenance_at(file, &format!("{pointer}/from"), from, number);
    }

    /// `from` for a provenance object at `fp` itself (an element of an array of quotes).
    pub(super) fn provenance_at(&mut self, file: &str, fp: &str, from: &From, number: Option<f64>) {
        let Some(src) = self.ds.sources.iter().find(|s| s.id == from.source) else {
            let known: Vec<_> = self.ds.sources.iter().map(|s| s.id.as_str()).collect();
            self.err(
                file,
                format!("{fp}/source"),
                format!("unknown source `{}`", from.source),
                &format!("use one of the ids in sources.json: {}", known.join(", ")),
            );
            return;
        };
        if from.quote.trim().is_empty() {
            self.err(file, format!("{fp}/quote"), "empty quote".into(), "copy the sentence the value comes from");
            return;
        }
        if let (Some(seeds), true) = (self.seeds, src.is_external()) {
            // A publication's text is checked when it is at hand (beside the seeds); without it the quote can
            // only be held to its number below, and a note says so once per source.
            match seeds.get(&src.file) {
                Some(text) if !text.contains(&from.quote) => self.err(
                    file,
                    format!("{fp}/quote"),
                    format!("quote not found verbatim in {} (text of external source `{}`)", src.file, src.id),
                    "copy the table row character for character from that text",
                ),
                None if self.unchecked.insert(src.file.clone()) => self.out.push(
                    Diagnostic::note(
                        file,
                        format!("{fp}/source"),
                        format!(
                            "text {} of external sources (first: `{}`) is not among the texts given; their quotes are not checked",
                            src.file, src.id
                        ),
                    )
                    .with_hint("the file is named relative to the seeds directory; put it there to check them"),
                ),
                _ => {}
            }
        } else if let Some(seeds) = self.seeds.filter(|_| !src.is_import()) {
            match seeds.get(&src.file) {
                Some(text) if !text.contains(&from.quote) => self.err(
                    file,
                    format!("{fp}/quote"),
                    format!("quote not found verbatim in seed {}", src.file),
                    "copy the text character for character from the seed",
                ),
                None => self.err(
                    file,
                    format!("{fp}/source"),
                    format!("seed file {} of source `{}` is missing from the seeds directory", src.file, src.id),
                    "pass the directory that holds the seed texts with --seeds",
                ),
                _ => {}
            }
        }
        if let Some(n) = number {
            if !quote_mentions(&from.quote, n) {
                self.err(
                    file,
                    format!("{fp}/quote"),
                    format!("the quote does not contain the value {n}"),
                    "quote the clause that states this number",
                );
            }
        }
    }

    /// A number stated next to another must be in the same quote.
    pub(super) fn mentions(&mut self, file: &str, pointer: &str, quote: &str, x: f64, what: &str) {
        if !quote_mentions(quote, x) {
            self.err(
                file,
                pointer.to_string(),
                format!("the quote does not contain the {what} {x}"),
                "quote the row or clause that states this number",
            );
        }
    }

    /// A quote that is a Markdown table row (`| 8 | 153.5 | ...`) of a sweep table starts with its concurrency:
    /// a point quoting another level's row is a transcription slip.
    pub(super) fn table_row(&mut self, file: &str, pointer: &str, quote: &str, concurrency: f64) {
        let Some(first) = quote.trim().strip_prefix('|').and_then(|r| r.split('|').next()) else { return };
        let first = first.trim();
        if first.parse::<f64>().is_ok_and(|c| c != concurrency) {
            self.err(
                file,
                format!("{pointer}/from/quote"),
                format!("the quoted row is for concurrency {first}, the point is at {concurrency}"),
                "quote the row of this point's concurrency",
            );
        }
    }
}

/// True when some number written in `quote` equals `value`, reading `1,525`, `1.525` and `1 525` as the
/// thousands-separated forms the translations use, and `7,1` as a German decimal.
pub fn quote_mentions(quote: &str, value: f64) -> bool {
    let chars: Vec<char> = quote.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len()
            && (chars[i].is_ascii_digit()
                || ((chars[i] == ',' || chars[i] == '.') && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit())))
        {
            i += 1;
        }
        let token: String = chars[start..i].iter().collect();
        let readings = [token.replace(',', ""), token.replace('.', "").replace(',', "."), token.replace(',', ".")];
        if readings.iter().any(|r| r.parse::<f64>().is_ok_and(|x| (x - value).abs() <= 1e-9 * value.abs().max(1.0))) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::quote_mentions;

    #[test]
    fn reads_numbers_in_every_translation_style() {
        assert!(quote_mentions("bereikte 1,525 op 32 streams", 1525.0));
        assert!(quote_mentions("misst 1.525 Token pro Sekunde", 1525.0));
        assert!(quote_mentions("7,1 TB/s", 7.1));
        assert!(quote_mentions("92.242 GB / s", 92.242));
        assert!(!quote_mentions("139 uitvoertokens", 1525.0));
    }
}
