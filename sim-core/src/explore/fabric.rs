//! The fabric question: bus bandwidth against message size for every collective nccl-tests measured between
//! the two machines, predicted (per-collective efficiency fitted on the 16 GiB row) and measured, with the
//! payload ceiling and the ordering of the peaks.

use super::{Setting, Workspace};
use crate::dataset::schema::Collective;
use crate::model::fabric::{busbw, FabricColumn, FabricRow};
use crate::scenario::apply_hardware_override;
use crate::scenario::OverrideField;
use serde::Serialize;

/// Message sizes of the fabric curves: 1 KiB to 16 GiB in powers of two.
pub fn message_sizes() -> Vec<f64> {
    (10..=34).map(|e| 2f64.powi(e)).collect()
}

/// The answer to the fabric question.
#[derive(Debug, Clone, Serialize)]
pub struct FabricAnswer {
    pub title: String,
    /// One-way payload bandwidth over all rails, GB/s: every collective sits under it.
    pub ceiling_gbps: f64,
    /// Predicted (message bytes, bus bandwidth GB/s) per collective, with the settings' link.
    pub curves: Vec<(Collective, Vec<(f64, f64)>)>,
    /// Every measured row next to its prediction on the measured link.
    pub rows: Vec<FabricRow>,
    /// Collectives by measured peak, highest first, and by predicted peak.
    pub measured_order: Vec<Collective>,
    pub predicted_order: Vec<Collective>,
}

impl Workspace {
    /// The fabric of the pair the nccl-tests tables were measured on. Settings that change the link (line
    /// rate, rails, payload efficiency, call latency) move the predicted curves; others do not apply here.
    pub fn fabric(&self, settings: &[Setting]) -> Result<FabricAnswer, String> {
        let rows = crate::report::fabric_rows(&self.dataset);
        let mut answer = FabricAnswer {
            title: "Bus bandwidth between the two stations (nccl-tests)".into(),
            ceiling_gbps: 0.0,
            curves: Vec::new(),
            rows: Vec::new(),
            measured_order: Vec::new(),
            predicted_order: Vec::new(),
        };
        let Some(mut hw) = self
            .dataset
            .fabrics
            .values()
            .find_map(|f| self.dataset.hardware.get(&f.hardware))
            .map(crate::scenario::hardware_spec)
        else {
            return Ok(answer);
        };
        for s in settings {
            let hardware_key = crate::scenario::override_key(s.knob.key)
                .is_ok_and(|o| matches!(o.field(), OverrideField::Hardware(_)));
            if hardware_key {
                apply_hardware_override(&mut hw, s.knob.key, s.knob.to_si(s.value))
                    .map_err(|e| format!("{}: {e}", s.knob.label))?;
            }
        }
        let link = &hw.link;
        answer.ceiling_gbps = link.payload_bytes_per_sec() / 1e9;
        for c in Collective::ALL {
            let Some(row) = rows.iter().find(|r| r.collective == c) else { continue };
            let pts = message_sizes().into_iter().map(|s| (s, busbw(link, row.efficiency, c, s) / 1e9)).collect();
            answer.curves.push((c, pts));
        }
        let mut peaks: Vec<&FabricRow> = rows.iter().filter(|r| r.column == FabricColumn::Peak).collect();
        crate::stats::sort_by(&mut peaks, |a, b| b.measured_busbw_gbps.total_cmp(&a.measured_busbw_gbps));
        answer.measured_order = peaks.iter().map(|r| r.collective).collect();
        crate::stats::sort_by(&mut peaks, |a, b| b.predicted_busbw_gbps.total_cmp(&a.predicted_busbw_gbps));
        answer.predicted_order = peaks.iter().map(|r| r.collective).collect();
        answer.rows = rows;
        Ok(answer)
    }
}
