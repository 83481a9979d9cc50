//! The setup a quote states beside a measured value (concurrency, input and output lengths, prompts sent), read
//! from each translation's wording, and the check that a sweep's points and series agree with it.
//!
//! ```text
//! "1,801 bij 256"                      concurrency 256      (Dutch: "at 256")
//! "441 tokens per seconde bij één stream" concurrency 1     (a number word before "stream")
//! "32ストリームで毎秒139個"             concurrency 32       (Japanese: "32 streams")
//! "| 8 | 153.5 | 231.0 |"               concurrency 8        (a sweep table's first column)
//! "prompt 1024 tokens, 128 generated (pp1024 tg128)"   input 1024, output 128
//! "5,000 input and 500 output tokens"  input 5000, output 500
//! "1,000 prompts sent at an unlimited rate"            1000 prompts (an all-at-once run's concurrency)
//! ```
//! A quote that states none of these is not an error: the validator counts what it could not check and says so
//! once per file in a note.

use super::{concurrency_ok, Checker};
use crate::dataset::schema::{ScenarioLoad, SweepFile};
use crate::diagnostic::Diagnostic;

/// What one quote states about its measurement's setup.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stated {
    pub concurrency: Vec<Written>,
    pub input_tokens: Vec<Written>,
    pub output_tokens: Vec<Written>,
    /// Prompts sent in a run ("1,000 prompts"): the concurrency of a run that sends them all at once.
    pub prompts: Vec<Written>,
}

/// A number as the quote writes it (`1,801`, `één`) and every value it may stand for (`1,525` is 1525 with a
/// thousands separator or 1.525 with a decimal comma).
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub text: String,
    pub values: Vec<f64>,
}

impl Written {
    /// Whether the number may stand for `x`.
    pub fn is(&self, x: f64) -> bool {
        self.values.iter().any(|v| (v - x).abs() <= 1e-9 * x.abs().max(1.0))
    }
}

impl Stated {
    fn extend(&mut self, other: Stated) {
        self.concurrency.extend(other.concurrency);
        self.input_tokens.extend(other.input_tokens);
        self.output_tokens.extend(other.output_tokens);
        self.prompts.extend(other.prompts);
    }
}

/// Reads what `quote` states about its setup (see the module's table for the wordings understood).
pub fn stated(quote: &str) -> Stated {
    let mut out = Stated::default();
    // A row of a sweep table starts with its concurrency (`| 8 | 153.5 | ...`).
    if let Some(first) = quote.trim().strip_prefix('|').and_then(|r| r.split('|').next()) {
        let first = first.trim();
        if !first.is_empty() && first.chars().all(|c| c.is_ascii_digit() || c == ',' || c == '.') {
            out.concurrency.push(Written { text: first.to_string(), values: readings(first) });
        }
        return out;
    }
    let tokens = tokenize(quote);
    let word = |i: usize| match tokens.get(i) {
        Some(Token::Word(w)) => Some(w.as_str()),
        _ => None,
    };
    for (i, t) in tokens.iter().enumerate() {
        let Token::Number { written, glued } = t else { continue };
        let (before, after) = (i.checked_sub(1).and_then(word), word(i + 1));
        let to = |list: &mut Vec<Written>| list.push(written.clone());
        match glued.as_deref() {
            Some("pp") => to(&mut out.input_tokens),
            Some("tg") => to(&mut out.output_tokens),
            Some(_) => {}
            None => {
                let streams = after.is_some_and(is_streams);
                // "bij 256" / "bei 32": a bare number after "at" that ends its clause or starts a range.
                let clause_ends = match tokens.get(i + 1) {
                    None => true,
                    Some(Token::Other(c)) => ",;:.)(!?".contains(*c),
                    Some(Token::Word(w)) => RANGE.contains(&w.as_str()),
                    Some(Token::Number { .. }) => false,
                };
                let at = before.is_some_and(|w| AT.contains(&w)) && (clause_ends || streams);
                // "32 tot en met 256 streams": the first number of a range of streams.
                let range_start = after.is_some_and(|w| RANGE.contains(&w)) && range_ends_in_streams(&tokens, i + 1);
                if streams || at || range_start {
                    to(&mut out.concurrency);
                }
                let input = before.is_some_and(|w| INPUT_BEFORE.contains(&w) || w.ends_with("input-len"))
                    || after == Some("input");
                if input {
                    to(&mut out.input_tokens);
                }
                // "500 output tokens," but not a throughput's "500 output tokens per second".
                let output = before.is_some_and(|w| w == "osl" || w.ends_with("output-len"))
                    || after == Some("generated")
                    || (after == Some("output") && !matches!(word(i + 3), Some("per" | "a" | "each")));
                if output {
                    to(&mut out.output_tokens);
                }
                if after == Some("prompts") {
                    to(&mut out.prompts);
                }
            }
        }
    }
    out
}

