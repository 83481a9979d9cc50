//! The verdict at a latency target: the two-machine mode that serves the most users within it (ties: the most
//! tok/s), its gain over one machine, and whether the two best pair modes are too close to call within their
//! bands. A mode that meets the target at no load is never the pick, whatever its throughput.

use super::confidence::Band;
use super::target::ModeGoodput;
use crate::Mode;
use serde::Serialize;

/// What a second machine buys at the target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GoodputVerdict {
    /// The two-machine mode serving the most users at the target (ties: the most tok/s); `None` when no
    /// two-machine mode meets the target at any load.
    pub best_pair: Option<Mode>,
    pub single_users: u32,
    pub pair_users: u32,
    /// The pair's users and tok/s at target over one machine's (`None` when one machine serves none).
    pub users_gain: Option<f64>,
    pub tok_s_gain: Option<f64>,
    /// Set when the two best pair modes' tok/s at target lie within each other's bands:
    /// `too close to call: dp2 2.1x ±15%, tp2 2.0x ±25%`.
    pub too_close: Option<String>,
    /// The modes `too_close` names, the verdict's first: the plan prints how to run each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub too_close_modes: Vec<Mode>,
    /// One sentence.
    pub reason: String,
    /// A publication of this very setup that measured another two-machine mode first than the model puts first
    /// (`plan::Plan::contradicted`), in words; the verdict is then too close to call (`weigh_measurement`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured: Option<String>,
    /// What four machines buy at the target, where the question names four-machine modes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub four_machines: Option<FourAtTarget>,
}

/// What machines three and four buy at the target: the four-machine mode serving the most users within it
/// (ties: the most tok/s), against one machine and the best pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FourAtTarget {
    /// `None` when no four-machine mode meets the target at any load.
    pub best: Option<Mode>,
    pub users: u32,
    /// Its users over one machine's and over the best pair's (`None` where that serves none).
    pub users_over_one: Option<f64>,
    pub users_over_pair: Option<f64>,
    /// One sentence.
    pub reason: String,
}

/// Lays a publication's measurement of this very setup over the verdict: where it measured another pair mode
/// first than the verdict picks, the verdict says so and calls the two too close to call, whatever the bands say.
pub fn weigh_measurement(v: &mut GoodputVerdict, published: &crate::plan::PublishedVerdict) {
    let contradicts = v.best_pair.is_some_and(|b| b != published.best_measured);
    if published.agrees || !contradicts {
        return;
    }
    let text = published.contradiction_text();
    v.too_close = Some(text.clone());
    v.measured = Some(text);
    v.too_close_modes = v.best_pair.into_iter().chain([published.best_measured]).collect();
}

