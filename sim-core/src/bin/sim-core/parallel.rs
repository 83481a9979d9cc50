//! Runs the fits behind `report` and `validate` on every core the machine gives: each case of the accuracy
//! protocol and each of the report's fits is its own, independent of the others, and the workspace keeps what it
//! computes (`Workspace::protocol_where`, `Workspace::accuracy`), so the commands then read the same rows they
//! would have computed one after another. The library stays single-threaded (it also runs in the browser).

use sim_core::explore::{Question, Workspace};
use sim_core::fit::FitSet;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One independent fit.
enum Job {
    /// The report's fit over a set of points, and its predictions.
    Report(FitSet),
    /// One case of the protocol.
    Case(String, Question),
}

/// Computes the report's fits over `reports` and every case of the protocol on up to as many threads as the
/// machine has cores; on one core it does nothing (each is then computed when first asked, as before).
pub fn precompute(ws: &Workspace, reports: &[FitSet]) {
    if !ws.is_valid() {
        return;
    }
    // Longest first, so that no long fit starts last: a dataset left out is fitted on all the others.
    let cases = ws.protocol_cases();
    let left_out = cases.iter().filter(|(_, q)| *q == Question::LeaveOneOut);
    let own = cases.iter().filter(|(_, q)| *q != Question::LeaveOneOut);
    let jobs: Vec<Job> = left_out
        .map(|(d, q)| Job::Case(d.clone(), *q))
        .chain(reports.iter().map(|set| Job::Report(*set)))
        .chain(own.map(|(d, q)| Job::Case(d.clone(), *q)))
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(jobs.len());
    if threads <= 1 {
        return;
    }
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    match job {
                        Job::Report(set) => {
                            ws.accuracy(*set);
                        }
                        Job::Case(dataset, question) => {
                            ws.protocol_where(&|d, q| d == dataset && q == *question);
                        }
                    }
                }
            });
        }
    });
}