/// Words before a bare concurrency: Dutch, German and English "at".
const AT: [&str; 3] = ["bij", "bei", "at"];
/// Words between the two ends of a range of streams ("tot en met", "bis", "to").
const RANGE: [&str; 4] = ["tot", "bis", "to", "through"];
/// Words right before an input length.
const INPUT_BEFORE: [&str; 3] = ["prompt", "isl", "input"];

/// "streams", "clients", "gleichzeitigen Anfragen", "concurrent", Japanese "ストリーム" (also "8つのストリーム")
/// and "並列".
fn is_streams(w: &str) -> bool {
    ["stream", "client", "gleichzeitig", "concurrent", "ストリーム", "つのストリーム", "並列"]
        .iter()
        .any(|s| w.starts_with(s))
}

/// Whether the words from `from` on ("tot en met 256 streams") lead to a number followed by a streams word.
fn range_ends_in_streams(tokens: &[Token], from: usize) -> bool {
    let mut i = from;
    while let Some(Token::Word(w)) = tokens.get(i) {
        if !(RANGE.contains(&w.as_str()) || ["en", "met"].contains(&w.as_str())) {
            return false;
        }
        i += 1;
    }
    matches!(tokens.get(i), Some(Token::Number { glued: None, .. }))
        && matches!(tokens.get(i + 1), Some(Token::Word(w)) if is_streams(w))
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// A number, with the Latin letters written against it on the left (`pp` of `pp1024`, `tp` of `TP1`), if any.
    Number { written: Written, glued: Option<String> },
    /// A run of letters (hyphenated words as one: `random-input-len`), lowercased.
    Word(String),
    /// Any other character but a space (`,`, `(`, `%`, ...).
    Other(char),
}

/// Numbers, words and other characters; spaces only separate. A number word (`één`, `vier`, `acht`, `two`) is a
/// number before a streams word or at the end of a clause ("bij acht)"), else a word ("een daling").
fn tokenize(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || ((chars[i] == ',' || chars[i] == '.') && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit())))
            {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            // Japanese writes numbers against its words; only Latin letters make a name of a number (`TP1`).
            let glued = match out.last() {
                Some(Token::Word(w)) if start > 0 && chars[start - 1].is_ascii_alphabetic() => Some(w.clone()),
                _ => None,
            };
            out.push(Token::Number { written: Written { values: readings(&text), text }, glued });
        } else if c.is_alphabetic() {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphabetic()
                    || ((chars[i] == '-' || chars[i] == '_') && chars.get(i + 1).is_some_and(|c| c.is_alphabetic())))
            {
                i += 1;
            }
            let w: String = chars[start..i].iter().collect::<String>().to_lowercase();
            // A Japanese run reads on into the next word ("ストリームで毎秒"); after a digit it is no number word.
            let after_digit = start > 0 && chars[start - 1].is_ascii_digit();
            match number_word(&w) {
                Some(n) if !after_digit && word_number_counts(&chars[i..]) => {
                    out.push(Token::Number { written: Written { text: w, values: vec![n] }, glued: None })
                }
                _ => out.push(Token::Word(w)),
            }
        } else {
            if !c.is_whitespace() {
                out.push(Token::Other(c));
            }
            i += 1;
        }
    }
    out
}

