//! Sweep files: series and points (concurrency, throughput, latencies, run data), ranges, unplaced values, totals.

use super::concurrency_ok;
use super::Checker;
use crate::dataset::schema::{per_token_acceptance, Flag, PointRecord, RequestRate};
use std::collections::BTreeSet;

impl Checker<'_> {
    pub(super) fn sweeps(&mut self) {
        for (file, sweep) in &self.ds.sweeps {
            if !self.ds.models.contains_key(&sweep.model) {
                self.err(
                    file,
                    "/model".into(),
                    format!("unknown model `{}`", sweep.model),
                    "add data/models/<id>.json or fix the id",
                );
            }
            self.sweep_identity(file, sweep);
            self.stated_setup(file, sweep);
            let mut series_keys = BTreeSet::new();
            for (si, s) in sweep.series.iter().enumerate() {
                let sp = format!("/series/{si}");
                if !series_keys.insert((s.mode, s.isl, s.osl)) {
                    self.err(
                        file,
                        sp.clone(),
                        format!("duplicate series {} {}/{}", s.mode.name(), s.isl, s.osl),
                        "merge the points into one series",
                    );
                }
                if s.isl == 0 || s.osl == 0 {
                    self.err(
                        file,
                        format!("{sp}/isl"),
                        "sequence lengths must be positive".into(),
                        "isl and osl are token counts",
                    );
                }
                if !self.ds.hardware.contains_key(&s.hardware) {
                    self.err(
                        file,
                        format!("{sp}/hardware"),
                        format!("unknown hardware `{}`", s.hardware),
                        "add data/hardware/<id>.json or fix the id",
                    );
                }
                let mut seen = BTreeSet::new();
                for (pi, p) in s.points.iter().enumerate() {
                    let pp = format!("{sp}/points/{pi}");
                    if concurrency_ok(p.concurrency) {
                        if !seen.insert(p.concurrency as u32) {
                            self.err(
                                file,
                                format!("{pp}/concurrency"),
                                format!("duplicate point at concurrency {}", p.concurrency),
                                "each concurrency appears once per series",
                            );
                        }
                    } else {
                        self.err(
                            file,
                            format!("{pp}/concurrency"),
                            format!("concurrency must be a whole number from 1 to 4096, found {}", p.concurrency),
                            "concurrency counts closed-loop clients",
                        );
                    }
                    if self.positive(file, format!("{pp}/output_tok_s"), p.output_tok_s, "output_tok_s") {
                        self.from(file, &pp, &p.from, Some(p.output_tok_s));
                    }
                    self.table_row(file, &pp, &p.from.quote, p.concurrency);
                    for (key, x) in p.latency().values() {
                        if self.positive(file, format!("{pp}/{key}"), x, key) {
                            self.mentions(file, &format!("{pp}/{key}"), &p.from.quote, x, key);
                        }
                    }
                    self.point_run(file, &pp, p);
                }
                for (ri, r) in s.ranges.iter().enumerate() {
                    let rp = format!("{sp}/ranges/{ri}");
                    let ok = concurrency_ok(r.concurrency_min)
                        && concurrency_ok(r.concurrency_max)
                        && r.concurrency_min <= r.concurrency_max;
                    if !ok {
                        self.err(
                            file,
                            rp.clone(),
                            "range concurrencies must be whole numbers with min <= max".into(),
                            "check concurrency_min and concurrency_max",
                        );
                    }
                    if self.positive(file, format!("{rp}/output_tok_s_min"), r.output_tok_s_min, "output_tok_s_min")
                        && self.positive(file, format!("{rp}/output_tok_s_max"), r.output_tok_s_max, "output_tok_s_max")
                    {
                        if r.output_tok_s_min > r.output_tok_s_max {
                            self.err(
                                file,
                                rp.clone(),
                                "output_tok_s_min above output_tok_s_max".into(),
                                "swap the bounds",
                            );
                        }
                        self.from(file, &rp, &r.from, Some(r.output_tok_s_min));
                    }
                }
                for (ui, u) in s.unplaced.iter().enumerate() {
                    let up = format!("{sp}/unplaced/{ui}");
                    if !u.likely_concurrency.is_empty() && u.likely_concurrency.len() != u.output_tok_s.len() {
                        self.err(
                            file,
                            format!("{up}/likely_concurrency"),
                            "likely_concurrency must give one concurrency per value".into(),
                            "or leave it empty",
                        );
                    }
                    for (vi, x) in u.output_tok_s.iter().enumerate() {
                        self.positive(file, format!("{up}/output_tok_s/{vi}"), *x, "output_tok_s");
                    }
                    self.from(file, &up, &u.from, u.output_tok_s.first().copied());
                    // Values stated next to each one (a saturation run's totals and latencies): one per value,
                    // each in the quote, like the value itself.
                    for (name, xs) in
                        [("total_tok_s", &u.total_tok_s), ("ttft_ms", &u.ttft_ms), ("tpot_ms", &u.tpot_ms)]
                    {
                        if xs.is_empty() {
                            continue;
                        }
                        if xs.len() != u.output_tok_s.len() {
                            self.err(
                                file,
                                format!("{up}/{name}"),
                                format!("{name} must give one value per output_tok_s value"),
                                "or leave it out",
                            );
                            continue;
                        }
                        for (vi, x) in xs.iter().enumerate() {
                            let at = format!("{up}/{name}/{vi}");
                            if self.positive(file, at.clone(), *x, name) {
                                self.mentions(file, &at, &u.from.quote, *x, name);
                            }
                        }
                    }
                    for (vi, (total, out)) in u.total_tok_s.iter().zip(&u.output_tok_s).enumerate() {
                        if total < out {
                            self.err(
                                file,
                                format!("{up}/total_tok_s/{vi}"),
                                format!("total {total} tokens/s is below the output {out}"),
                                "a total counts input and output tokens",
                            );
                        }
                    }
                }
            }
            for (ti, t) in sweep.totals.iter().enumerate() {
                let tp = format!("/totals/{ti}");
                if !self.positive(file, format!("{tp}/total_tok_s"), t.total_tok_s, "total_tok_s") {
                    continue;
                }
                self.from(file, &tp, &t.from, Some(t.total_tok_s));
                let point = sweep
                    .series
                    .iter()
                    .filter(|s| s.mode == t.mode && s.isl == t.isl && s.osl == t.osl)
                    .flat_map(|s| s.points.iter())
                    .find(|p| p.concurrency == t.concurrency);
                match point {
                    None => self.err(
                        file,
                        tp.clone(),
                        format!(
                            "no {} {}/{} point at concurrency {} to check the total against",
                            t.mode.name(),
                            t.isl,
                            t.osl,
                            t.concurrency
                        ),
                        "a total must sit on a published point",
                    ),
                    Some(p) => {
                        let expect = p.output_tok_s * f64::from(t.isl + t.osl) / f64::from(t.osl);
                        // Output throughput is rounded to whole tokens/s; scale that rounding up to the total.
                        let tol = 0.5 * f64::from(t.isl + t.osl) / f64::from(t.osl) + 1.0;
                        if (expect - t.total_tok_s).abs() > tol {
                            self.err(
                                file,
                                format!("{tp}/total_tok_s"),
                                format!(
                                    "total {} does not match output {} x ({}+{})/{} = {expect:.0}",
                                    t.total_tok_s, p.output_tok_s, t.isl, t.osl, t.osl
                                ),
                                "a total counts input and output tokens of the same requests",
                            );
                        }
                    }
                }
            }
        }
    }

    /// What a point says about its run beyond the throughput (an imported benchmark result's request rate,
    /// peak of requests in flight and speculative decoding counters): each number positive and in the quote,
    /// the counters consistent with each other, and the flags the run calls for present.
    fn point_run(&mut self, file: &str, pp: &str, p: &PointRecord) {
        if let Some(rate) = p.request_rate.and_then(RequestRate::per_second) {
            let at = format!("{pp}/request_rate");
            if self.positive(file, at.clone(), rate, "request_rate") {
                self.mentions(file, &at, &p.from.quote, rate, "request_rate");
                if !p.flags.contains(&Flag::RateLimited) {
                    self.err(
                        file,
                        format!("{pp}/flags"),
                        format!("requests were sent at {rate} per second, not by closed-loop clients, but the point is not flagged `rate_limited`"),
                        "add \"rate_limited\" to the point's flags: the model describes a closed loop and must not fit it",
                    );
                }
            }
        }
        if let Some(x) = p.prefill_tok_s {
            let at = format!("{pp}/prefill_tok_s");
            if self.positive(file, at.clone(), x, "prefill_tok_s") {
                self.mentions(file, &at, &p.from.quote, x, "prefill_tok_s");
            }
        }
        if let Some(rate) = p.achieved_request_rate {
            let at = format!("{pp}/achieved_request_rate");
            if self.positive(file, at.clone(), rate, "achieved_request_rate") {
                self.mentions(file, &at, &p.from.quote, rate, "achieved_request_rate");
            }
        }
        if let Some(m) = p.max_concurrent_requests {
            let at = format!("{pp}/max_concurrent_requests");
            self.mentions(file, &at, &p.from.quote, f64::from(m), "max_concurrent_requests");
            {
                if f64::from(m) < p.concurrency && !p.flags.contains(&Flag::ConcurrencyCapped) {
                    self.err(
                        file,
                        format!("{pp}/flags"),
                        format!("at most {m} requests were in flight at once, below the point's concurrency {}, but the point is not flagged `concurrency_capped`", p.concurrency),
                        "add \"concurrency_capped\" to the point's flags: the engine never saw this concurrency",
                    );
                }
            }
        }
        let Some(sd) = &p.spec_decode else { return };
        let sp = format!("{pp}/spec_decode");
        let scalars = [
            ("acceptance_rate", sd.acceptance_rate),
            ("acceptance_length", sd.acceptance_length),
            ("num_drafts", sd.num_drafts.map(|x| x as f64)),
            ("draft_tokens", sd.draft_tokens.map(|x| x as f64)),
            ("accepted_tokens", sd.accepted_tokens.map(|x| x as f64)),
        ];
        for (key, x) in scalars.iter().filter_map(|(k, x)| x.map(|x| (*k, x))) {
            let at = format!("{sp}/{key}");
            if !(x.is_finite() && x >= 0.0) {
                self.err(
                    file,
                    at,
                    format!("{key} must be a finite number, at least 0, found {x}"),
                    "copy it from the result",
                );
                continue;
            }
            self.mentions(file, &at, &p.from.quote, x, key);
        }
        if sd.acceptance_rate.is_some_and(|r| r > 100.0) {
            self.err(
                file,
                format!("{sp}/acceptance_rate"),
                "acceptance_rate is a percentage, at most 100".into(),
                "vLLM writes accepted / draft tokens x 100",
            );
        }
        if let (Some(a), Some(t)) = (sd.accepted_tokens, sd.draft_tokens) {
            if a > t {
                self.err(
                    file,
                    format!("{sp}/accepted_tokens"),
                    format!("{a} accepted tokens of {t} drafted"),
                    "a draft token is accepted at most once",
                );
            }
        }
        if let (Some(l), Some(k)) = (sd.tokens_per_step(), sd.draft_length()) {
            if per_token_acceptance(l, k).is_none() {
                self.err(
                    file,
                    sp.clone(),
                    format!("an acceptance length of {l} tokens per step cannot come from drafts of {k} tokens"),
                    "the length counts the bonus token: it lies between 1 and the draft length + 1",
                );
            }
        }
        if let (Some(stated), Some(a), Some(n)) = (sd.acceptance_length, sd.accepted_tokens, sd.num_drafts) {
            let measured = 1.0 + a as f64 / n.max(1) as f64;
            if n > 0 && (stated - measured).abs() > 1e-6 * stated.abs().max(1.0) {
                self.err(
                    file,
                    format!("{sp}/acceptance_length"),
                    format!("acceptance_length {stated} is not 1 + accepted_tokens / num_drafts = {measured}"),
                    "copy the counters and the length from the same result",
                );
            }
        }
        for (i, r) in sd.per_position_acceptance_rates.iter().enumerate() {
            let at = format!("{sp}/per_position_acceptance_rates/{i}");
            if !(r.is_finite() && (0.0..=1.0).contains(r)) {
                self.err(
                    file,
                    at,
                    format!("a per-position acceptance rate is a share from 0 to 1, found {r}"),
                    "vLLM writes accepted at this position / drafts",
                );
            } else {
                self.mentions(file, &at, &p.from.quote, *r, "per-position acceptance rate");
            }
        }
    }
}
