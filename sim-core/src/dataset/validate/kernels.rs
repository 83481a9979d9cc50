//! Kernel tables: the hardware they measured, provenance filled in, and every sweep a sequence of positive times
//! over strictly increasing sizes.

use super::Checker;
use crate::dataset::schema::{KernelsFile, StepPhase};

impl Checker<'_> {
    pub(super) fn kernels(&mut self) {
        let mut seen: std::collections::BTreeMap<&str, &str> = std::collections::BTreeMap::new();
        for table in self.ds.kernels.values() {
            let file = self.path("kernels", &table.id);
            self.kernel_table(&file, table);
            if let Some(first) = seen.insert(&table.hardware, &table.id) {
                self.err(
                    &file,
                    "/hardware".into(),
                    format!("a second kernel table for `{}` (table `{first}` measures it too)", table.hardware),
                    "one table per GPU: replace the older file, or give the other GPU its own hardware file",
                );
            }
        }
    }

    fn kernel_table(&mut self, file: &str, t: &KernelsFile) {
        if !self.ds.hardware.contains_key(&t.hardware) {
            self.err(
                file,
                "/hardware".into(),
                format!("unknown hardware `{}`", t.hardware),
                "name the data/hardware/<id>.json file whose GPU the table measured",
            );
        }
        let p = &t.provenance;
        for (field, value) in [
            ("gpu", &p.gpu),
            ("driver", &p.driver),
            ("cuda", &p.cuda),
            ("torch", &p.torch),
            ("date", &p.date),
            ("command", &p.command),
        ] {
            if value.trim().is_empty() {
                self.err(
                    file,
                    format!("/provenance/{field}"),
                    format!("empty provenance field `{field}`"),
                    "a table says which GPU and software measured it, when and how (scripts/collect-kernels.py)",
                );
            }
        }
        if t.gemm.is_empty() {
            self.err(
                file,
                "/gemm".into(),
                "no GEMM rows".into(),
                "a table times dense GEMMs at least (scripts/collect-kernels.py)",
            );
        }
        for (i, r) in t.gemm.iter().enumerate() {
            let at = format!("/gemm/{i}");
            self.positive(file, format!("{at}/n"), r.n, "n");
            self.positive(file, format!("{at}/k"), r.k, "k");
            self.sweep(file, &at, "m", &r.m, &r.seconds);
        }
        for (i, r) in t.grouped_gemm.iter().enumerate() {
            let at = format!("/grouped_gemm/{i}");
            self.positive(file, format!("{at}/experts"), r.experts, "experts");
            self.sweep(file, &at, "tokens_per_expert", &r.tokens_per_expert, &r.seconds);
        }
        for (i, r) in t.attention_prefill.iter().enumerate() {
            self.positive(file, format!("/attention_prefill/{i}/seconds"), r.seconds, "seconds");
        }
        for (i, r) in t.attention_decode.iter().enumerate() {
            self.positive(file, format!("/attention_decode/{i}/seconds"), r.seconds, "seconds");
        }
        for (i, r) in t.elementwise.iter().enumerate() {
            self.positive(file, format!("/elementwise/{i}/seconds"), r.seconds, "seconds");
        }
        if let Some(steps) = &t.steps {
            for (i, r) in steps.rows.iter().enumerate() {
                self.positive(file, format!("/steps/rows/{i}/seconds"), r.seconds, "seconds");
                if r.phase == StepPhase::Mixed {
                    for (field, v) in [("decode_seqs", r.decode_seqs), ("decode_context", r.decode_context)] {
                        match v {
                            Some(x) => {
                                self.positive(file, format!("/steps/rows/{i}/{field}"), x, field);
                            }
                            None => self.err(
                                file,
                                format!("/steps/rows/{i}/{field}"),
                                format!("a mixed pass without `{field}`"),
                                "a mixed pass states its decoding sequences and their context",
                            ),
                        }
                    }
                }
            }
        }
    }

    /// A sweep: as many times as sizes, sizes positive and strictly increasing, times positive.
    fn sweep(&mut self, file: &str, at: &str, size: &str, sizes: &[f64], seconds: &[f64]) {
        if sizes.len() != seconds.len() || sizes.is_empty() {
            self.err(
                file,
                format!("{at}/seconds"),
                format!("{} sizes in `{size}` but {} times in `seconds`", sizes.len(), seconds.len()),
                "one time per size, at least one",
            );
            return;
        }
        let increasing = |w: &[f64]| w[1].partial_cmp(&w[0]) == Some(std::cmp::Ordering::Greater);
        if !sizes.windows(2).all(increasing) || !sizes.iter().all(|s| s.is_finite() && *s > 0.0) {
            self.err(
                file,
                format!("{at}/{size}"),
                format!("`{size}` must be positive and strictly increasing"),
                "list each size once, smallest first",
            );
        }
        for (j, s) in seconds.iter().enumerate() {
            self.positive(file, format!("{at}/seconds/{j}"), *s, "seconds");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::dataset::{load, SourceText};

    /// Two tables naming one GPU: the second is refused (the model would read only one of them).
    #[test]
    fn a_second_table_for_one_gpu_is_refused() {
        let table = include_str!("../../../../data/kernels/h100-sxm.json");
        let files: Vec<SourceText> = [
            ("sources.json", include_str!("../../../../data/sources.json").to_string()),
            ("hardware/h100-sxm.json", include_str!("../../../../data/hardware/h100-sxm.json").to_string()),
            ("kernels/h100-sxm.json", table.to_string()),
            ("kernels/mine.json", table.replace("\"id\": \"h100-sxm\"", "\"id\": \"mine\"")),
        ]
        .into_iter()
        .map(|(path, text)| SourceText { path: path.into(), text })
        .collect();
        let (ds, diags) = load(&files);
        assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
        let errors = super::super::check(&ds, None);
        let second: Vec<_> = errors.iter().filter(|d| d.message.contains("a second kernel table")).collect();
        assert_eq!(second.len(), 1, "{errors:?}");
        assert_eq!(second[0].file, "kernels/mine.json");
    }
}