/// Every value a written number may stand for, thousands-separated reading first: `1,525` and `1.525` as
/// 1525 or 1.525, as `quote_mentions` reads them.
fn readings(token: &str) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for r in [token.replace(',', ""), token.replace('.', "").replace(',', "."), token.replace(',', ".")] {
        if let Ok(x) = r.parse::<f64>() {
            if !out.contains(&x) {
                out.push(x);
            }
        }
    }
    out
}

/// Number words of the translations, as counts of streams.
fn number_word(w: &str) -> Option<f64> {
    let n = match w {
        "één" | "eén" | "een" | "one" | "einem" | "einer" | "eins" => 1,
        "twee" | "two" | "zwei" => 2,
        "drie" | "three" | "drei" => 3,
        "vier" | "four" => 4,
        "acht" | "eight" => 8,
        "zestien" | "sixteen" | "sechzehn" => 16,
        _ => return None,
    };
    Some(f64::from(n))
}

/// Whether a number word followed by `rest` counts: before a streams word, or at the end of a clause.
fn word_number_counts(rest: &[char]) -> bool {
    let rest: String = rest.iter().collect();
    let rest = rest.trim_start();
    let next: String = rest.chars().take_while(|c| c.is_alphabetic()).collect::<String>().to_lowercase();
    if next.is_empty() {
        rest.is_empty() || rest.starts_with([',', ';', ':', '.', ')', '('])
    } else {
        is_streams(&next)
    }
}

/// What a sweep's quotes leave unchecked, for the note that says so.
#[derive(Debug, Default)]
struct Unstated {
    points: usize,
    of_points: usize,
    isl: usize,
    osl: usize,
    of_series: usize,
}

