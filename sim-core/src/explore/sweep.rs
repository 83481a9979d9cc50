//! The throughput question: for a report model and workload (with what-if settings), the predicted curve of
//! every mode, the published points with their errors, the values stated as a band or without a
//! concurrency, and the error band the fit earned. The gain question reuses the same curves.

use super::claims::{claim_markers, ClaimMarker};
use super::{Setting, Workspace, CONCURRENCY};
use crate::dataset::schema::Flag;
use crate::fit::FitSet;
use crate::model::modes::Sweep;
use crate::model::{predict, Prediction};
use crate::report::{PointRole, ReportRow};
use crate::stats::{signed_error_pct, ErrorStats};
use crate::Mode;
use serde::Serialize;
use std::collections::BTreeMap;

/// The question: a measured scenario (a report model's is named after it), a workload, what-if settings, and
/// the engine profile to predict with.
#[derive(Debug, Clone, Copy)]
pub struct SweepQuery<'a> {
    /// The scenario id (for the report's models, the model id).
    pub model: &'a str,
    pub isl: u32,
    pub osl: u32,
    pub settings: &'a [Setting],
    /// Another engine profile than the scenario's own (the page's engine picker, the roofline); `None` is the
    /// scenario's own profile.
    pub engine: Option<&'a str>,
}

/// One mode's predicted curve over `CONCURRENCY` (levels where the mode produces nothing are left out).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Curve {
    pub mode: Mode,
    pub points: Vec<Prediction>,
}

impl Curve {
    /// (concurrency, output tok/s) pairs, for charts.
    pub fn xy(&self) -> Vec<(u32, f64)> {
        self.points.iter().map(|p| (p.concurrency, p.output_tok_s)).collect()
    }

    fn at(&self, concurrency: u32) -> Option<&Prediction> {
        self.points.iter().find(|p| p.concurrency == concurrency)
    }
}

/// How far a model and mode's fitted points were from the fit: the 90th-percentile absolute percentage error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ErrorBand {
    /// 90th-percentile APE, in percent.
    pub p90_pct: f64,
    /// How many fitted points it is taken over.
    pub n: usize,
    /// True when taken over this mode's fitted points; false when over all of the model's (fewer than
    /// `MIN_MODE_POINTS` fitted points for this mode).
    pub per_mode: bool,
}

/// Fewer fitted points than this for a (model, mode) and the band falls back to the model's overall p90.
pub const MIN_MODE_POINTS: usize = 3;

/// One published point of the sweep and its prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointRow {
    pub mode: Mode,
    pub concurrency: u32,
    pub measured: f64,
    pub predicted: f64,
    /// Signed: positive when the model predicts too much.
    pub error_pct: f64,
    /// Why a flagged point is shown apart, `None` for a point the fit uses.
    pub flagged: Option<String>,
    pub source: String,
    pub quote: String,
}

/// What a value that is not a point states.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum StatedKind {
    /// Somewhere between the throughput bounds over the concurrency bounds.
    Range { c_min: f64, c_max: f64, y_min: f64, y_max: f64 },
    /// One value without a concurrency; `likely` is the natural reading, not the source's.
    Unplaced { value: f64, likely: Option<f64> },
}

/// A published value that is not a point: a band over a concurrency range, or a value without a stated
/// concurrency. Never counted as a point. A range is predicted at the curve's levels inside it and is `inside`
/// when every prediction falls in the band; an unplaced value is predicted at its likely concurrency and is
/// `inside` when it lies within the fit's error band around that prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatedRow {
    pub model: String,
    pub mode: Mode,
    pub isl: u32,
    pub osl: u32,
    pub kind: StatedKind,
    /// What the text states, in words: `573-611 tok/s over 32-256 streams`.
    pub stated: String,
    /// The concurrency column: `range 32-256`, `concurrency not stated (likely 64)`.
    pub concurrency: String,
    /// The measured column: `573-611`, `710`.
    pub measured: String,
    /// (concurrency, predicted tok/s, inside the band).
    pub predicted: Vec<(u32, f64, bool)>,
    /// Unplaced only: predicted against the value at the likely concurrency, signed, in percent.
    pub likely_error_pct: Option<f64>,
    /// The range's note or the unplaced value's reason (on the first value of a group).
    pub note: Option<String>,
    pub source: String,
    pub quote: String,
}

impl StatedRow {
    /// The predicted column: `32: 617, 64: 640, ...` for a range, the value alone for an unplaced one.
    pub fn predicted_text(&self) -> String {
        match self.kind {
            StatedKind::Range { .. } => {
                self.predicted.iter().map(|(c, y, _)| format!("{c}: {y:.0}")).collect::<Vec<_>>().join(", ")
            }
            StatedKind::Unplaced { .. } => {
                self.predicted.first().map(|(_, y, _)| format!("{y:.0}")).unwrap_or_else(|| "-".into())
            }
        }
    }

