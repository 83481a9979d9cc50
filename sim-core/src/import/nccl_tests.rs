//! nccl-tests output (`all_reduce_perf`, `alltoall_perf`, ...) to a `fabric` file: one NCCL row per input.
//!
//! Text: the table the binaries print (NVIDIA/nccl-tests `src/common.cu`, `src/util.cu`): `#` comment lines
//! (run parameters, devices, the column header `size count type redop root time algbw busbw #wrong ...`),
//! then one row per message size with the out-of-place and the in-place `time algbw busbw #wrong`, then the
//! footer `# Avg bus bandwidth : ...`. Rows are read from the right, so tables without `redop`/`root`
//! (old versions) or with `-`/`none` there parse too; a trailing timestamp (`-Z`/report_timestamps) is
//! dropped. JSON: the file `-J <file>` writes (nccl-tests 2.16+, `JSON_FILE_VERSION 1`): `{"version": 1,
//! "args": [...], "config": {...}, "results": [{"size", "count", "type", "redop", "root", "out_of_place":
//! {"time", "alg_bw", "bus_bw", "nwrong"}, "in_place": {...}}, ...], "average_bus_bandwidth": {...}}`.

use super::{base_name, check_size, column, finite, fragment, import_source, parse_json, Input, Step};
use crate::dataset::schema::{
    AllReduceTime, Basis, Collective, FabricFile, FabricLink, From, NcclRow, Quantity, SCHEMA_VERSION,
};
use crate::diagnostic::Diagnostic;
use serde_json::Value;

/// 16 GiB, the size the report's "busbw at 16 GiB" column is read at.
pub const SIZE_16GIB: u64 = 16 << 30;

/// What the files do not say: ids, the collective when the output does not name it, and the link.
#[derive(Debug, Clone)]
pub struct NcclOptions {
    pub id: String,
    pub hardware: String,
    /// Overrides the collective read from the binary name.
    pub collective: Option<Collective>,
    pub rails: u32,
    pub line_rate_gbit: f64,
    pub mtu: u32,
    pub transport: String,
    /// Source ids are `<prefix>-<n>`; change it when two imported files live in one dataset.
    pub source_prefix: String,
}

impl Default for NcclOptions {
    fn default() -> Self {
        NcclOptions {
            id: "imported".into(),
            hardware: "gb300-station".into(),
            collective: None,
            rails: 2,
            line_rate_gbit: 400.0,
            mtu: 9000,
            transport: "RoCEv2".into(),
            source_prefix: "import".into(),
        }
    }
}

/// Reads a collective name: `all_reduce`, `all_reduce_perf`, `allreduce`, `all-reduce`, ...
pub fn parse_collective(name: &str) -> Option<Collective> {
    let n = base_name(name.trim()).to_ascii_lowercase().replace('-', "_");
    let n = n.strip_suffix("_perf").unwrap_or(&n);
    let n = n.strip_suffix("_mpi").unwrap_or(n);
    let squash = |s: &str| s.replace('_', "");
    Collective::ALL.into_iter().find(|c| c.name() == n || squash(c.name()) == squash(n))
}

/// The collective a binary name in `text` names (`.../all_reduce_perf`), if any.
fn collective_in(text: &str) -> Option<(Collective, String)> {
    text.split(|c: char| c.is_whitespace() || c == '"' || c == ',' || c == ':')
        .filter(|t| t.ends_with("_perf") || t.ends_with("_perf_mpi"))
        .find_map(|t| parse_collective(t).map(|c| (c, base_name(t).to_string())))
}

/// The collective a file names (with the binary name), and its measured sizes.
type Parsed = (Option<(Collective, String)>, Vec<Measured>);

/// One measured size.
#[derive(Debug, Clone)]
struct Measured {
    size: u64,
    /// Bus bandwidth of the out-of-place run, or of the in-place run when the row has only that.
    busbw: f64,
    in_place_only: bool,
    /// Time of one call (out-of-place, or in-place when the row has only that), microseconds.
    time_us: f64,
    wrong: bool,
    /// The row (text) or result object (JSON) verbatim.
    quote: String,
}

