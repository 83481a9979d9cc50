//! Floats JSON cannot hold, read back: serde_json writes a non-finite `f64` as `null`, so a stored answer (the
//! fits under `data/fitted/`) reads that `null` back as what its field means by it.
//!
//! ```text
//! a refused mode's latencies and step time: +inf  (`model::modes::refused`)  ─►  null  ─►  +inf
//! a gain over one machine that produces nothing: NaN  (`plan::PlanRow`)     ─►  null  ─►  NaN
//! ```

use serde::{Deserialize, Deserializer};

/// A number, or `null` read as +infinity (a time that never comes).
pub fn null_as_infinity<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
}

/// A number, or `null` read as NaN (a ratio with nothing to divide by).
pub fn null_as_nan<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Times {
        #[serde(deserialize_with = "super::null_as_infinity")]
        ttft_s: f64,
        #[serde(deserialize_with = "super::null_as_nan")]
        gain: f64,
    }

    #[test]
    fn null_reads_back_as_what_the_field_wrote() {
        let written = serde_json::json!({ "ttft_s": f64::INFINITY, "gain": f64::NAN });
        assert_eq!(written.to_string(), r#"{"gain":null,"ttft_s":null}"#);
        let t: Times = serde_json::from_value(written).unwrap();
        assert_eq!(t.ttft_s, f64::INFINITY);
        assert!(t.gain.is_nan());
        let t: Times = serde_json::from_str(r#"{"ttft_s": 1.5, "gain": 2.0}"#).unwrap();
        assert_eq!((t.ttft_s, t.gain), (1.5, 2.0));
    }
}