/// The verdict over every mode's answer (in `Mode::ALL` order). A mode that meets the target at no load is
/// never the pick, whatever its throughput.
pub fn verdict(modes: &[ModeGoodput]) -> GoodputVerdict {
    let single = modes.iter().find(|m| m.mode == Mode::Single);
    let single_users = single.map_or(0, ModeGoodput::users);
    let single_tok = single.map_or(0.0, ModeGoodput::tok_s);
    // Pair modes that serve someone, best first: users, then tok/s (ties keep `Mode::ALL` order).
    let mut ranked: Vec<&ModeGoodput> = modes.iter().filter(|m| m.machines == 2 && m.users() > 0).collect();
    crate::stats::sort_by(&mut ranked, |a, b| b.users().cmp(&a.users()).then(b.tok_s().total_cmp(&a.tok_s())));
    let best = ranked.first().copied();
    let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
    let users_gain = best.and_then(|b| ratio(f64::from(b.users()), f64::from(single_users)));
    let tok_s_gain = best.and_then(|b| ratio(b.tok_s(), single_tok));
    let (too_close, too_close_modes) = match (ranked.first(), ranked.get(1)) {
        (Some(a), Some(b)) if Band::overlap(a.tok_s(), &a.tok_s_band, b.tok_s(), &b.tok_s_band) => {
            let show = |m: &ModeGoodput| match ratio(m.tok_s(), single_tok) {
                Some(g) => format!("{} {g:.1}x {}", m.mode.name(), m.tok_s_band.short()),
                None => format!("{} {:.0} tok/s {}", m.mode.name(), m.tok_s(), m.tok_s_band.short()),
            };
            (Some(format!("too close to call: {}, {}", show(a), show(b))), vec![a.mode, b.mode])
        }
        _ => (None, Vec::new()),
    };
    let stops = |m: &ModeGoodput| m.miss.as_ref().map(|x| x.text.clone());
    let reason = match (best, single_users) {
        (None, 0) => {
            let closest = modes
                .iter()
                .filter_map(|m| m.miss.as_ref().map(|x| (m.mode, x)))
                .filter(|(_, x)| x.over.is_finite())
                .min_by(|a, b| a.1.over.total_cmp(&b.1.over));
            match closest {
                Some((mode, x)) => {
                    format!("no mode meets the target at any load; the closest is {}: {}", mode.name(), x.text)
                }
                None => "no mode meets the target at any load: none produces tokens".to_string(),
            }
        }
        (None, _) => format!(
            "no two-machine mode meets the target at any load; one machine serves {} users{}",
            single.map_or(String::new(), ModeGoodput::users_text),
            single.and_then(stops).map_or(String::new(), |t| format!(" (beyond that: {t})"))
        ),
        (Some(b), 0) => format!(
            "one machine serves no user within the target ({}); the pair as {} serves {} at {:.0} tok/s",
            single.and_then(stops).unwrap_or_else(|| "it does not fit".into()),
            b.mode.name(),
            b.users_text(),
            b.tok_s()
        ),
        (Some(b), n) => format!(
            "{} serves {} users within the target against one machine's {} ({:.1}x the users, {:.1}x the tok/s){}",
            b.mode.name(),
            b.users_text(),
            single.map_or(String::new(), ModeGoodput::users_text),
            users_gain.unwrap_or(f64::NAN),
            tok_s_gain.unwrap_or(f64::NAN),
            single.and_then(stops).map_or(String::new(), |t| format!("; one machine stops at {n}: {t}"))
        ),
    };
    let four_machines = modes.iter().any(|m| m.machines == 4).then(|| {
        let mut fours: Vec<&ModeGoodput> = modes.iter().filter(|m| m.machines == 4 && m.users() > 0).collect();
        crate::stats::sort_by(&mut fours, |a, b| b.users().cmp(&a.users()).then(b.tok_s().total_cmp(&a.tok_s())));
        let four = fours.first().copied();
        let users = four.map_or(0, ModeGoodput::users);
        let pair_users = best.map_or(0, ModeGoodput::users);
        let users_over_one = four.and_then(|_| ratio(f64::from(users), f64::from(single_users)));
        let users_over_pair = four.and_then(|_| ratio(f64::from(users), f64::from(pair_users)));
        let reason = match four {
            None => "no four-machine mode meets the target at any load".to_string(),
            Some(f) => format!(
                "with four machines {} serves {} users within the target ({} the best pair's {}{})",
                f.mode.name(),
                f.users_text(),
                users_over_pair.map_or("none for".to_string(), |g| format!("{g:.1}x")),
                pair_users,
                best.map_or(String::new(), |b| format!(" as {}", b.mode.name()))
            ),
        };
        FourAtTarget { best: four.map(|m| m.mode), users, users_over_one, users_over_pair, reason }
    });
    GoodputVerdict {
        best_pair: best.map(|m| m.mode),
        four_machines,
        single_users,
        pair_users: best.map_or(0, ModeGoodput::users),
        users_gain,
        tok_s_gain,
        too_close,
        too_close_modes,
        reason,
        measured: None,
    }
}

/// A plan's one answer: the mode to run, the modes too close to call with it (the plan prints how to run each),
/// and one sentence with one multiplier, that every part of the output repeats.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanAnswer {
    pub mode: Option<Mode>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub too_close_with: Vec<Mode>,
    pub headline: String,
}

