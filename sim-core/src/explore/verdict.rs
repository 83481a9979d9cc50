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
    /// One sentence.
    pub reason: String,
    /// A publication of this very setup that measured another two-machine mode first than the model puts first
    /// (`plan::Plan::contradicted`), in words; the verdict is then too close to call (`weigh_measurement`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured: Option<String>,
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
    let too_close = match (ranked.first(), ranked.get(1)) {
        (Some(a), Some(b)) if Band::overlap(a.tok_s(), &a.tok_s_band, b.tok_s(), &b.tok_s_band) => {
            let show = |m: &ModeGoodput| match ratio(m.tok_s(), single_tok) {
                Some(g) => format!("{} {g:.1}x {}", m.mode.name(), m.tok_s_band.short()),
                None => format!("{} {:.0} tok/s {}", m.mode.name(), m.tok_s(), m.tok_s_band.short()),
            };
            Some(format!("too close to call: {}, {}", show(a), show(b)))
        }
        _ => None,
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
    GoodputVerdict {
        best_pair: best.map(|m| m.mode),
        single_users,
        pair_users: best.map_or(0, ModeGoodput::users),
        users_gain,
        tok_s_gain,
        too_close,
        reason,
        measured: None,
    }
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
