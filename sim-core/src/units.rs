//! Physical units: parse the unit strings used in the datasets and convert to SI (bytes, bytes/s, s, FLOP/s).

use serde::{Deserialize, Serialize};

/// What a quantity measures; each dataset field expects one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dimension {
    Bytes,
    BytesPerSec,
    Seconds,
    FlopsPerSec,
    Count,
    Percent,
    /// A price, in US dollars (any currency reads the same; the unit keeps prices apart from counts).
    Money,
    /// Electrical power, watts.
    Power,
}

impl Dimension {
    pub fn name(self) -> &'static str {
        match self {
            Dimension::Bytes => "bytes (B, KB, MB, GB, TB, KiB, MiB, GiB)",
            Dimension::BytesPerSec => "bandwidth (B/s, GB/s, TB/s, Gb/s)",
            Dimension::Seconds => "time (ns, us, ms, s)",
            Dimension::FlopsPerSec => "compute (TFLOPS, PFLOPS)",
            Dimension::Count => "a count (unit \"1\")",
            Dimension::Percent => "a percentage (unit \"%\")",
            Dimension::Money => "a price (USD)",
            Dimension::Power => "power (W, kW)",
        }
    }
}

/// Parses a unit string into its dimension and the factor that converts a value to SI.
pub fn parse_unit(unit: &str) -> Option<(Dimension, f64)> {
    use Dimension::*;
    Some(match unit {
        "B" => (Bytes, 1.0),
        "KB" => (Bytes, 1e3),
        "MB" => (Bytes, 1e6),
        "GB" => (Bytes, 1e9),
        "TB" => (Bytes, 1e12),
        "KiB" => (Bytes, 1024.0),
        "MiB" => (Bytes, 1024.0 * 1024.0),
        "GiB" => (Bytes, 1024.0 * 1024.0 * 1024.0),
        "B/s" => (BytesPerSec, 1.0),
        "GB/s" => (BytesPerSec, 1e9),
        "TB/s" => (BytesPerSec, 1e12),
        "Gb/s" => (BytesPerSec, 1e9 / 8.0),
        "ns" => (Seconds, 1e-9),
        "us" => (Seconds, 1e-6),
        "ms" => (Seconds, 1e-3),
        "s" => (Seconds, 1.0),
        "TFLOPS" => (FlopsPerSec, 1e12),
        "PFLOPS" => (FlopsPerSec, 1e15),
        "1" => (Count, 1.0),
        "%" => (Percent, 1.0),
        "USD" => (Money, 1.0),
        "W" => (Power, 1.0),
        "kW" => (Power, 1e3),
        _ => return None,
    })
}

pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_to_si() {
        assert_eq!(parse_unit("Gb/s"), Some((Dimension::BytesPerSec, 1.25e8)));
        assert_eq!(parse_unit("GiB").map(|u| u.1), Some(GIB));
        assert_eq!(parse_unit("furlongs"), None);
    }
}
