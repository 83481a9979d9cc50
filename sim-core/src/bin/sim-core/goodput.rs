//! The goodput summary `plan` opens with when a latency target is given: the verdict, then one line per mode
//! (users at the target, throughput, latencies, band, cost), no wider than `WIDTH` columns.

use sim_core::explore::confidence::Band;
use sim_core::explore::target::{seconds, GoodputAnswer, Limit, ModeGoodput, WorkloadGoodput};
use sim_core::explore::verdict::PlanAnswer;
use sim_core::plan::Plan;

/// The summary's width: it opens the output, where a reader looks first, so it fits a terminal.
pub const WIDTH: usize = 100;

/// The summary as text lines, every line at most `WIDTH` columns.
pub fn summary(a: &GoodputAnswer) -> Vec<String> {
    let t = &a.target;
    let mut limits = Vec::new();
    if let Some(s) = t.ttft_s {
        limits.push(format!("{} TTFT <= {}", t.statistic.name(), seconds(Limit::Ttft, s)));
    }
    if let Some(s) = t.tpot_s {
        limits.push(format!("{} TPOT <= {}", t.statistic.name(), seconds(Limit::Tpot, s)));
    }
    let mut out = Vec::new();
    // The verdict first, with the users each mode serves: what a reader came for. How the search ran after.
    for w in &a.workloads {
        push_wrapped(&mut out, &format!("verdict ({}/{} ISL/OSL): {}", w.isl, w.osl, w.verdict.reason), "  ");
        if let Some(c) = &w.verdict.too_close {
            push_wrapped(&mut out, &format!("  {c}"), "  ");
        }
        if let Some(f) = &w.verdict.four_machines {
            push_wrapped(&mut out, &format!("  four machines: {}", f.reason), "  ");
        }
        out.extend(mode_table(w, a.cost_inputs.is_some(), a.bands.coverage));
        if let Some(n) = a.asked_users {
            out.extend(asked_table(w, n, a.cost_inputs.is_some()));
        }
        out.push(String::new());
    }
    push_wrapped(&mut out, &a.users.describe(), "  ");
    push_wrapped(
        &mut out,
        "tok/s/user: 1000 / TPOT ms, the speed one user's answer streams at (the machines' tok/s over the users is \
         each user's share of the output)",
        "  ",
    );
    let top = a.users_grid.last().copied().unwrap_or(0);
    push_wrapped(
        &mut out,
        &format!("target: {}; users tried: 1, 2, 3, 4, 6, 8, 12, ... {top}", limits.join(", ")),
        "  ",
    );
    let b = &a.bands;
    push_wrapped(
        &mut out,
        &format!(
            "bands: where the measured value lies against the predicted one, an interval built to hold {:.0}% \
             of the held-out errors of the closest evidence (pair from one, leave one dataset out: the protocol \
             leaves no single model out), `sim-core report` prints how many fell inside; the cost's band is the \
             tok/s band inverted",
            b.coverage * 100.0
        ),
        "  ",
    );
    let stat = t.statistic;
    for m in a.workloads.first().map_or(&[][..], |w| &w.modes[..]) {
        let (ttft, tpot) = (b.ttft(m.mode, stat), b.tpot(m.mode, stat));
        let cost = m.cost.as_ref().map_or(String::new(), |c| {
            format!(
                "; cost/Mtok {:.2} in {}",
                c.usd_per_million_tokens,
                cost_band(&m.tok_s_band, c.usd_per_million_tokens)
            )
        });
        let text = format!(
            "{}: tok/s {}{cost}; {} TTFT {}; {} TPOT {}",
            m.mode.name(),
            m.tok_s_band.describe(),
            stat.name(),
            ttft.describe(),
            stat.name(),
            tpot.describe()
        );
        push_wrapped(&mut out, &text, "    ");
    }
    push_wrapped(
        &mut out,
        "users range: the users served if the TTFT and TPOT measured were at the high, then the low edge of their \
         bands together (\"-\" where either has no measured evidence)",
        "  ",
    );
    if let Some(c) = &a.cost_inputs {
        push_wrapped(
            &mut out,
            &format!(
                "cost: {} per machine over {} years, {} W at {} per kWh drawn all the time, {:.0}% of the time \
                 serving at the predicted rate (an assumption); cost per million output tokens",
                c.machine_price_usd,
                c.amortization_years,
                c.machine_power_w,
                c.electricity_usd_per_kwh,
                c.utilization * 100.0
            ),
            "  ",
        );
    }
    out.push(String::new());
    out
}

