//! Cross-check of sim-core against inference-lab 1.0 (crates.io), a peer simulator, on cases both model alike.
//!
//! Case: one H100-like GPU (80 GB, 3.35 TB/s, 989.5 TFLOPS dense BF16), a model that sits entirely in HBM, no
//! speculative decoding, a closed loop of C clients with fixed ISL/OSL (512/512 and 2048/256) at C = 1, 8, 32.
//! Models: a dense GQA model shaped like Llama-3.1-8B (BF16) and a MoE shaped like Qwen3-30B-A3B (BF16, 128
//! routed experts, 8 per token, 48 MoE layers), each given to both tools with the same geometry.
//!
//! Like with like: inference-lab prices every step at the datasheet roofline with no overhead (an upper bound
//! by design, no `time_correction` set), so sim-core runs here with efficiencies 1 and overheads 0. sim-core
//! computes the BF16 models at `flops_bf16`, set to the BF16 peak (the FP4 and FP8 slots too, unused here). Both then time a step as max(bytes / bandwidth, FLOPs / peak) over weights, KV reads and attention.
//!
//! What still differs, by design of each tool (measured: -1.9% to +0.3%, sim-core against inference-lab, since
//! sim-core's loop chunks prompts first come first served as inference-lab's scheduler does; -3.3% to +5.7%
//! before, and the first item below describes that earlier closed form):
//! - Where prefill goes. sim-core solves the steady state: prompt chunks spread evenly over the steps and share
//!   them with the decodes, so each chunk's FLOPs hide one decode step's reads under one roofline max.
//!   inference-lab simulates the scheduler step by step: with fixed ISL/OSL and no jitter every client finishes
//!   together, so the prompts prefill together in steps of their own and their time adds to the decode time.
//!   On the dense model that makes sim-core faster by at most (prompts per round x one decode step's read
//!   time) / round time: 6.0% at 512/512 and 8.6% at 2048/256 with 32 clients, measured +5.1% and +5.7%.
//!   (With 0.5 s of closed-loop jitter the clients drift apart and the gaps shrink to +1.5% and +5.0%.)
//!   Neither is wrong; sim-core describes a loop whose clients have desynchronised.
//! - Experts a step reads (MoE). sim-core routes each token to k different experts, E(1 - (1 - k/E)^T);
//!   inference-lab draws T*k experts with replacement, E(1 - (1 - 1/E)^(T*k)), which touches slightly fewer
//!   (at T = 1: 8 of 128 against 7.78), so sim-core reads ~2% more and is ~1.4% slower at one client. And
//!   every spread-out prompt chunk of 512 tokens or more touches nearly all experts, where inference-lab's
//!   batched prefill reads them once for many prompts: sim-core down to -3.3% at 8 clients.
//!
//! Checks: every point within 10% (the differences above reach 5.7%, and the prefill one is bounded by 8.6% on
//! these cases); 10% still catches a real modelling slip: reading the KV twice costs 14% to 36% at 32
//! clients, a default efficiency left in (0.8 of HBM bandwidth) 25%. At one client on the dense model neither
//! difference applies (the prompt is one step in both, no routing), so there the two must agree within 1%.
//!
//! The cases, these bounds and how each tool runs a point live in `peer_cases.rs`, shared with the bench that
//! times both tools on the same sweeps (`cargo bench -p twotower-tests --bench peer`).
//!
//! Past the KV pool's edge (`sim_core_agrees_with_inference_lab_past_the_kv_edge`): both tools' pools set to
//! sim-core's, long prompts or long outputs at 1.1 to 3.6 times the requests the pool holds, where both preempt
//! the newest request and recompute it. inference-lab's synthetic prompts never hit its prefix cache (0 hits
//! measured), so a preempted request recomputes its whole context there; sim-core by default keeps what the
//! prefix cache still holds of it, as vLLM V1 does (`Coefficients::prefix_caching`). Run without that, sim-core
//! preempts as often as inference-lab (0.09-0.79 against 0.11-0.77 per request) and lands within 0.1-6.2% of its
//! throughput (measured 2026-12-03, after the loop counted its window's tokens and preemptions: -6.2% at dense
//! 8192/1024 and 64 clients; before, -9% at the onset, dense 2048/2048 at 128 clients); with it, sim-core
//! preempts 3-4x less and runs 5-14% faster at 8192/1024 (measured 2026-12-01): the one difference by design.
//! Bounds: throughput within 10%, preemptions per request within 0.1.
//!
//! Run with `cargo test -p twotower-tests --test crosscheck -- --nocapture` to see the table.

