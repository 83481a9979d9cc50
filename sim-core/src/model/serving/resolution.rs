//! How finely a closed loop is resolved: cohorts, rounds measured, and the lockstep switch.

/// How finely a closed loop is resolved: the cohorts its clients are pooled into, and the rounds of requests (each
/// client's one request) its window measures after the warm-up round.
///
/// A sweep's resolution is checked against `REFERENCE` (`tests/physics.rs`). The window's throughput is the tokens
/// produced in it, not the requests completed in it times OSL: completions arrive in waves as long as the window, so
/// a count of them jumps by a wave. What is left below the engine's edge is the cohorts' pooling (several clients a
/// cohort), which more rounds do not change.
///
/// At the edge a round's rate swings (KV pressure admits requests that collide later, and the collisions come in
/// waves), so three rounds alone can read a tenth off the reference: the window runs on while the standard error of
/// its rate over its rounds is above `rate_error_at_the_edge` of it, up to `most_rounds_at_the_edge`. Most swings
/// are the window's, not a start-up's: more warm-up does not narrow them, and stopping when one more round moves the
/// rate little stops where consecutive rounds agree by chance. But the clients start together, and at the edge the
/// first rounds after the warm-up can run in a regime of their own (admitted requests in lockstep waves) whose
/// rounds agree with each other: Llama-3.3-70B on two H100 under TP2, 2048/256 at 357 clients, read three rounds
/// at 1649 tok/s against 1516 over 30; on one machine at 225 clients with 25% more memory, three at 726 against 804.
/// Five rounds at least at the edge outlast it there (1558 and 782, the window then running on to nine), though
/// not everywhere: at 159 clients with 3% more memory five rounds read 720 against 780 over 30 (docs/notes.md).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resolution {
    /// Clients are pooled into at most this many cohorts: enough that prompt arrivals spread over a round like
    /// independent clients', few enough that a sweep stays far below the page's redraw budget.
    pub max_cohorts: usize,
    /// Rounds of requests measured after the warm-up round.
    pub rounds: f64,
    /// Rounds measured at least at the engine's edge (preempting, or more clients than the KV pool or the sequence
    /// cap holds), where requests complete in waves a round or so long and the rate swings from round to round.
    pub rounds_at_the_edge: f64,
    /// Rounds measured at most at the edge: past `rounds_at_the_edge` the window runs on, round by round, until
    /// the standard error of its rate over its rounds is at most `rate_error_at_the_edge` of the rate.
    pub most_rounds_at_the_edge: f64,
    pub rate_error_at_the_edge: f64,
    /// Whether decoding cohorts step together (`Lockstep`): the same loop in fewer instructions. Off, every
    /// cohort is visited every step, the reference the lockstep is checked against (`tests/physics.rs`).
    pub lockstep: bool,
}

impl Resolution {
    /// What every prediction runs.
    pub const SWEEP: Resolution = Resolution {
        max_cohorts: 32,
        rounds: 2.0,
        rounds_at_the_edge: 5.0,
        most_rounds_at_the_edge: 9.0,
        rate_error_at_the_edge: 0.01,
        lockstep: true,
    };
    /// A long run with a cohort per client up to 256: the measure a sweep's resolution is checked against (30
    /// rounds agree with 60 within 1% at every point above).
    pub const REFERENCE: Resolution = Resolution {
        max_cohorts: 256,
        rounds: 30.0,
        rounds_at_the_edge: 30.0,
        most_rounds_at_the_edge: 30.0,
        rate_error_at_the_edge: 0.0,
        lockstep: true,
    };
}

#[cfg(test)]
mod tests {
    use super::Resolution;

    /// `Tally::measured_enough` reads the rounds in this order: the edge measures at least what a point below it
    /// does, and runs on only up to its ceiling.
    #[test]
    fn the_edge_measures_at_least_what_a_point_below_it_does() {
        for res in [Resolution::SWEEP, Resolution::REFERENCE] {
            assert!(res.rounds >= 1.0, "{res:?}");
            assert!(res.rounds <= res.rounds_at_the_edge, "{res:?}");
            assert!(res.rounds_at_the_edge <= res.most_rounds_at_the_edge, "{res:?}");
            assert!(res.rate_error_at_the_edge >= 0.0, "{res:?}");
            assert!(res.max_cohorts >= 1, "{res:?}");
        }
    }

    /// The reference is what a sweep is checked against: at least as fine in every respect.
    #[test]
    fn the_reference_is_at_least_as_fine_as_a_sweep() {
        let (s, r) = (Resolution::SWEEP, Resolution::REFERENCE);
        assert!(r.max_cohorts >= s.max_cohorts);
        assert!(r.rounds >= s.rounds && r.rounds_at_the_edge >= s.rounds_at_the_edge);
        assert!(r.most_rounds_at_the_edge >= s.most_rounds_at_the_edge);
        assert!(r.rate_error_at_the_edge <= s.rate_error_at_the_edge);
    }
}