/// One row per mode, aligned; a mode that serves no one shows why in place of its numbers.
fn mode_table(w: &WorkloadGoodput, cost: bool, coverage: f64) -> Vec<String> {
    // The tok/s band's coverage in its header; the band lines below the table give its evidence.
    let band = format!("band {:.0}%", coverage * 100.0);
    let mut headers = vec!["mode", "users", "range", "tok/s", "tok/s/GPU", "tok/s/user", "TTFT s", "TPOT ms", &band];
    if cost {
        headers.extend(["cost/Mtok", "tok/kWh"]);
    }
    let rows: Vec<Vec<String>> = w.modes.iter().map(|m| mode_row(m, cost)).collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in rows.iter().filter(|r| r.len() == headers.len()) {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let s: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| if i == 0 { format!("{c:<w$}", w = widths[0]) } else { format!("{c:>w$}", w = widths[i]) })
            .collect();
        s.join("  ")
    };
    let head: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    let mut out = vec![format!("  {}", line(&head))];
    for r in &rows {
        if r.len() == headers.len() {
            out.push(format!("  {}", line(r)));
        } else {
            // A mode without users: its name, then the reason, cut to the width.
            let text = format!("  {:<w$}  {}", r[0], r[1], w = widths[0]);
            out.push(cut(&text, WIDTH));
        }
    }
    out
}

fn mode_row(m: &ModeGoodput, cost: bool) -> Vec<String> {
    let Some(a) = &m.at_target else {
        let why = m.miss.as_ref().map_or("no load meets the target".to_string(), |x| x.text.clone());
        return vec![m.mode.name().to_string(), format!("0 users: {why}")];
    };
    let users = if a.at_grid_top { format!("{}+", a.users) } else { a.users.to_string() };
    let range = m.users_within_bands.map_or("-".to_string(), |(lo, hi)| format!("{lo}-{hi}"));
    let mut row = vec![
        m.mode.name().to_string(),
        users,
        range,
        format!("{:.0}", a.output_tok_s),
        format!("{:.1}", a.tok_s_per_gpu),
        format!("{:.1}", a.interactivity_tok_s),
        format!("{:.2}", a.ttft_s),
        format!("{:.1}", a.tpot_s * 1e3),
        // The column is narrow: the band lines below the table say why a band is missing.
        if m.tok_s_band.interval.is_some() { short(&m.tok_s_band) } else { "none".to_string() },
    ];
    if cost {
        let c = m.cost.as_ref();
        row.push(c.map_or("-".into(), |c| format!("{:.2}", c.usd_per_million_tokens)));
        row.push(c.and_then(|c| c.tokens_per_kwh).map_or("-".into(), |t| format!("{:.0}", t)));
    }
    row
}

/// Every mode at the asked load: whether it meets the target there, its latencies, and the cost of what those
/// users make it produce.
fn asked_table(w: &WorkloadGoodput, users: u32, cost: bool) -> Vec<String> {
    let mut headers = vec!["mode", "meets", "tok/s", "tok/s/user", "TTFT s", "TPOT ms"];
    if cost {
        headers.push("cost/Mtok");
    }
    let rows: Vec<Vec<String>> = w
        .modes
        .iter()
        .map(|m| match &m.at_asked {
            None => {
                let why = m.miss.as_ref().map_or("does not fit".to_string(), |x| x.text.clone());
                vec![m.mode.name().to_string(), why]
            }
            Some(a) => {
                let mut row = vec![
                    m.mode.name().to_string(),
                    if a.meets { "yes".into() } else { "no".into() },
                    format!("{:.0}", a.output_tok_s),
                    if a.tpot_s > 0.0 { format!("{:.1}", 1.0 / a.tpot_s) } else { "-".into() },
                    format!("{:.2}", a.ttft_s),
                    format!("{:.1}", a.tpot_s * 1e3),
                ];
                if cost {
                    row.push(a.cost.as_ref().map_or("-".into(), |c| format!("{:.2}", c.usd_per_million_tokens)));
                }
                row
            }
        })
        .collect();
    let full: Vec<Vec<String>> = rows.iter().filter(|r| r.len() == headers.len()).cloned().collect();
    let mut out = vec![format!("at {users} users (asked):")];
    out.extend(aligned(&headers, &full));
    for r in rows.iter().filter(|r| r.len() != headers.len()) {
        out.push(cut(&format!("  {}  {}", r[0], r[1]), WIDTH));
    }
    out
}