mod peer_cases;

use peer_cases::{
    inference_lab_config, inference_lab_config_with_pool, inference_lab_point, inference_lab_run,
    roofline_coefficients, sim_core_point, sim_core_scenario, CASES,
};

#[test]
fn sim_core_agrees_with_inference_lab_on_one_gpu() {
    let k = roofline_coefficients();
    println!(
        "{:<12} {:>9} {:>5} {:>15} {:>15} {:>7}",
        "model", "isl/osl", "conc", "sim-core tok/s", "inf-lab tok/s", "ratio"
    );
    let mut failures = Vec::new();
    for case in CASES {
        let s = sim_core_scenario(case);
        for point in case.points() {
            let (isl, osl, conc) = (point.isl, point.osl, point.conc);
            let p = sim_core_point(&s, &k, point);
            let ours = p.output_tok_s;
            let theirs = inference_lab_point(case, inference_lab_config(case, point));
            let ratio = ours / theirs;
            println!(
                "{:<12} {:>9} {:>5} {:>15.1} {:>15.1} {:>7.3}",
                case.id,
                format!("{isl}/{osl}"),
                conc,
                ours,
                theirs,
                ratio
            );
            assert!(
                ours.is_finite() && ours > 0.0 && theirs.is_finite() && theirs > 0.0,
                "{case_id}: no throughput",
                case_id = case.id
            );
            // The case must be the one both tools model alike: everything in HBM, no KV-capacity limit.
            assert!(
                p.max_resident_seqs >= f64::from(conc) && p.preemptions_per_request == 0.0,
                "{}: sim-core limits residency ({:?})",
                case.id,
                p.bottleneck
            );
            let tol = case.tolerance(point);
            if (ratio - 1.0).abs() > tol {
                failures.push(format!(
                    "{} {isl}/{osl} at {conc}: sim-core {ours:.1} vs inference-lab {theirs:.1} tok/s ({:+.1}%, \
                         tolerance {:.0}%)",
                    case.id,
                    (ratio - 1.0) * 100.0,
                    tol * 100.0
                ));
            }
        }
    }
    assert!(failures.is_empty(), "sim-core and inference-lab disagree:\n{}", failures.join("\n"));
}

#[test]
fn sim_core_agrees_with_inference_lab_past_the_kv_edge() {
    // Like with like: the same pool in both, and a preemption recomputes the whole context in both.
    let k = sim_core::model::Coefficients { prefix_caching: false, ..roofline_coefficients() };
    println!(
        "{:<12} {:>9} {:>5} {:>15} {:>15} {:>7} {:>14} {:>14}",
        "model", "isl/osl", "conc", "sim-core tok/s", "inf-lab tok/s", "ratio", "sim-core pre", "inf-lab pre"
    );
    let mut failures = Vec::new();
    for case in CASES {
        let s = sim_core_scenario(case);
        let pool = sim_core::model::bandwidth::place(&s.model, &s.hardware, 1.0, &k).kv_pool_bytes;
        for point in case.edge_points() {
            let p = sim_core_point(&s, &k, point);
            let (theirs, their_preemptions) = inference_lab_run(inference_lab_config_with_pool(case, point, pool));
            let (ours, our_preemptions) = (p.output_tok_s, p.preemptions_per_request);
            let ratio = ours / theirs;
            println!(
                "{:<12} {:>9} {:>5} {:>15.1} {:>15.1} {:>7.3} {:>14.2} {:>14.2}",
                case.id,
                format!("{}/{}", point.isl, point.osl),
                point.conc,
                ours,
                theirs,
                ratio,
                our_preemptions,
                their_preemptions
            );
            // Past the edge in both: the point must be one where requests are preempted.
            assert!(our_preemptions > 0.0 && their_preemptions > 0.0, "{}: not past the KV edge", case.id);
            if (ratio - 1.0).abs() > 0.10 || (our_preemptions - their_preemptions).abs() > 0.10 {
                failures.push(format!(
                    "{} {}/{} at {}: sim-core {ours:.1} tok/s, {our_preemptions:.2} preemptions per request; \
                     inference-lab {theirs:.1}, {their_preemptions:.2}",
                    case.id, point.isl, point.osl, point.conc
                ));
            }
        }
    }
    assert!(failures.is_empty(), "sim-core and inference-lab disagree past the KV edge:\n{}", failures.join("\n"));
}
