//! Numbers and quantities: finite and positive, a unit of the field's dimension, a basis with its companion.

use super::Checker;
use crate::dataset::schema::{Basis, Quantity};
use crate::units::{parse_unit, Dimension};

impl Checker<'_> {
    pub(super) fn positive(&mut self, file: &str, pointer: String, x: f64, what: &str) -> bool {
        if x.is_finite() && x > 0.0 {
            return true;
        }
        self.err(
            file,
            pointer,
            format!("{what} must be a positive finite number, found {x}"),
            "check the transcription",
        );
        false
    }

    pub(super) fn quantity(&mut self, file: &str, pointer: &str, q: &Quantity, want: Dimension, allow_zero: bool) {
        match parse_unit(&q.unit) {
            None => self.err(
                file,
                format!("{pointer}/unit"),
                format!("unknown unit `{}`", q.unit),
                &format!("expected {}", want.name()),
            ),
            Some((dim, _)) if dim != want => self.err(
                file,
                format!("{pointer}/unit"),
                format!("unit `{}` is not {}", q.unit, want.name()),
                "this field needs a different dimension",
            ),
            _ => {}
        }
        let ok = q.value.is_finite() && (q.value > 0.0 || (allow_zero && q.value == 0.0));
        if !ok {
            self.err(
                file,
                format!("{pointer}/value"),
                format!(
                    "value must be a {} finite number, found {}",
                    if allow_zero { "non-negative" } else { "positive" },
                    q.value
                ),
                "check the number and its unit",
            );
        }
        let missing = match q.basis {
            Basis::Published => q.from.is_none().then_some("from"),
            Basis::Derived => q.derivation.is_none().then_some("derivation"),
            Basis::ReportedElsewhere => q.reference.is_none().then_some("reference"),
            Basis::Fitted => q.fitted_on.is_none().then_some("fitted_on"),
            Basis::Assumed => q.reason.is_none().then_some("reason"),
        };
        if let Some(field) = missing {
            self.err(
                file,
                pointer.to_string(),
                format!("a {} value needs `{field}`", q.basis.label()),
                "every parameter says where it came from",
            );
        }
        if let Some(from) = &q.from {
            let n = (q.basis == Basis::Published).then_some(q.value);
            self.from(file, pointer, from, n);
        }
    }
}