impl Checker<'_> {
    /// Every setup value a quote states must be the one recorded: a point's concurrency (from its own quote, or
    /// for a run that sent all prompts at once the prompts its conditions state), a range's and a total's
    /// concurrency, and a series' input and output lengths (from its points' and the conditions' quotes). A
    /// concurrency that is no whole count of clients, or a table row's, has its own error already. What no quote
    /// states is counted and noted once per file.
    pub(super) fn stated_setup(&mut self, file: &str, sweep: &SweepFile) {
        let mut conditions = Stated::default();
        let all_at_once = sweep.conditions.as_ref().is_some_and(|c| c.load == ScenarioLoad::AllAtOnce.name());
        for f in sweep.conditions.iter().flat_map(|c| &c.from) {
            conditions.extend(stated(&f.quote));
        }
        let mut unstated = Unstated::default();
        for (si, s) in sweep.series.iter().enumerate() {
            let sp = format!("/series/{si}");
            let mut lengths = Stated { concurrency: Vec::new(), prompts: Vec::new(), ..conditions.clone() };
            for (pi, p) in s.points.iter().enumerate() {
                if let Some(n) = p.num_prompts {
                    let quotes = std::iter::once(&p.from.quote)
                        .chain(sweep.conditions.iter().flat_map(|c| c.from.iter().map(|f| &f.quote)));
                    if !quotes.into_iter().any(|q| super::quotes::quote_mentions(q, f64::from(n))) {
                        self.err(
                            file,
                            format!("{sp}/points/{pi}/num_prompts"),
                            format!("neither the point's quote nor the conditions' contain the num_prompts {n}"),
                            "quote the row or the sentence that states how many prompts the run sent",
                        );
                    }
                }
                let said = stated(&p.from.quote);
                let concurrency = if said.concurrency.is_empty() && all_at_once {
                    conditions.prompts.clone()
                } else {
                    said.concurrency.clone()
                };
                unstated.of_points += 1;
                if concurrency.is_empty() {
                    unstated.points += 1;
                } else if !holds(&concurrency, p.concurrency)
                    && !is_table_row(&p.from.quote)
                    && concurrency_ok(p.concurrency)
                {
                    self.setup_err(
                        file,
                        format!("{sp}/points/{pi}/concurrency"),
                        "concurrency",
                        &concurrency,
                        p.concurrency,
                        false,
                    );
                }
                lengths.extend(said);
            }
            for (ri, r) in s.ranges.iter().enumerate() {
                let said = stated(&r.from.quote).concurrency;
                for (key, c) in [("concurrency_min", r.concurrency_min), ("concurrency_max", r.concurrency_max)] {
                    if !said.is_empty() && !holds(&said, c) {
                        self.setup_err(file, format!("{sp}/ranges/{ri}/{key}"), "concurrency", &said, c, false);
                    }
                }
            }
            unstated.of_series += 1;
            for (key, said, x, count) in [
                ("isl", &lengths.input_tokens, s.isl, &mut unstated.isl),
                ("osl", &lengths.output_tokens, s.osl, &mut unstated.osl),
            ] {
                let what = if key == "isl" { "input length" } else { "output length" };
                if said.is_empty() {
                    *count += 1;
                } else if !holds(said, f64::from(x)) {
                    self.setup_err(file, format!("{sp}/{key}"), what, said, f64::from(x), true);
                }
            }
        }
        for (ti, t) in sweep.totals.iter().enumerate() {
            let said = stated(&t.from.quote).concurrency;
            if !said.is_empty() && !holds(&said, t.concurrency) {
                self.setup_err(file, format!("/totals/{ti}/concurrency"), "concurrency", &said, t.concurrency, false);
            }
        }
        self.note_unstated(file, &unstated);
    }

    /// `said` is what the point's own quote states (`quotes` false) or what the series' and the conditions'
    /// quotes state together (`quotes` true).
    fn setup_err(&mut self, file: &str, pointer: String, what: &str, said: &[Written], x: f64, quotes: bool) {
        let mut values: Vec<&str> = said.iter().map(|w| w.text.as_str()).collect();
        values.sort_unstable();
        values.dedup();
        let who = if quotes { "the quotes state" } else { "the quote states" };
        self.err(
            file,
            pointer,
            format!("{who} {what} {}, not {x}", values.join(" or ")),
            &format!("correct the {what} to what the source states, or quote the clause that states {x}"),
        );
    }

    fn note_unstated(&mut self, file: &str, u: &Unstated) {
        let mut parts = Vec::new();
        if u.points > 0 {
            parts.push(format!("the concurrency of {} of {} points", u.points, u.of_points));
        }
        match (u.isl, u.osl) {
            (0, 0) => {}
            (i, o) if i == o => parts.push(format!("the input and output lengths of {i} of {} series", u.of_series)),
            (i, o) => {
                if i > 0 {
                    parts.push(format!("the input length of {i} of {} series", u.of_series));
                }
                if o > 0 {
                    parts.push(format!("the output length of {o} of {} series", u.of_series));
                }
            }
        }
        if parts.is_empty() {
            return;
        }
        let last = parts.pop().unwrap_or_default();
        let listed = if parts.is_empty() { last } else { format!("{} and {last}", parts.join(", ")) };
        self.out.push(
            Diagnostic::note(file, "", format!("no quote states {listed}; those are not checked against the source"))
                .with_hint("quote the clause or the conditions that state them where the source does"),
        );
    }
}

/// A row of a sweep table whose first column `table_row` holds to the point's concurrency, with its own message.
fn is_table_row(quote: &str) -> bool {
    quote.trim().strip_prefix('|').and_then(|r| r.split('|').next()).is_some_and(|c| c.trim().parse::<f64>().is_ok())
}