/// Parses nccl-tests outputs (one collective per file) into a fabric file.
pub fn nccl_tests(inputs: &[Input], opts: &NcclOptions) -> Result<FabricFile, Diagnostic> {
    if inputs.is_empty() {
        return Err(Diagnostic::error("", "", "no input files").with_hint("name one nccl-tests output per collective"));
    }
    let mut sources = Vec::new();
    let mut rows: Vec<NcclRow> = Vec::new();
    let mut files_by_collective: Vec<(Collective, String)> = Vec::new();
    for (n, (file, text)) in inputs.iter().enumerate() {
        let (collective, how, measured) = read_file(file, text, opts)?;
        if let Some((_, prev)) = files_by_collective.iter().find(|(c, _)| *c == collective) {
            return Err(Diagnostic::error(
                file,
                "",
                format!("{} is measured twice: in {prev} and in {file}", collective.name()),
            )
            .with_hint(
                "a fabric file holds one row per collective; import the files separately (different --id) or drop one",
            ));
        }
        files_by_collective.push((collective, file.clone()));
        let source =
            import_source(&opts.source_prefix, n + 1, file, &format!("nccl-tests {}_perf output", collective.name()));
        rows.push(summarise(file, collective, &how, &measured, &source.id)?);
        sources.push(source);
    }
    let options_source = crate::dataset::schema::Source {
        id: format!("{}-options", opts.source_prefix),
        file: "sim-core import nccl-tests (command line)".into(),
        language: "en".into(),
        title: "options given to sim-core import".into(),
        role: "import".into(),
        published: None,
        original: None,
    };
    let link = FabricLink {
        rails: opts.rails,
        line_rate_gbit_s_per_rail: opts.line_rate_gbit,
        mtu_bytes: opts.mtu,
        transport: opts.transport.clone(),
        from: From {
            source: options_source.id.clone(),
            quote: format!("--rails {} --line-rate-gbit {} --mtu {} --transport {}", opts.rails, opts.line_rate_gbit, opts.mtu, opts.transport),
        },
        note: Some("given on the command line (sim-core import options or their defaults), not read from the nccl-tests output".into()),
    };
    sources.push(options_source);
    Ok(FabricFile {
        schema_version: SCHEMA_VERSION,
        kind: "fabric".into(),
        sources,
        id: opts.id.clone(),
        hardware: opts.hardware.clone(),
        link,
        nccl: rows,
        rdma: Vec::new(),
        expectations: Vec::new(),
    })
}

/// One `all_reduce_perf` output as a hardware file's `link.all_reduce_times`: every measured size with the time
/// of one call, each quoting its row (basis `reported_elsewhere`: the file is the user's measurement, not a seed
/// text the dataset checks). Refuses another collective, and sizes that do not increase (two runs pasted together).
pub fn all_reduce_times(input: &Input, opts: &NcclOptions) -> Result<Vec<AllReduceTime>, Diagnostic> {
    let (file, text) = input;
    let (collective, _, measured) = read_file(file, text, opts)?;
    if collective != Collective::AllReduce {
        return Err(Diagnostic::error(file, "", format!("this output measures {}, not all_reduce", collective.name()))
            .with_hint(
                "a link's measured times come from all_reduce_perf (what tensor parallelism calls every layer)",
            ));
    }
    let mut previous = 0;
    let mut out = Vec::with_capacity(measured.len());
    for m in &measured {
        if m.size <= previous {
            return Err(Diagnostic::error(
                file,
                "",
                format!("size {} follows {previous}: the sizes do not increase (two runs in one file?)", m.size),
            )
            .with_hint("import one run: one table from the smallest size to the largest"));
        }
        previous = m.size;
        let which = if m.in_place_only { "in-place" } else { "out-of-place" };
        let why = format!("nccl-tests all_reduce_perf output {file}, {which} time of the row `{}`", m.quote);
        out.push(AllReduceTime {
            size_bytes: m.size as f64,
            time: Quantity::new(m.time_us, "us", Basis::ReportedElsewhere, &why),
        });
    }
    Ok(out)
}

