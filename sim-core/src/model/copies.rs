//! Copies behind a router: two or four independent engines (or DP+EP's ranks) each serving its share of the
//! clients, under a balanced router (even shares) or a random one (binomial shares, averaged), with the rates and
//! latencies an average client sees.

use super::Prediction;
use crate::dataset::schema::{DpRouter, ScenarioLoad};
use crate::Mode;

/// Probability mass a random router's splits may leave out: the rarest, most lopsided splits of a large `c`.
const RANDOM_SPLIT_TAIL: f64 = 1e-3;

/// `two_copies` with the single-machine answers from `single` (a memo when a sweep already has them).
///
/// A balanced router gives each copy half of the clients. A random one (`DpRouter::Random`) sends each request
/// to a copy with even odds, so the busier copy serves `m >= c/2` clients with binomial probability; the answer
/// is the expectation over those splits. Under a steady closed loop the two copies' rates add. Under batches
/// the window runs to the busier copy's last finish, so the `c` requests' decode tokens take as long as its
/// `m` do: `c * tg(m) / m` (what made kubis.ai's two shuffled Sparks at 2 and 4 clients slower than two
/// halves).
pub(crate) fn two_copies_of(
    router: DpRouter,
    load: ScenarioLoad,
    concurrency: u32,
    mut single: impl FnMut(u32) -> Prediction,
) -> Prediction {
    let c = concurrency.max(1);
    if router == DpRouter::Balanced {
        return split_between(c, c.div_ceil(2), load, &mut single);
    }
    let splits: Vec<(f64, Prediction)> =
        busier_copy_odds(c).into_iter().map(|(m, p)| (p, split_between(c, m, load, &mut single))).collect();
    // The likeliest split names the bottleneck; the rest is the expectation over splits.
    let likeliest = splits.iter().reduce(|a, b| if b.0 > a.0 { b } else { a }).map(|(_, q)| q.clone());
    let expect = |field: fn(&Prediction) -> f64| splits.iter().map(|(p, q)| p * field(q)).sum::<f64>();
    Prediction {
        output_tok_s: expect(|q| q.output_tok_s),
        ttft_s: expect(|q| q.ttft_s),
        tpot_s: expect(|q| q.tpot_s),
        step_s: expect(|q| q.step_s),
        resident_seqs: expect(|q| q.resident_seqs),
        preemptions_per_request: expect(|q| q.preemptions_per_request),
        kv_utilization: expect(|q| q.kv_utilization),
        queue_s: expect(|q| q.queue_s),
        // `busier_copy_odds` always has a split: the most even one.
        ..likeliest.unwrap_or_else(|| split_between(c, c.div_ceil(2), load, &mut single))
    }
}

/// The busier copy's client count `m` (from `ceil(c/2)` to `c`) under a random router, with its probability
/// (`Binomial(c, 1/2)` folded at the middle), most even first; the lopsided tail past `1 - RANDOM_SPLIT_TAIL`
/// of the mass is left out and the rest renormalised.
pub fn busier_copy_odds(c: u32) -> Vec<(u32, f64)> {
    let c = c.max(1);
    let n = f64::from(c);
    // ln C(c, k) - c ln 2, built up from k = 0 so no factorial overflows.
    let mut ln_p = -n * std::f64::consts::LN_2;
    let mut pmf = Vec::with_capacity(c as usize + 1);
    for k in 0..=c {
        pmf.push(ln_p.exp());
        ln_p += (f64::from(c - k)).ln() - (f64::from(k) + 1.0).ln();
    }
    let mut odds: Vec<(u32, f64)> = Vec::new();
    let mut mass = 0.0;
    for m in c.div_ceil(2)..=c {
        let p = if 2 * m == c { pmf[m as usize] } else { pmf[m as usize] + pmf[(c - m) as usize] };
        odds.push((m, p));
        mass += p;
        if mass >= 1.0 - RANDOM_SPLIT_TAIL {
            break;
        }
    }
    let total: f64 = odds.iter().map(|(_, p)| p).sum();
    odds.iter().map(|&(m, p)| (m, p / total)).collect()
}