/// Whether `x` is one of the stated numbers.
fn holds(said: &[Written], x: f64) -> bool {
    said.iter().any(|w| w.is(x))
}

#[cfg(test)]
mod tests {
    use super::{stated, Stated};

    fn check(quote: &str, concurrency: &[f64], input: &[f64], output: &[f64]) {
        let s = stated(quote);
        // The first reading of each number stated, each value once.
        let ints = |v: &[super::Written]| {
            let mut v: Vec<f64> = v.iter().map(|w| w.values[0]).collect();
            v.dedup();
            v
        };
        assert_eq!(
            (ints(&s.concurrency), ints(&s.input_tokens), ints(&s.output_tokens)),
            (concurrency.to_vec(), input.to_vec(), output.to_vec()),
            "{quote}: {s:?}"
        );
    }

    #[test]
    fn reads_the_concurrency_in_each_translation() {
        check("1,801 bij 256", &[256.0], &[], &[]);
        check("naar 1,301 bij 16", &[16.0], &[], &[]);
        check("441 tokens per seconde bij één stream", &[1.0], &[], &[]);
        check("Eén station ging van 44 uitvoertokens per seconde bij één stream", &[1.0], &[], &[]);
        check("489 bij acht) die we als verzameld rapporteren", &[8.0], &[], &[]);
        check("858 bij vier streams", &[4.0], &[], &[]);
        check("bleef stabiel op 1,219 bij 32 streams", &[32.0], &[], &[]);
        check("een uitvoersnelheid van 1,766 tokens per seconde bij 32 streams voor V4 Flash", &[32.0], &[], &[]);
        check("de enkele ET900N G3 35 uitvoertokens per seconde op één stream", &[1.0], &[], &[]);
        check("tussen 573 en 611 bij 32 tot en met 256 streams", &[32.0, 256.0], &[], &[]);
        check("via 16 streams (1,208 tegen 940)", &[16.0], &[], &[]);
        check("1.525 Token pro Sekunde bei 32 gleichzeitigen Anfragen", &[32.0], &[], &[]);
        check("32ストリームで毎秒139個の出力", &[32.0], &[], &[]);
        check("1つのステーションで8つのストリームで停止します", &[8.0], &[], &[]);
        check("| 8 | 153.5 | 231.0 | 177.5 |", &[8.0], &[], &[]);
    }

    #[test]
    fn a_quote_without_its_setup_states_nothing() {
        check("dezelfde waarden van 365, 522 en 736 gemeten", &[], &[], &[]);
        check("de cluster van 141 naar 677 over hetzelfde bereik", &[], &[], &[]);
        check("| TP1 | 2942.57 | 6325.41 | 52.66 | 23629.95 |", &[], &[], &[]);
        check("een daling naar 1,912 bij 128", &[128.0], &[], &[]);
        check("スイープのピーク時には合計スループットが毎秒16,163トークンに達しました", &[], &[], &[]);
    }

    #[test]
    fn reads_lengths_and_prompts_from_the_conditions() {
        check(
            "llama-benchy 0.3.5, prompt 1024 tokens, 128 generated (pp1024 tg128), 50 runs",
            &[],
            &[1024.0],
            &[128.0],
        );
        check("NIM 1.8.0, fp8, TP2, 5,000 input and 500 output tokens, genai-perf", &[], &[5000.0], &[500.0]);
        check("--random-input-len 4000 --random-output-len 500", &[], &[4000.0], &[500.0]);
        check("139 output tokens per second at 32 streams", &[32.0], &[], &[]);
        let s = stated("ShareGPT, 1,000 prompts sent at an unlimited rate (saturation).");
        assert!(s.prompts.iter().any(|w| w.is(1000.0)), "{s:?}");
        assert_eq!(Stated { prompts: Vec::new(), ..s }, Stated::default());
    }
}