    /// The error column: none for a range (not a point); for an unplaced value the error against the likely
    /// concurrency, in parentheses and marked as such.
    pub fn error_text(&self) -> String {
        match (&self.kind, self.likely_error_pct) {
            (StatedKind::Range { .. }, _) => "none (a range, not a point)".into(),
            (StatedKind::Unplaced { likely: Some(c), .. }, Some(e)) => format!("({e:+.1}% if at the likely {c})"),
            _ => "none (no concurrency)".into(),
        }
    }
}

/// The answer to a sweep question.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepAnswer {
    pub title: String,
    /// The engine profile the curves use and how it was obtained.
    pub engine: String,
    /// One curve per mode the model's scenario lists.
    pub curves: Vec<Curve>,
    /// The fit's error band per mode, where the fit has one.
    pub bands: Vec<(Mode, ErrorBand)>,
    /// The published points of this model and workload, by mode then concurrency.
    pub points: Vec<PointRow>,
    /// Ranges and values without a concurrency: those with a likely concurrency or a range first (in the
    /// order a chart places them), then those it cannot place.
    pub stated: Vec<StatedRow>,
}

/// The gain question's answer: the pair over one station at equal concurrency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GainAnswer {
    pub title: String,
    /// Predicted ratio per pair mode: (concurrency, pair / one station).
    pub predicted: Vec<(Mode, Vec<(u32, f64)>)>,
    /// Ratios of published points at equal concurrency: (mode, concurrency, ratio, either point flagged).
    pub measured: Vec<(Mode, u32, f64, bool)>,
    /// The report's claims placed on the chart.
    pub claims: Vec<ClaimMarker>,
}