/// Two copies with `busy` of the `c` clients on one and the rest on the other.
pub(crate) fn split_between(
    c: u32,
    busy: u32,
    load: ScenarioLoad,
    single: &mut impl FnMut(u32) -> Prediction,
) -> Prediction {
    let a = single(busy);
    let small = c - busy;
    // An even split's second copy answers as the first.
    let b = match small {
        0 => None,
        n if n == busy => Some(a.clone()),
        n => Some(single(n)),
    };
    let (n_a, n_b) = (f64::from(busy), f64::from(small));
    // Latencies are what an average client sees: weighted by the clients each copy serves.
    let mean = |x: f64, y: Option<f64>| match y {
        Some(y) => (x * n_a + y * n_b) / (n_a + n_b),
        None => x,
    };
    let output_tok_s = match load {
        // Both copies decode the whole time: their rates add.
        ScenarioLoad::ClosedLoop => a.output_tok_s + b.as_ref().map_or(0.0, |b| b.output_tok_s),
        // One window to the busier copy's last finish (the smaller batch ends first): all `c` requests' tokens
        // over the time the busier copy's `busy` take, from the first first token (a batch) or from the send.
        ScenarioLoad::Batch | ScenarioLoad::AllAtOnce => a.output_tok_s * f64::from(c) / n_a,
    };
    Prediction {
        mode: Mode::Dp2,
        isl: a.isl,
        osl: a.osl,
        concurrency: c,
        output_tok_s,
        ttft_s: mean(a.ttft_s, b.as_ref().map(|b| b.ttft_s)),
        tpot_s: mean(a.tpot_s, b.as_ref().map(|b| b.tpot_s)),
        step_s: mean(a.step_s, b.as_ref().map(|b| b.step_s)),
        resident_seqs: a.resident_seqs + b.as_ref().map_or(0.0, |b| b.resident_seqs),
        max_resident_seqs: 2.0 * a.max_resident_seqs,
        // The busier copy sets the pace.
        bottleneck: a.bottleneck,
        tokens_per_step: a.tokens_per_step,
        preemptions_per_request: mean(a.preemptions_per_request, b.as_ref().map(|b| b.preemptions_per_request)),
        kv_utilization: mean(a.kv_utilization, b.as_ref().map(|b| b.kv_utilization)),
        queue_s: mean(a.queue_s, b.as_ref().map(|b| b.queue_s)),
    }
}

/// `copies` independent one-machine engines behind the scenario's router (more than two: `two_copies_of` keeps
/// its own exact split of the pair), with the single-machine answers from `single`.
///
/// A balanced router gives each copy `floor(c / n)` or `ceil(c / n)` clients. A random one sends each request to
/// a copy with odds `1 / n`, so one copy's clients `m` are `Binomial(c, 1/n)`. Under a steady closed loop the
/// copies' rates add, so by linearity the expected rate is `n E[rate(m)]`, and a client's expected latency is
/// `n E[m latency(m)] / c`, each exact without the joint split. Under batches the window runs to the busiest
/// copy's last finish: the expectation over the busiest copy's count (`busiest_copy_odds`) of
/// `c * tok_s(m_max) / m_max`.
pub(crate) fn copies_of(
    copies: u32,
    router: DpRouter,
    load: ScenarioLoad,
    concurrency: u32,
    mut single: impl FnMut(u32) -> Prediction,
) -> Prediction {
    let c = concurrency.max(1);
    let n = copies.max(1);
    let mode = if n == 4 { Mode::Dp4 } else { Mode::Dp2 };
    // Each copy's client count with its weight: a balanced router's exact counts (a count per copy), a random
    // router's binomial odds times the copies (the expected number of copies at that count).
    let counts: Vec<(u32, f64)> = match router {
        DpRouter::Balanced => {
            let (q, r) = (c / n, c % n);
            [(q + 1, f64::from(r)), (q, f64::from(n - r))].into_iter().filter(|&(m, w)| m > 0 && w > 0.0).collect()
        }
        DpRouter::Random => binomial_odds(c, 1.0 / f64::from(n))
            .into_iter()
            .filter(|&(m, _)| m > 0)
            .map(|(m, p)| (m, p * f64::from(n)))
            .collect(),
    };
    let answers: Vec<(u32, f64, Prediction)> = counts.into_iter().map(|(m, w)| (m, w, single(m))).collect();
    let cf = f64::from(c);
    // What an average client sees: each copy's answer weighted by the clients it serves.
    let per_client =
        |field: fn(&Prediction) -> f64| answers.iter().map(|(m, w, p)| w * f64::from(*m) * field(p)).sum::<f64>() / cf;
    let summed = |field: fn(&Prediction) -> f64| answers.iter().map(|(_, w, p)| w * field(p)).sum::<f64>();
    // The busiest copy sets a batch's window and names the bottleneck.
    let busiest: Vec<(u32, f64)> = match router {
        DpRouter::Balanced => vec![(c.div_ceil(n), 1.0)],
        DpRouter::Random => busiest_copy_odds(c, n),
    };
    let output_tok_s = match load {
        ScenarioLoad::ClosedLoop => summed(|p| p.output_tok_s),
        ScenarioLoad::Batch | ScenarioLoad::AllAtOnce => busiest
            .iter()
            .map(|&(m, p)| {
                let a =
                    answers.iter().find(|(k, _, _)| *k == m).map(|(_, _, q)| q.clone()).unwrap_or_else(|| single(m));
                p * a.output_tok_s * cf / f64::from(m)
            })
            .sum(),
    };
    let pace = single(c.div_ceil(n));
    Prediction {
        mode,
        concurrency: c,
        output_tok_s,
        ttft_s: per_client(|p| p.ttft_s),
        tpot_s: per_client(|p| p.tpot_s),
        step_s: per_client(|p| p.step_s),
        resident_seqs: summed(|p| p.resident_seqs),
        max_resident_seqs: f64::from(n) * pace.max_resident_seqs,
        preemptions_per_request: per_client(|p| p.preemptions_per_request),
        kv_utilization: per_client(|p| p.kv_utilization),
        queue_s: per_client(|p| p.queue_s),
        ..pace
    }
}