/// The NCCL row of one file: the best out-of-place bus bandwidth and the one at the largest size.
fn summarise(
    file: &str,
    collective: Collective,
    how: &str,
    measured: &[Measured],
    source: &str,
) -> Result<NcclRow, Diagnostic> {
    let Some(peak) = measured.iter().fold(None::<&Measured>, |best, m| match best {
        Some(b) if b.busbw >= m.busbw => Some(b),
        _ => Some(m),
    }) else {
        return Err(Diagnostic::error(file, "", "no data rows").with_hint("the run printed no results"));
    };
    let Some(largest) = measured.iter().fold(None::<&Measured>, |best, m| match best {
        Some(b) if b.size >= m.size => Some(b),
        _ => Some(m),
    }) else {
        return Err(Diagnostic::error(file, "", "no data rows").with_hint("the run printed no results"));
    };
    let mut note = format!(
        "{how}; {} sizes; peak = the best {} bus bandwidth (nccl-tests prints out-of-place first, then in-place)",
        measured.len(),
        if peak.in_place_only { "in-place (the rows have no out-of-place columns)" } else { "out-of-place" }
    );
    let busbw_16gib = if largest.size == SIZE_16GIB {
        note.push_str(&format!("; busbw_16gib_gb_s from the row `{}`", largest.quote));
        Some(largest.busbw)
    } else {
        note.push_str(&format!(
            "; the largest size is {} bytes, not 16 GiB, so busbw_16gib_gb_s is empty",
            largest.size
        ));
        None
    };
    let wrong = measured.iter().filter(|m| m.wrong).count();
    if wrong > 0 {
        note.push_str(&format!("; WARNING: {wrong} sizes report wrong elements (#wrong > 0)"));
    }
    Ok(NcclRow {
        collective,
        peak_size_bytes: peak.size as f64,
        peak_busbw_gb_s: peak.busbw,
        busbw_16gib_gb_s: busbw_16gib,
        total_16gib_gb_s: None,
        from: From { source: source.into(), quote: peak.quote.clone() },
        note: Some(note),
    })
}

/// Collective, how it was determined, and the measured sizes of one file.
fn read_file(file: &str, text: &str, opts: &NcclOptions) -> Result<(Collective, String, Vec<Measured>), Diagnostic> {
    check_size(file, text)?;
    if text.trim().is_empty() {
        return Err(Diagnostic::error(file, "", "file is empty")
            .with_hint("pass the output nccl-tests printed (or its -J JSON file)"));
    }
    let json = text.trim_start().starts_with('{');
    let (found, measured) = if json { read_json(file, text)? } else { read_text(file, text)? };
    let (collective, how) = match (opts.collective, found) {
        (Some(c), _) => (c, format!("collective {} given on the command line", c.name())),
        (None, Some((c, binary))) => (c, format!("collective from the binary name {binary}")),
        (None, None) => match parse_collective(base_name(file).split('.').next().unwrap_or("")) {
            Some(c) => (c, format!("collective {} from the file name", c.name())),
            None => {
                return Err(Diagnostic::error(file, "", "cannot tell which collective this output measures")
                    .with_hint("the output names no *_perf binary; pass --collective all_reduce (or all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv, sendrecv_bidirectional)"))
            }
        },
    };
    Ok((collective, how, measured))
}

fn read_text(file: &str, text: &str) -> Result<Parsed, Diagnostic> {
    let mut found = None;
    let mut header_line = None;
    let mut measured = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if found.is_none() {
            found = collective_in(t);
        }
        if let Some(rest) = t.strip_prefix('#') {
            let words: Vec<&str> = rest.split_whitespace().collect();
            if words.contains(&"size") && words.contains(&"busbw") {
                header_line = Some(lineno);
            }
            continue;
        }
        // Data rows start with the size in bytes; other lines (NCCL INFO logs, the command) are skipped.
        let tokens = tokenize(line);
        let Some(&(_, first)) = tokens.first() else { continue };
        if header_line.is_none() || first.parse::<u64>().is_err() {
            continue;
        }
        measured.push(parse_row(file, lineno, line, &tokens)?);
    }
    if header_line.is_none() {
        return Err(Diagnostic::error(file, "", "unknown format: no nccl-tests column header found")
            .with_hint("expected the table nccl-tests prints, with a header line `#  size  count  type  redop  root  time  algbw  busbw  #wrong ...`, or its -J JSON file"));
    }
    if measured.is_empty() {
        let l = header_line.unwrap_or(1);
        return Err(Diagnostic::error(
            file,
            "",
            "the nccl-tests table has no data rows (the output looks truncated or the run failed)",
        )
        .at(l, 1)
        .with_hint("copy the output up to the `# Avg bus bandwidth` line; check the run for errors before the table"));
    }
    Ok((found, measured))
}

