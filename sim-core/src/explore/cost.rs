//! What a million output tokens cost on one machine or two: the machine's price spread over its amortisation
//! plus the electricity it draws, over the tokens it serves at the share of the time it is busy.
//!
//! ```text
//! usd per second per machine = price / amortisation seconds + power kW x usd per kWh / 3600
//! usd per million tokens     = usd per second per machine x machines / (tok/s x utilisation) x 1e6
//! tokens per kWh             = tok/s x utilisation x 3600 / (power kW x machines)
//! ```
//! A machine is assumed to draw its stated power all the time, busy or idle (the conservative reading of a
//! nameplate figure); only the share `utilisation` of its time serves tokens at the predicted rate. Any currency
//! works: the fields say USD because a unit in the name is what keeps prices from mixing with other numbers.

use serde::Serialize;

/// Seconds in a year of 365.25 days.
const SECONDS_PER_YEAR: f64 = 365.25 * 86_400.0;

/// Three years: a common straight-line depreciation period for servers, an assumption the user can change.
pub const DEFAULT_AMORTIZATION_YEARS: f64 = 3.0;
/// An electricity price in USD per kWh near the industrial average in the US and below most of Europe's: an
/// assumption the user can change.
pub const DEFAULT_ELECTRICITY_USD_PER_KWH: f64 = 0.15;
/// The share of the time a machine serves at the predicted rate: traffic has peaks and troughs, and a machine
/// sized for the peak idles part of the day. An assumption, stated, that the user can change.
pub const DEFAULT_UTILIZATION: f64 = 0.6;

/// What the user pays for a machine and its power.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostInputs {
    /// Purchase price of one machine.
    pub machine_price_usd: f64,
    /// Power one machine draws, watts.
    pub machine_power_w: f64,
    pub amortization_years: f64,
    pub electricity_usd_per_kwh: f64,
    /// Share of the time the machine serves at the predicted rate, in (0, 1].
    pub utilization: f64,
}

/// What a mode's throughput costs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cost {
    pub usd_per_million_tokens: f64,
    /// Output tokens per kWh drawn (`None` when the power given is zero).
    pub tokens_per_kwh: Option<f64>,
    /// What the machines cost per hour, amortisation and electricity.
    pub usd_per_hour: f64,
}

impl CostInputs {
    /// Inputs with the stated defaults for everything but the price and the power.
    pub fn with_defaults(machine_price_usd: f64, machine_power_w: f64) -> CostInputs {
        CostInputs {
            machine_price_usd,
            machine_power_w,
            amortization_years: DEFAULT_AMORTIZATION_YEARS,
            electricity_usd_per_kwh: DEFAULT_ELECTRICITY_USD_PER_KWH,
            utilization: DEFAULT_UTILIZATION,
        }
    }

    /// Whether every input is usable; the message names the first that is not.
    pub fn check(&self) -> Result<(), String> {
        let non_negative = [
            ("machine price", self.machine_price_usd),
            ("machine power (W)", self.machine_power_w),
            ("electricity price per kWh", self.electricity_usd_per_kwh),
        ];
        for (what, v) in non_negative {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("the {what} must be a finite number at least 0, got {v}"));
            }
        }
        if !(self.amortization_years.is_finite() && self.amortization_years > 0.0) {
            return Err(format!(
                "the amortisation must be a positive number of years, got {}",
                self.amortization_years
            ));
        }
        if !(self.utilization > 0.0 && self.utilization <= 1.0) {
            return Err(format!("the utilisation must be in (0, 1], got {}", self.utilization));
        }
        Ok(())
    }

    /// What one machine costs per second: its price over the amortisation plus its electricity.
    pub fn usd_per_machine_second(&self) -> f64 {
        self.machine_price_usd / (self.amortization_years * SECONDS_PER_YEAR)
            + self.machine_power_w / 1e3 * self.electricity_usd_per_kwh / 3600.0
    }
}

/// A machine's list price and power (W) from its hardware file, when the file states both
/// (`HardwareFile::cost`); the CLI uses them where the user gives no `--price` and `--power-w`.
pub fn listed(hw: &crate::dataset::schema::HardwareFile) -> Option<(f64, f64)> {
    let c = hw.cost.as_ref()?;
    let price = c.list_price.as_ref()?.si()?;
    let power = c.power.as_ref()?.si()?;
    Some((price, power))
}