/// `Binomial(c, p)`'s probabilities, every count from 0 to `c` (built up in logs so no factorial overflows).
fn binomial_odds(c: u32, p: f64) -> Vec<(u32, f64)> {
    let (n, q) = (f64::from(c), 1.0 - p);
    let mut ln = n * q.ln();
    let mut out = Vec::with_capacity(c as usize + 1);
    for k in 0..=c {
        out.push((k, ln.exp()));
        ln += (n - f64::from(k)).ln() - (f64::from(k) + 1.0).ln() + p.ln() - q.ln();
    }
    out
}

/// The busiest of `copies` copies' client count under a random router (`c` requests, each to a copy with odds
/// `1 / copies`), with its probability, from the most even count up; the tail past `1 - RANDOM_SPLIT_TAIL` is
/// left out and the rest renormalised. `P(max <= t)` is computed exactly, copy by copy: the `j`-th copy of the
/// remaining `n - j` takes `Binomial(left, 1 / (n - j))` of the requests left.
pub fn busiest_copy_odds(c: u32, copies: u32) -> Vec<(u32, f64)> {
    let (c, n) = (c.max(1), copies.max(1));
    let at_most = |t: u32| -> f64 {
        // ways[r]: probability that the copies so far hold c - r requests, none above t.
        let mut ways = vec![0.0; c as usize + 1];
        ways[c as usize] = 1.0;
        for j in 0..n {
            let share = 1.0 / f64::from(n - j);
            let mut next = vec![0.0; c as usize + 1];
            for (left, &w) in ways.iter().enumerate() {
                if w == 0.0 {
                    continue;
                }
                let left = left as u32;
                if j + 1 == n {
                    // The last copy takes what is left.
                    if left <= t {
                        next[0] += w;
                    }
                    continue;
                }
                // Binomial(left, share) up to t, built term by term in logs.
                let (l, q) = (f64::from(left), 1.0 - share);
                let mut ln = l * q.ln();
                for a in 0..=left.min(t) {
                    next[(left - a) as usize] += w * ln.exp();
                    ln += (l - f64::from(a)).ln() - (f64::from(a) + 1.0).ln() + share.ln() - q.ln();
                }
            }
            ways = next;
        }
        ways[0]
    };
    let mut odds = Vec::new();
    let mut below = 0.0;
    for t in c.div_ceil(n)..=c {
        let cdf = at_most(t);
        odds.push((t, (cdf - below).max(0.0)));
        below = cdf;
        if cdf >= 1.0 - RANDOM_SPLIT_TAIL {
            break;
        }
    }
    let total: f64 = odds.iter().map(|(_, p)| p).sum();
    odds.into_iter().filter(|(_, p)| *p > 0.0).map(|(m, p)| (m, p / total)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Bottleneck;

    /// A stand-in single machine whose batch rate per client falls as clients are added.
    fn single(n: u32) -> Prediction {
        let n_f = f64::from(n);
        Prediction {
            mode: Mode::Single,
            isl: 1024,
            osl: 128,
            concurrency: n,
            output_tok_s: 60.0 * n_f / (1.0 + 0.1 * (n_f - 1.0)),
            ttft_s: 0.1 * n_f,
            tpot_s: 0.01,
            step_s: 0.01,
            resident_seqs: n_f,
            max_resident_seqs: 100.0,
            bottleneck: Bottleneck::HbmBandwidth,
            tokens_per_step: 1.0,
            preemptions_per_request: 0.0,
            kv_utilization: 0.1,
            queue_s: 0.0,
        }
    }

    #[test]
    fn a_random_router_splits_clients_binomially() {
        let four = busier_copy_odds(4);
        let expect = [(2, 6.0 / 16.0), (3, 8.0 / 16.0), (4, 2.0 / 16.0)];
        assert_eq!(four.len(), expect.len());
        for ((m, p), (em, ep)) in four.iter().zip(expect) {
            assert_eq!(*m, em);
            assert!((p - ep).abs() < 1e-12, "{four:?}");
        }
        for c in [1, 2, 7, 64, 1000] {
            let odds = busier_copy_odds(c);
            let total: f64 = odds.iter().map(|(_, p)| p).sum();
            assert!((total - 1.0).abs() < 1e-9, "c {c}: {total}");
            assert!(odds.iter().all(|&(m, p)| 2 * m >= c && m <= c && p > 0.0), "c {c}: {odds:?}");
        }
        // At 64 clients the busier copy carries about 32 + 4 * sqrt(2 / pi) of them.
        let mean: f64 = busier_copy_odds(64).iter().map(|&(m, p)| f64::from(m) * p).sum();
        assert!((mean - 35.2).abs() < 0.3, "{mean}");
    }

    #[test]
    fn a_random_router_loses_to_a_balanced_one_and_a_batch_waits_for_the_busier_copy() {
        // Two clients: half the time one per copy (2 x single(1)), half the time both on one copy, whose batch
        // window carries both requests' tokens: single(2).
        let random = two_copies_of(DpRouter::Random, ScenarioLoad::Batch, 2, single);
        let expect = 0.5 * 2.0 * single(1).output_tok_s + 0.5 * single(2).output_tok_s;
        assert!((random.output_tok_s - expect).abs() < 1e-9, "{random:?}");
        // A closed loop's copies add their rates whatever the split.
        let closed = two_copies_of(DpRouter::Random, ScenarioLoad::ClosedLoop, 3, single);
        let expect3 = 0.75 * (single(2).output_tok_s + single(1).output_tok_s) + 0.25 * single(3).output_tok_s;
        assert!((closed.output_tok_s - expect3).abs() < 1e-9, "{closed:?}");
        for c in [1, 2, 3, 8, 64] {
            for load in [ScenarioLoad::Batch, ScenarioLoad::AllAtOnce, ScenarioLoad::ClosedLoop] {
                let r = two_copies_of(DpRouter::Random, load, c, single).output_tok_s;
                let b = two_copies_of(DpRouter::Balanced, load, c, single).output_tok_s;
                assert!(r <= b + 1e-9, "c {c} {load:?}: random {r} above balanced {b}");
            }
        }
    }

    /// Four copies behind a balanced router are four machines at a quarter of the clients each; a random router
    /// over four copies, by linearity, is four times one copy at `Binomial(c, 1/4)` clients, and loses to a
    /// balanced one; the busiest of four copies' odds sum to one and match the pair's own split at two copies.
    #[test]
    fn four_copies_split_the_clients_four_ways() {
        for c in [4, 8, 64] {
            let four = copies_of(4, DpRouter::Balanced, ScenarioLoad::ClosedLoop, c, single);
            assert!((four.output_tok_s - 4.0 * single(c / 4).output_tok_s).abs() < 1e-9, "c {c}: {four:?}");
            assert_eq!(four.mode, Mode::Dp4);
        }
        // Five clients: one copy serves two, three serve one.
        let five = copies_of(4, DpRouter::Balanced, ScenarioLoad::ClosedLoop, 5, single);
        assert!((five.output_tok_s - (single(2).output_tok_s + 3.0 * single(1).output_tok_s)).abs() < 1e-9);
        let closed = copies_of(4, DpRouter::Random, ScenarioLoad::ClosedLoop, 2, single);
        // Two clients: on different copies with odds 3/4, on one copy with odds 1/4.
        let expect = 0.75 * 2.0 * single(1).output_tok_s + 0.25 * single(2).output_tok_s;
        assert!((closed.output_tok_s - expect).abs() < 1e-9, "{closed:?}");
        for c in [1, 3, 8, 64] {
            for load in [ScenarioLoad::Batch, ScenarioLoad::ClosedLoop] {
                let r = copies_of(4, DpRouter::Random, load, c, single).output_tok_s;
                let b = copies_of(4, DpRouter::Balanced, load, c, single).output_tok_s;
                assert!(r <= b + 1e-9, "c {c} {load:?}: random {r} above balanced {b}");
            }
        }
        for c in [1, 2, 7, 64, 300] {
            let odds = busiest_copy_odds(c, 4);
            let total: f64 = odds.iter().map(|(_, p)| p).sum();
            assert!((total - 1.0).abs() < 1e-9, "c {c}: {total}");
            assert!(odds.iter().all(|&(m, _)| 4 * m >= c && m <= c), "c {c}: {odds:?}");
            let pair = busiest_copy_odds(c, 2);
            for ((m, p), (em, ep)) in pair.iter().zip(busier_copy_odds(c)) {
                assert_eq!(*m, em);
                assert!((p - ep).abs() < 1e-9, "c {c}: {pair:?}");
            }
        }
        // Four clients over four copies: all apart with odds 4!/4^4 = 3/32.
        assert!((busiest_copy_odds(4, 4)[0].1 - 3.0 / 32.0).abs() < 1e-12);
    }
}