/// Whitespace-separated tokens with their byte offsets.
fn tokenize(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, &line[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out
}

fn is_value(t: &str) -> bool {
    t == "N/A" || t.parse::<f64>().is_ok()
}

fn parse_row(file: &str, lineno: usize, line: &str, tokens: &[(usize, &str)]) -> Result<Measured, Diagnostic> {
    let at = |byte: usize| column(line, byte);
    let row_err = |byte: usize, msg: String| {
        Diagnostic::error(file, "", msg).at(lineno, at(byte)).with_hint(
            "a row is: size count type redop root, then time algbw busbw #wrong out-of-place and again in-place; the row looks cut short",
        )
    };
    let (size_at, size_tok) = tokens.first().copied().unwrap_or((0, ""));
    let size = size_tok
        .parse::<u64>()
        .map_err(|_| row_err(size_at, format!("expected the size in bytes, found `{size_tok}`")))?;
    let mut toks: Vec<(usize, &str)> = tokens.get(1..).unwrap_or(&[]).to_vec();
    // report_timestamps appends `YYYY-MM-DD HH:MM:SS`.
    if toks.len() >= 2 {
        let n = toks.len();
        let date = toks[n - 2].1;
        let time = toks[n - 1].1;
        if date.len() == 10 && date.matches('-').count() == 2 && time.matches(':').count() == 2 {
            toks.truncate(n - 2);
        }
    }
    match toks.first() {
        Some((b, t)) if t.parse::<u64>().is_err() => {
            return Err(row_err(*b, format!("expected the element count after the size, found `{t}`")))
        }
        None => {
            return Err(row_err(size_at, "row has only the size; expected count, type and the timing columns".into()))
        }
        _ => {}
    }
    let rest = toks.get(1..).unwrap_or(&[]);
    let run = rest.iter().rev().take_while(|(_, t)| is_value(t)).count();
    let n = rest.len();
    if run < 8 {
        let last = toks.last().map_or(size_at, |(b, _)| *b);
        return Err(row_err(last, format!("row has too few columns: it ends in {run} numeric columns, expected 8 (time algbw busbw #wrong, out-of-place and in-place)")));
    }
    let oop = rest.get(n - 8..n - 4).unwrap_or(&[]);
    let ip = rest.get(n - 4..).unwrap_or(&[]);
    let num = |g: &[(usize, &str)], k: usize| -> Result<(usize, String, f64), Diagnostic> {
        let (b, t) = g.get(k).copied().unwrap_or((0, ""));
        match t.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Ok((b, t.to_string(), x)),
            _ => Err(Diagnostic::error(file, "", format!("`{t}` is not a finite, non-negative number"))
                .at(lineno, at(b))
                .with_hint("the run measured nothing usable at this size; rerun it or drop the row")),
        }
    };
    let (_, _, time) = num(oop, 0)?;
    let (alg_at, alg_tok, algbw) = num(oop, 1)?;
    let (_, _, busbw) = num(oop, 2)?;
    // algbw = size / time: a row whose columns do not line up is cut short or mangled.
    let expect = size as f64 / (time * 1e3);
    if time <= 0.0 || (algbw - expect).abs() > 0.02 + 0.03 * expect {
        return Err(row_err(
            alg_at,
            format!("columns do not line up: algbw `{alg_tok}` should be size / time = {expect:.2} GB/s"),
        ));
    }
    let wrong = [oop, ip].into_iter().any(|g| g.get(3).is_some_and(|(_, w)| w.parse::<f64>().is_ok_and(|x| x != 0.0)));
    Ok(Measured { size, busbw, in_place_only: false, time_us: time, wrong, quote: line.trim().to_string() })
}