/// Why a flagged point is not used by the fit.
pub fn explain_flags(flags: &[Flag]) -> String {
    flags
        .iter()
        .map(|f| match f {
            Flag::Dip => "the source calls it a dip (reported as collected); not fitted",
            Flag::OtherCheckpoint => "measured on another checkpoint than this model's; shown for reference only",
            Flag::ConcurrencyCapped => {
                "fewer requests were in flight than the concurrency (the KV cache or the prompt count capped the run); not fitted"
            }
            Flag::RateLimited => "requests were sent at a fixed rate, not by closed-loop clients; not fitted",
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The error band of every (scenario, mode) that has one, from a report's rows (fitted points only): the mode's
/// own p90 with at least `MIN_MODE_POINTS` fitted points, else the scenario's overall fitted p90, else none.
pub fn error_bands(rows: &[ReportRow]) -> BTreeMap<(String, Mode), ErrorBand> {
    let mut models: Vec<&str> = rows.iter().map(|r| r.model.as_str()).collect();
    crate::stats::sort(&mut models);
    models.dedup();
    let mut out = BTreeMap::new();
    for model in models {
        let fitted: Vec<&ReportRow> = rows.iter().filter(|r| r.model == model && r.role == PointRole::Fitted).collect();
        let overall = ErrorStats::of(&fitted.iter().map(|r| r.ape).collect::<Vec<_>>());
        for mode in Mode::ALL {
            let apes: Vec<f64> = fitted.iter().filter(|r| r.mode == mode).map(|r| r.ape).collect();
            let band = if apes.len() >= MIN_MODE_POINTS {
                ErrorStats::of(&apes).map(|s| ErrorBand { p90_pct: s.p90_ape, n: s.n, per_mode: true })
            } else {
                overall.map(|s| ErrorBand { p90_pct: s.p90_ape, n: s.n, per_mode: false })
            };
            if let Some(b) = band.filter(|b| b.p90_pct.is_finite()) {
                out.insert((model.to_string(), mode), b);
            }
        }
    }
    out
}

fn curve(sweep: &mut Sweep, mode: Mode) -> Curve {
    let points = CONCURRENCY
        .iter()
        .map(|&c| sweep.predict(mode, c))
        .filter(|p| p.output_tok_s.is_finite() && p.output_tok_s > 0.0)
        .collect();
    Curve { mode, points }
}

impl Workspace {
    /// The fit's error band of every (model, mode), from the fit over `set`.
    pub fn error_bands(&self, set: FitSet) -> BTreeMap<(String, Mode), ErrorBand> {
        error_bands(&self.accuracy(set).rows)
    }

    /// Curves, points, stated values and bands for one model and workload, predicted with the all-points fit.
    /// An unknown model or an invalid setting is an error message.
    pub fn sweep(&self, q: &SweepQuery) -> Result<SweepAnswer, String> {
        self.sweep_with_fit(q, FitSet::All)
    }

    /// `sweep` with the coefficients and error bands of the fit over `set`.
    pub fn sweep_with_fit(&self, q: &SweepQuery, set: FitSet) -> Result<SweepAnswer, String> {
        let own = self.scenarios.get(q.model).map(|s| s.engine.clone());
        let run = self.report_run_with_engine(q.model, q.settings, set, q.engine)?;
        let (s, k) = (&run.scenario, &run.coefficients);
        let (isl, osl) = (q.isl, q.osl);
        let mut sweep = Sweep::new(s, k, isl, osl);
        let curves: Vec<Curve> = s.modes.iter().map(|&m| curve(&mut sweep, m)).collect();
        // Every prediction at a curve level comes from the curve, so the chart, the table and the stated values
        // agree to the last digit; off-grid concurrencies are predicted on their own.
        let at = |mode: Mode, c: u32| -> f64 {
            curves
                .iter()
                .find(|cv| cv.mode == mode)
                .and_then(|cv| cv.at(c))
                .map(|p| p.output_tok_s)
                .unwrap_or_else(|| predict(s, k, mode, isl, osl, c).output_tok_s)
        };
        // A band is the error of the scenario's own profile on its points: another profile (the roofline) has
        // never been fitted there, so it gets none rather than a borrowed one.
        let other_engine = q.engine.is_some_and(|e| own.as_deref() != Some(e));
        let all_bands = if other_engine { BTreeMap::new() } else { self.error_bands(set) };
        let bands: Vec<(Mode, ErrorBand)> =
            s.modes.iter().filter_map(|&m| all_bands.get(&(q.model.to_string(), m)).map(|b| (m, *b))).collect();
        let mut points: Vec<PointRow> = self
            .points()
            .iter()
            .filter(|p| p.scenario == q.model && p.isl == isl && p.osl == osl)
            .map(|p| {
                let predicted = at(p.mode, p.concurrency);
                let flagged = p.is_flagged().then(|| {
                    let e = explain_flags(&p.flags);
                    match &p.note {
                        Some(n) => format!("{e} ({n})"),
                        None => e,
                    }
                });
                PointRow {
                    mode: p.mode,
                    concurrency: p.concurrency,
                    measured: p.output_tok_s,
                    predicted,
                    error_pct: signed_error_pct(predicted, p.output_tok_s),
                    flagged,
                    source: p.source.clone(),
                    quote: p.quote.clone(),
                }
            })
            .collect();
        crate::stats::sort_by_key(&mut points, |r| (r.mode, r.concurrency));
        let band_of = |m: Mode| bands.iter().find(|(bm, _)| *bm == m).map(|(_, b)| b.p90_pct);
        let stated = stated_rows(self, q, &at, &band_of);
        Ok(SweepAnswer {
            title: format!("{} - ISL {isl} / OSL {osl}", q.model),
            engine: run.engine.clone(),
            curves,
            bands,
            points,
            stated,
        })
    }

    /// Every range and unplaced value of the dataset (all models and workloads), predicted with the fit over
    /// `set`: what `sim-core report` lists.
    pub fn stated_values(&self, set: FitSet) -> Vec<StatedRow> {
        let mut workloads: Vec<(String, u32, u32)> = self
            .dataset
            .sweeps
            .values()
            .flat_map(|f| {
                f.series
                    .iter()
                    .filter(|s| !s.ranges.is_empty() || !s.unplaced.is_empty())
                    .map(move |s| (f.scenario.clone().unwrap_or_else(|| f.model.clone()), s.isl, s.osl))
            })
            .collect();
        crate::stats::sort(&mut workloads);
        workloads.dedup();
        workloads
            .iter()
            .filter_map(|(m, isl, osl)| {
                self.sweep_with_fit(&SweepQuery { model: m, isl: *isl, osl: *osl, settings: &[], engine: None }, set)
                    .ok()
            })
            .flat_map(|a| a.stated)
            .collect()
    }

    /// The pair over one station at equal concurrency for one model and workload, predicted and published,
    /// with the report's claims.
    pub fn gain(&self, q: &SweepQuery) -> Result<GainAnswer, String> {
        let sweep = self.sweep(q)?;
        let single = sweep.curves.iter().find(|c| c.mode == Mode::Single).map(Curve::xy).unwrap_or_default();
        let predicted = sweep
            .curves
            .iter()
            .filter(|c| c.mode != Mode::Single)
            .map(|c| {
                let ratios = c
                    .xy()
                    .into_iter()
                    .filter_map(|(x, y)| single.iter().find(|(x1, _)| *x1 == x).map(|(_, y1)| (x, y / y1)))
                    .collect();
                (c.mode, ratios)
            })
            .collect();
        let pts = &sweep.points;
        let measured = pts
            .iter()
            .filter(|p| p.mode != Mode::Single)
            .filter_map(|p| {
                let one = pts.iter().find(|o| o.mode == Mode::Single && o.concurrency == p.concurrency)?;
                let hollow = p.flagged.is_some() || one.flagged.is_some();
                Some((p.mode, p.concurrency, p.measured / one.measured, hollow))
            })
            .collect();
        Ok(GainAnswer {
            title: format!("{} - pair / one station, ISL {} / OSL {}", q.model, q.isl, q.osl),
            predicted,
            measured,
            claims: self
                .scenarios
                .get(q.model)
                .map(|s| claim_markers(&self.dataset, &s.model.id, q.isl, q.osl))
                .unwrap_or_default(),
        })
    }
}

/// The ranges and unplaced values of a query's model and workload, predicted with the query's settings.
fn stated_rows(
    ws: &Workspace,
    q: &SweepQuery,
    at: &dyn Fn(Mode, u32) -> f64,
    band_of: &dyn Fn(Mode) -> Option<f64>,
) -> Vec<StatedRow> {
    let series: Vec<_> = ws
        .dataset
        .sweeps
        .values()
        .filter(|f| f.scenario.as_deref().unwrap_or(&f.model) == q.model)
        .flat_map(|f| f.series.iter())
        .filter(|s| s.isl == q.isl && s.osl == q.osl)
        .collect();
    let row = |mode: Mode, kind: StatedKind| StatedRow {
        model: q.model.to_string(),
        mode,
        isl: q.isl,
        osl: q.osl,
        kind,
        stated: String::new(),
        concurrency: String::new(),
        measured: String::new(),
        predicted: Vec::new(),
        likely_error_pct: None,
        note: None,
        source: String::new(),
        quote: String::new(),
    };
    let mut placed = Vec::new();
    let mut unplaceable = Vec::new();
    for v in &series {
        for u in &v.unplaced {
            let likely_all: Vec<String> = u.likely_concurrency.iter().map(|c| format!("{c}")).collect();
            for (i, &value) in u.output_tok_s.iter().enumerate() {
                let likely = u.likely_concurrency.get(i).copied().filter(|c| c.is_finite() && *c >= 1.0);
                let mut r = row(v.mode, StatedKind::Unplaced { value, likely });
                if let Some(c) = likely {
                    let c = c.round() as u32;
                    let y = at(v.mode, c);
                    let err = signed_error_pct(y, value);
                    // Inside when the value lies within the fit's error band around the prediction.
                    let inside = band_of(v.mode).is_some_and(|b| err.abs() <= b);
                    r.predicted = vec![(c, y, inside)];
                    r.likely_error_pct = Some(err);
                }
                r.stated = if likely_all.is_empty() {
                    format!("{value} tok/s, concurrency not stated")
                } else {
                    format!("{value} tok/s, concurrency not stated (likely {})", likely_all.join("/"))
                };
                r.concurrency = match likely {
                    Some(c) => format!("concurrency not stated (likely {c})"),
                    None => "concurrency not stated".into(),
                };
                r.measured = format!("{value:.0}");
                // The reason once per group of values, on its first row.
                r.note = (i == 0).then(|| u.reason.clone());
                r.source = u.from.source.clone();
                r.quote = u.from.quote.clone();
                if likely.is_some() {
                    placed.push(r);
                } else {
                    unplaceable.push(r);
                }
            }
        }
    }
    for v in &series {
        for rg in &v.ranges {
            let mut levels: Vec<u32> = CONCURRENCY
                .iter()
                .copied()
                .filter(|&c| f64::from(c) >= rg.concurrency_min && f64::from(c) <= rg.concurrency_max)
                .collect();
            if levels.is_empty() {
                let (a, z) = (rg.concurrency_min.round().max(1.0) as u32, rg.concurrency_max.round().max(1.0) as u32);
                levels = if a == z { vec![a] } else { vec![a, z] };
            }
            let band = rg.output_tok_s_min..=rg.output_tok_s_max;
            let mut r = row(
                v.mode,
                StatedKind::Range {
                    c_min: rg.concurrency_min,
                    c_max: rg.concurrency_max,
                    y_min: rg.output_tok_s_min,
                    y_max: rg.output_tok_s_max,
                },
            );
            r.predicted = levels
                .into_iter()
                .map(|c| {
                    let y = at(v.mode, c);
                    (c, y, band.contains(&y))
                })
                .collect();
            r.stated = format!(
                "{}-{} tok/s over {}-{} streams",
                rg.output_tok_s_min, rg.output_tok_s_max, rg.concurrency_min, rg.concurrency_max
            );
            r.concurrency = format!("range {}-{}", rg.concurrency_min, rg.concurrency_max);
            r.measured = format!("{:.0}-{:.0}", rg.output_tok_s_min, rg.output_tok_s_max);
            r.note = rg.note.clone();
            r.source = rg.from.source.clone();
            r.quote = rg.from.quote.clone();
            placed.push(r);
        }
    }
    placed.extend(unplaceable);
    placed
}