/// The one answer of a plan: at the latency target when there is one (at the asked load when one is asked),
/// else the plan's recommendation, or what a publication of this very setup measured where it contradicts it.
pub fn plan_answer(plan: &crate::plan::Plan, goodput: Option<&super::target::GoodputAnswer>) -> PlanAnswer {
    let Some((g, w)) = goodput.and_then(|g| g.workloads.first().map(|w| (g, w))) else {
        return match plan.contradicted() {
            Some(v) => PlanAnswer {
                mode: Some(v.best_measured),
                too_close_with: plan.recommendation().filter(|m| *m != v.best_measured).into_iter().collect(),
                headline: format!("{} as measured of this setup ({})", v.best_measured.name(), v.contradiction_text()),
            },
            None => PlanAnswer {
                mode: plan.recommendation(),
                too_close_with: Vec::new(),
                headline: format!("{} ({})", plan.recommendation().map_or("none", Mode::name), plan.reason),
            },
        };
    };
    let v = &w.verdict;
    let capacity = match (v.best_pair.and_then(|m| w.get(m)), v.users_gain) {
        (Some(b), Some(gain)) => format!(
            "within the target {} serves {} users against one machine's {} ({gain:.1}x the users)",
            b.mode.name(),
            b.users_text(),
            w.get(Mode::Single).map_or("0".into(), ModeGoodput::users_text)
        ),
        _ => v.reason.clone(),
    };
    let mut mode = v.best_pair;
    let mut headline = format!("{}: {capacity}", v.best_pair.map_or("none", Mode::name));
    if let Some(n) = g.asked_users {
        fn asked(m: &ModeGoodput) -> Option<(&ModeGoodput, &super::target::AtAsked)> {
            m.at_asked.as_ref().filter(|a| a.meets).map(|a| (m, a))
        }
        let single = w.get(Mode::Single).and_then(asked);
        // The pair modes that meet the target at the asked load, best at the target first.
        let pair = v.best_pair.and_then(|b| w.get(b)).and_then(asked).or_else(|| {
            let mut meeting: Vec<&ModeGoodput> =
                w.modes.iter().filter(|m| m.machines == 2 && asked(m).is_some()).collect();
            crate::stats::sort_by(&mut meeting, |a, b| b.users().cmp(&a.users()));
            meeting.first().and_then(|m| asked(m))
        });
        let latencies = |a: &super::target::AtAsked| {
            let cost = a
                .cost
                .as_ref()
                .map_or(String::new(), |c| format!(", {:.2} per million output tokens", c.usd_per_million_tokens));
            format!("TTFT {:.2} s, TPOT {:.1} ms{cost}", a.ttft_s, a.tpot_s * 1e3)
        };
        let single_miss = w
            .get(Mode::Single)
            .and_then(|m| {
                m.at_asked
                    .as_ref()
                    .and_then(|a| a.miss.as_ref().map(|x| x.text.clone()))
                    .or(m.miss.as_ref().map(|x| x.text.clone()))
            })
            .unwrap_or_else(|| "it does not meet it".into());
        (mode, headline) = match (single, pair) {
            (Some((_, a)), _) => (
                Some(Mode::Single),
                format!(
                    "single: at {n} users one machine meets the target ({}); a second machine is not needed at this \
                     load; {capacity}",
                    latencies(a)
                ),
            ),
            (None, Some((m, a))) => (
                Some(m.mode),
                format!(
                    "{}: at {n} users one machine misses the target ({single_miss}) and {} meets it ({}); {capacity}",
                    m.mode.name(),
                    m.mode.name(),
                    latencies(a)
                ),
            ),
            (None, None) => (
                mode,
                format!("{}: at {n} users no mode meets the target; {capacity}", mode.map_or("none", Mode::name)),
            ),
        };
    }
    let too_close_with = if mode == v.best_pair {
        v.too_close_modes.iter().copied().filter(|m| Some(*m) != mode).collect()
    } else {
        Vec::new()
    };
    PlanAnswer { mode, too_close_with, headline }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::target::tests::{bands, curve, modes};
    use crate::explore::target::LatencyTarget;

    #[test]
    fn a_mode_that_misses_at_every_load_is_never_recommended() {
        // TP2 has by far the most throughput but its TTFT misses everywhere; two copies meet the target.
        let target = LatencyTarget::mean(Some(1.0), Some(0.05));
        let curves = [
            curve(Mode::Single, 30.0, 0.2, 0.01),
            curve(Mode::Tp2, 500.0, 5.0, 0.01),
            curve(Mode::Pd, 20.0, 0.3, 0.04),
            curve(Mode::Dp2, 30.0, 0.1, 0.01),
        ];
        let m = modes(&curves, &target, &bands(0.1));
        assert_eq!(m[1].users(), 0);
        let v = verdict(&m);
        assert_eq!(v.best_pair, Some(Mode::Dp2), "{v:?}");
        assert!(v.pair_users > v.single_users, "{v:?}");
        // No pair mode meets it: one machine's answer stands and no pair mode is named.
        let strict = LatencyTarget::mean(Some(0.23), Some(0.05));
        let only_single = [curve(Mode::Single, 30.0, 0.2, 0.01), curve(Mode::Tp2, 500.0, 5.0, 0.01)];
        let v = verdict(&modes(&only_single, &strict, &bands(0.1)));
        assert_eq!((v.best_pair, v.single_users, v.users_gain), (None, 1, None));
        assert!(
            v.reason.starts_with("no two-machine mode meets the target at any load; one machine serves 1"),
            "{v:?}"
        );
        // Nothing meets it: the closest miss is named.
        let v = verdict(&modes(&curves, &LatencyTarget::mean(Some(0.1), None), &bands(0.1)));
        assert_eq!(v.best_pair, None);
        assert!(v.reason.starts_with("no mode meets the target at any load; the closest is dp2: TTFT 0.11 s"), "{v:?}");
    }

    #[test]
    fn a_pair_that_serves_where_one_machine_serves_none_says_so() {
        let target = LatencyTarget::mean(Some(1.0), None);
        let curves = [curve(Mode::Single, 30.0, 2.4, 0.01), curve(Mode::Tp2, 60.0, 0.5, 0.01)];
        let v = verdict(&modes(&curves, &target, &bands(0.1)));
        assert_eq!((v.best_pair, v.single_users, v.users_gain, v.tok_s_gain), (Some(Mode::Tp2), 0, None, None));
        assert!(
            v.reason.starts_with(
                "one machine serves no user within the target (TTFT 2.64 s at one user against a 1.00 s target: \
                 2.6x over); the pair as tp2 serves 8"
            ),
            "{}",
            v.reason
        );
    }

    #[test]
    fn pair_modes_within_each_others_bands_are_too_close_to_call() {
        let target = LatencyTarget::mean(None, Some(0.05));
        // Equal latencies: tp2 and dp2 serve the same users, dp2 with 5% more tok/s.
        let curves = [
            curve(Mode::Single, 30.0, 0.2, 0.01),
            curve(Mode::Tp2, 60.0, 0.2, 0.01),
            curve(Mode::Dp2, 63.0, 0.2, 0.01),
        ];
        let v = verdict(&modes(&curves, &target, &bands(0.15)));
        assert_eq!(v.best_pair, Some(Mode::Dp2), "ties on users go to throughput");
        assert_eq!(v.too_close.as_deref(), Some("too close to call: dp2 2.1x ±15%, tp2 2.0x ±15%"));
        assert!(v
            .reason
            .starts_with("dp2 serves 64+ users within the target against one machine's 64+ (1.0x the users"));
        let v = verdict(&modes(&curves, &target, &bands(0.01)));
        assert_eq!(v.too_close, None, "narrow bands separate them");
    }
}