fn read_json(file: &str, text: &str) -> Result<Parsed, Diagnostic> {
    let value = parse_json(file, text, (1, 1))?;
    let index = crate::position::PositionIndex::build(text);
    let located = |d: Diagnostic| match index.locate(&d.pointer) {
        Some((l, c)) => d.at(l, c),
        None => d,
    };
    let Some(results) = value.get("results") else {
        let hint = if value.get("output_throughput").is_some() {
            "this looks like a vLLM benchmark result; use `sim-core import vllm-bench`"
        } else {
            "expected the JSON nccl-tests writes with -J: an object with \"version\", \"config\" and \"results\""
        };
        return Err(located(
            Diagnostic::error(file, "", "unknown format: not an nccl-tests JSON file (no \"results\")").with_hint(hint),
        ));
    };
    let Some(results) = results.as_array() else {
        return Err(located(
            Diagnostic::error(file, "/results", "\"results\" is not a list")
                .with_hint("expected one object per message size"),
        ));
    };
    if results.is_empty() {
        return Err(located(
            Diagnostic::error(
                file,
                "/results",
                "the nccl-tests JSON has no results (the run stopped before the first size)",
            )
            .with_hint("rerun nccl-tests and let it finish"),
        ));
    }
    let found = value
        .get("args")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        .and_then(|a| parse_collective(a).map(|c| (c, base_name(a).to_string())));
    let mut measured = Vec::new();
    for (i, r) in results.iter().enumerate() {
        let p = format!("/results/{i}");
        let size = r.get("size").and_then(Value::as_u64).ok_or_else(|| {
            located(
                Diagnostic::error(file, format!("{p}/size"), "missing or non-integer \"size\"")
                    .with_hint("each result gives its size in bytes"),
            )
        })?;
        let oop = r.get("out_of_place").filter(|v| !v.is_null());
        let ip = r.get("in_place").filter(|v| !v.is_null());
        let (which, part) = match (oop, ip) {
            (Some(o), _) => ("out_of_place", o),
            (None, Some(x)) => ("in_place", x),
            (None, None) => {
                return Err(located(
                    Diagnostic::error(file, p.clone(), "result has neither \"out_of_place\" nor \"in_place\" timings")
                        .with_hint("the file looks cut or edited"),
                ))
            }
        };
        let bw_ptr = format!("{p}/{which}/bus_bw");
        let busbw = finite(part.get("bus_bw")).filter(|x| *x >= 0.0).ok_or_else(|| {
            let found = part.get("bus_bw").map_or("nothing".to_string(), Value::to_string);
            located(
                Diagnostic::error(
                    file,
                    bw_ptr.clone(),
                    format!("\"bus_bw\" must be a finite, non-negative number, found {found}"),
                )
                .with_hint("the run measured nothing usable at this size; rerun it or drop the result"),
            )
        })?;
        let time_us = finite(part.get("time")).filter(|x| *x > 0.0).ok_or_else(|| {
            let found = part.get("time").map_or("nothing".to_string(), Value::to_string);
            located(
                Diagnostic::error(
                    file,
                    format!("{p}/{which}/time"),
                    format!("\"time\" must be a finite, positive number of microseconds, found {found}"),
                )
                .with_hint("the run measured nothing usable at this size; rerun it or drop the result"),
            )
        })?;
        let wrong =
            [oop, ip].into_iter().flatten().any(|g| g.get("nwrong").and_then(Value::as_f64).is_some_and(|x| x != 0.0));
        let quote = fragment(text, &[Step::Key("results"), Step::Index(i)]).unwrap_or_default().to_string();
        measured.push(Measured { size, busbw, in_place_only: oop.is_none(), time_us, wrong, quote });
    }
    Ok((found, measured))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collective_names() {
        assert_eq!(parse_collective("./build/all_reduce_perf"), Some(Collective::AllReduce));
        assert_eq!(parse_collective("alltoall_perf"), Some(Collective::Alltoall));
        assert_eq!(parse_collective("allgather"), Some(Collective::AllGather));
        assert_eq!(parse_collective("gather_perf"), None);
    }

    #[test]
    fn rows_without_redop_and_root() {
        let text = "#  size count type time algbw busbw #wrong time algbw busbw #wrong\n  1024  256  float  10.0  0.10  0.10  0  10.0  0.10  0.10  0\n";
        let (_, m) = read_text("x", text).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].busbw, 0.10);
    }

    #[test]
    fn all_reduce_rows_become_link_times_and_other_collectives_are_refused() {
        let text = "# all_reduce_perf\n#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n  8192  2048  float  sum  -1  35.15  0.23  0.23  0  30.33  0.27  0.27  0\n  65536  16384  float  sum  -1  67.93  0.96  0.96  0  64.71  1.01  1.01  0\n";
        let input = ("ar.txt".to_string(), text.to_string());
        let times = all_reduce_times(&input, &NcclOptions::default()).unwrap();
        assert_eq!(times.len(), 2);
        assert_eq!((times[1].size_bytes, times[1].time.value, times[1].time.unit.as_str()), (65536.0, 67.93, "us"));
        assert!(times[0].time.reference.as_deref().is_some_and(|r| r.contains("35.15")));
        let gather = ("ag.txt".to_string(), text.replace("all_reduce_perf", "all_gather_perf"));
        let e = all_reduce_times(&gather, &NcclOptions::default()).unwrap_err();
        assert!(e.message.contains("not all_reduce"), "{}", e.message);
        let twice = ("x.txt".to_string(), format!("{text}{}", text.lines().skip(2).collect::<Vec<_>>().join("\n")));
        let e = all_reduce_times(&twice, &NcclOptions::default()).unwrap_err();
        assert!(e.message.contains("do not increase"), "{}", e.message);
    }

    #[test]
    fn short_row_is_located() {
        let text = "# size count type redop root time algbw busbw #wrong\n  1024  256  float  sum  -1  10.0\n";
        let d = read_text("x.txt", text).unwrap_err();
        assert_eq!(d.line, Some(2));
        assert!(d.message.contains("too few columns"), "{}", d.message);
    }
}
