//! A kernel table a user measured on their own GPU (`scripts/collect-kernels.py`), laid over a loaded dataset in
//! place of the dataset's table of that GPU: what `plan`, `predict` and `calibrate` predict with when given
//! `--kernels`, without editing the dataset.

use super::Workspace;
use crate::dataset::{load, SourceText};
use crate::diagnostic::Diagnostic;
use crate::position::PositionIndex;

impl Workspace {
    /// Lays the kernel table `table` (a `kind: kernels` file's text; diagnostics name it by `table.path`) over
    /// this workspace's dataset. It is checked as `validate` checks a file of the dataset (its `hardware` must be
    /// one of the dataset's machines), then replaces every table measured on the same GPU or of the same id;
    /// every scenario resolved from then on takes its curves. Returns the ids of the tables it replaced.
    pub fn use_kernel_table(&mut self, table: &SourceText) -> Result<Vec<String>, Vec<Diagnostic>> {
        let (alone, diags) = load(std::slice::from_ref(table));
        let errors: Vec<Diagnostic> = diags.into_iter().filter(Diagnostic::is_error).collect();
        if !errors.is_empty() {
            return Err(errors);
        }
        let Some(new) = alone.kernels.into_values().next() else {
            let d = Diagnostic::error(&table.path, "/kind", "not a kernel table")
                .with_hint("pass the file `scripts/collect-kernels.py --out` wrote (`\"kind\": \"kernels\"`)");
            return Err(vec![match PositionIndex::build(&table.text).locate("/kind") {
                Some((line, column)) => d.at(line, column),
                None => d,
            }]);
        };
        let replaced: Vec<String> = self
            .dataset
            .kernels
            .iter()
            .filter(|(id, t)| **id == new.id || t.hardware == new.hardware)
            .map(|(id, _)| id.clone())
            .collect();
        let replaced_paths: Vec<&String> =
            replaced.iter().filter_map(|id| self.dataset.paths.get(&("kernels".to_string(), id.clone()))).collect();
        // The dataset as it would be with the table in place of those it replaces, checked whole.
        let mut files: Vec<SourceText> =
            self.dataset.source_texts().filter(|f| !replaced_paths.contains(&&f.path)).collect();
        files.push(table.clone());
        let checked = Workspace::load(&files, None);
        if !checked.is_valid() {
            return Err(checked.errors());
        }
        for id in &replaced {
            self.dataset.kernels.remove(id);
            self.dataset.paths.remove(&("kernels".to_string(), id.clone()));
        }
        self.dataset.paths.insert(("kernels".to_string(), new.id.clone()), table.path.clone());
        self.dataset.kernels.insert(new.id.clone(), new);
        Ok(replaced)
    }
}