fn short(b: &Band) -> String {
    b.short()
}

/// A cost's interval, the tok/s band inverted: `1.62-3.28`, or `no evidence`.
fn cost_band(b: &Band, cost: f64) -> String {
    b.inverted(cost).map_or_else(|| "no evidence".to_string(), |(lo, hi)| format!("{lo:.2}-{hi:.2}"))
}

/// `text` cut to `width` characters, with an ellipsis where it was cut.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut s: String = text.chars().take(width - 1).collect();
    s.push('…');
    s
}

/// Words of `text` wrapped at `WIDTH`, continuation lines indented by `indent`.
fn push_wrapped(out: &mut Vec<String>, text: &str, indent: &str) {
    let mut line = String::new();
    for word in text.split(' ') {
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > WIDTH {
            out.push(std::mem::take(&mut line));
            line.push_str(indent);
        } else if len > 0 && line != indent {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.trim().is_empty() {
        out.push(line);
    }
}

/// Machines side by side: per machine, the mode of its answer, the users one and two machines serve at the
/// target, the gain, the cost per million tokens of that mode (at the asked load when one is asked) and its band;
/// without a target, each plan's answer.
pub fn comparison<'a>(
    answers: impl Iterator<Item = (&'a str, &'a Plan, Option<&'a GoodputAnswer>, &'a PlanAnswer)>,
) -> Vec<String> {
    let mut rows = Vec::new();
    let mut out = vec!["machines compared (first workload):".to_string()];
    let mut coverage = None;
    for (hardware, _plan, goodput, one) in answers {
        coverage = coverage.or(goodput.map(|g| g.bands.coverage));
        let Some(w) = goodput.and_then(|g| g.workloads.first()) else {
            push_wrapped(&mut out, &format!("  {hardware}: recommended {}", one.headline), "    ");
            continue;
        };
        let v = &w.verdict;
        let best = v.best_pair.and_then(|m| w.get(m));
        let single = w.get(sim_core::Mode::Single);
        let run = one.mode.and_then(|m| w.get(m));
        let cost = run.and_then(|m| m.at_asked.as_ref().and_then(|a| a.cost.as_ref()).or(m.cost.as_ref()));
        rows.push(vec![
            hardware.to_string(),
            one.mode.map_or("-".into(), |m| m.name().to_string()),
            single.map_or("0".into(), ModeGoodput::users_text),
            best.map_or("0".into(), ModeGoodput::users_text),
            v.users_gain.map_or("-".into(), |g| format!("{g:.1}x")),
            cost.map_or("-".into(), |c| format!("{:.2}", c.usd_per_million_tokens)),
            run.and_then(|m| cost.map(|c| cost_band(&m.tok_s_band, c.usd_per_million_tokens)))
                .unwrap_or_else(|| "-".into()),
            run.map_or("-".into(), |m| m.tok_s_band.short()),
        ]);
    }
    if !rows.is_empty() {
        let (cost_band, band) = match coverage {
            Some(c) => (format!("cost band {:.0}%", c * 100.0), format!("tok/s band {:.0}%", c * 100.0)),
            None => ("cost band".to_string(), "tok/s band".to_string()),
        };
        let headers = ["hardware", "mode", "users, one", "users, pair", "gain", "cost/Mtok", &cost_band, &band];
        out.extend(aligned(&headers, &rows));
    }
    out.push(String::new());
    out
}

/// Rows under headers, the first column left-aligned and the others right-aligned, indented by two.
fn aligned(headers: &[&str], rows: &[Vec<String>]) -> Vec<String> {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let s: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| if i == 0 { format!("{c:<w$}", w = widths[0]) } else { format!("{c:>w$}", w = widths[i]) })
            .collect();
        cut(&format!("  {}", s.join("  ")), WIDTH)
    };
    let mut out = vec![line(headers.iter().map(|h| h.to_string()).collect())];
    out.extend(rows.iter().map(|r| line(r.clone())));
    out
}