/// The cost of `machines` machines serving `output_tok_s` while busy (`None` when they serve nothing).
pub fn cost_at(inputs: &CostInputs, machines: u32, output_tok_s: f64) -> Option<Cost> {
    if !(output_tok_s > 0.0 && output_tok_s.is_finite()) {
        return None;
    }
    let machines = f64::from(machines);
    let usd_per_second = inputs.usd_per_machine_second() * machines;
    let served_tok_s = output_tok_s * inputs.utilization;
    let kw = inputs.machine_power_w / 1e3 * machines;
    Some(Cost {
        usd_per_million_tokens: usd_per_second / served_tok_s * 1e6,
        tokens_per_kwh: (kw > 0.0).then(|| served_tok_s * 3600.0 / kw),
        usd_per_hour: usd_per_second * 3600.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> CostInputs {
        CostInputs {
            machine_price_usd: 94_672.8,
            machine_power_w: 1_600.0,
            amortization_years: 3.0,
            electricity_usd_per_kwh: 0.15,
            utilization: 0.5,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn one_machine_costs_its_amortisation_and_power_over_the_tokens_it_serves() {
        // Three years are 94,672,800 s: the price is 0.001 USD a second. 1.6 kW at 0.15 USD/kWh is 0.24 USD an
        // hour, 0.0000666... USD a second. Total 0.0010666... USD/s; at 1000 tok/s half the time, 500 tok/s
        // served: 2.1333... USD per million tokens. 500 tok/s x 3600 s = 1.8 M tokens per 1.6 kWh.
        let c = cost_at(&inputs(), 1, 1000.0).expect("a cost");
        assert!(close(c.usd_per_million_tokens, 2.133_333_333_333_333), "{c:?}");
        assert!(close(c.tokens_per_kwh.unwrap(), 1_125_000.0), "{c:?}");
        assert!(close(c.usd_per_hour, 3.84), "{c:?}");
    }

    #[test]
    fn two_machines_at_twice_the_throughput_cost_the_same_per_token() {
        let one = cost_at(&inputs(), 1, 1000.0).unwrap();
        let two = cost_at(&inputs(), 2, 2000.0).unwrap();
        assert!(close(one.usd_per_million_tokens, two.usd_per_million_tokens));
        assert!(close(one.tokens_per_kwh.unwrap(), two.tokens_per_kwh.unwrap()));
        // At the same throughput, two machines cost twice as much per token.
        let same = cost_at(&inputs(), 2, 1000.0).unwrap();
        assert!(close(same.usd_per_million_tokens, 2.0 * one.usd_per_million_tokens));
        assert!(close(same.usd_per_hour, 7.68));
    }

    #[test]
    fn free_power_or_no_tokens_give_no_number_rather_than_infinity() {
        let free = CostInputs { machine_power_w: 0.0, ..inputs() };
        let c = cost_at(&free, 1, 1000.0).unwrap();
        assert_eq!(c.tokens_per_kwh, None);
        assert!(close(c.usd_per_million_tokens, 2.0), "only the price: 0.001 USD/s over 500 tok/s");
        assert_eq!(cost_at(&inputs(), 1, 0.0), None);
    }

    #[test]
    fn a_hardware_file_gives_its_listed_price_and_power_only_when_it_states_both() {
        let text = include_str!("../../../data/hardware/dgx-spark.json");
        let mut v: serde_json::Value = serde_json::from_str(text).expect("json");
        // The loader reads "$schema" apart from the file's fields.
        v.as_object_mut().map(|o| o.remove("$schema"));
        let hw = |v: &serde_json::Value| -> crate::dataset::schema::HardwareFile {
            serde_json::from_value(v.clone()).expect("a hardware file")
        };
        assert_eq!(listed(&hw(&v)), None, "no shipped file states a price yet");
        let q = |value: f64, unit: &str| serde_json::json!({"value": value, "unit": unit, "basis": "assumed", "reason": "test"});
        v["cost"] = serde_json::json!({"list_price": q(3999.0, "USD")});
        assert_eq!(listed(&hw(&v)), None, "a price without power prices nothing");
        v["cost"]["power"] = q(0.24, "kW");
        assert_eq!(listed(&hw(&v)), Some((3999.0, 240.0)));
    }

    #[test]
    fn defaults_are_the_stated_assumptions_and_bad_inputs_are_named() {
        let d = CostInputs::with_defaults(50_000.0, 1_000.0);
        assert_eq!((d.amortization_years, d.electricity_usd_per_kwh, d.utilization), (3.0, 0.15, 0.6));
        assert!(d.check().is_ok());
        let e = CostInputs { utilization: 1.5, ..d.clone() }.check().unwrap_err();
        assert!(e.contains("utilisation"), "{e}");
        let e = CostInputs { amortization_years: 0.0, ..d.clone() }.check().unwrap_err();
        assert!(e.contains("amortisation"), "{e}");
        let e = CostInputs { machine_price_usd: -1.0, ..d }.check().unwrap_err();
        assert!(e.contains("machine price"), "{e}");
    }
}
