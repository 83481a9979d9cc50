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
//! What still differs, by design of each tool (measured: -3.3% to +5.7%, sim-core against inference-lab):
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
//! Run with `cargo test -p twotower-tests --test crosscheck -- --nocapture` to see the table.

use inference_lab::config::Config;
use inference_lab::simulation::Simulator;
use sim_core::describe::ModelDescription;
use sim_core::model::bandwidth::place;
use sim_core::model::{predict, Coefficients};
use sim_core::scenario::{HardwareSpec, LinkParams, ModelSpec, Scenario};
use sim_core::Mode;

const HBM_BYTES: f64 = 80e9;
const HBM_BW: f64 = 3.35e12;
const BF16_FLOPS: f64 = 989.5e12;

/// One model described once, handed to both tools.
struct Case {
    id: &'static str,
    layers: u32,
    hidden: u32,
    heads: u32,
    kv_heads: u32,
    head_dim: u32,
    total_params: f64,
    active_params: f64,
    /// (routed experts, experts per token, MoE layers) for a MoE.
    routing: Option<(u32, u32, u32)>,
}

const DENSE: Case = Case {
    id: "dense-8b",
    layers: 32,
    hidden: 4096,
    heads: 32,
    kv_heads: 8,
    head_dim: 128,
    total_params: 8.03e9,
    active_params: 8.03e9,
    routing: None,
};

const MOE: Case = Case {
    id: "moe-30b-a3b",
    layers: 48,
    hidden: 2048,
    heads: 32,
    kv_heads: 4,
    head_dim: 64,
    total_params: 30.5e9,
    active_params: 3.34e9,
    routing: Some((128, 8, 48)),
};

fn sim_core_scenario(c: &Case) -> Scenario {
    let hardware = HardwareSpec {
        id: "h100-like".into(),
        name: "H100-like".into(),
        gpus: 1.0,
        gpu_memory_bytes: HBM_BYTES,
        hbm_bytes_per_sec: HBM_BW,
        cpu_memory_bytes: 1e12,
        slow_path_bytes_per_sec: 64e9,
        flops_fp4: BF16_FLOPS,
        flops_fp8: BF16_FLOPS,
        flops_bf16: BF16_FLOPS,
        intra_bytes_per_sec: f64::INFINITY,
        intra_call_latency_s: 0.0,
        link: LinkParams {
            rails: 1.0,
            line_rate_bytes_per_sec_per_rail: 50e9,
            payload_efficiency: 0.9,
            call_latency_s: 20e-6,
        },
    };
    let (routed_experts, experts_per_token) = c.routing.map_or((0.0, 0.0), |(e, k, _)| (f64::from(e), f64::from(k)));
    let description = ModelDescription {
        id: c.id.into(),
        name: None,
        total_params: c.total_params,
        active_params: c.active_params,
        layers: f64::from(c.layers),
        hidden_size: f64::from(c.hidden),
        attention: "gqa".into(),
        kv_heads: Some(f64::from(c.kv_heads)),
        head_dim: Some(f64::from(c.head_dim)),
        kv_lora_rank: None,
        rope_dim: None,
        kv_bytes_per_element: 2.0,
        routed_experts,
        experts_per_token,
        routed_expert_params: None,
        bits_per_weight: 16.0,
        draft_tokens: 0.0,
        draft_acceptance: 0.7,
        attention_heads: None,
        sliding_window: None,
        sliding_window_layers: None,
        sparse_top_k: None,
        indexer_heads: None,
        indexer_head_dim: None,
    };
    let model: ModelSpec = description.to_spec().expect("valid description");
    // Everything in HBM: the cross-check is about the roofline, not sim-core's weight spill.
    let placement = place(&model, &hardware, 1.0, &roofline_coefficients());
    assert!(placement.fits && placement.spilled_bytes() == 0.0, "{}: weights spill in sim-core", c.id);
    Scenario {
        id: c.id.into(),
        engine: "ideal".into(),
        hardware,
        model,
        workloads: vec![],
        concurrency: vec![],
        modes: vec![Mode::Single],
    }
}

fn roofline_coefficients() -> Coefficients {
    Coefficients {
        hbm_efficiency: 1.0,
        slow_efficiency: 1.0,
        compute_efficiency: 1.0,
        step_overhead_s: 0.0,
        per_seq_overhead_s: 0.0,
        draft_pass_overhead_s: 0.0,
        ..Default::default()
    }
}

fn inference_lab_config(c: &Case, isl: u32, osl: u32, users: u32, requests: u32) -> Config {
    let routing = match c.routing {
        Some((e, k, l)) => serde_json::json!({"routed_experts": e, "experts_per_tok": k, "moe_layers": l}),
        None => serde_json::Value::Null,
    };
    let mut weights = serde_json::json!({
        "precision": "bf16",
        "active_params": c.active_params as u64,
        "resident_params": c.total_params as u64,
    });
    if !routing.is_null() {
        weights["routing"] = routing;
    }
    let json = serde_json::json!({
        "hardware": {
            "name": "H100-like",
            "flops_bf16": BF16_FLOPS,
            "memory_bandwidth": HBM_BW,
            "memory_capacity": HBM_BYTES as u64,
        },
        "model": {
            "name": c.id,
            "hidden_dim": c.hidden,
            "max_seq_len": 32768,
            "attention_precision": "bf16",
            "weights": [weights],
            "layers": [{
                "kind": "attention",
                "count": c.layers,
                "heads": c.heads,
                "head_dim": c.head_dim,
                "kv_heads": c.kv_heads,
                "kv_precision": "bf16",
            }],
        },
        "scheduler": {
            "max_num_batched_tokens": 8192,
            "max_num_seqs": 256,
            "policy": "fcfs",
            "enable_chunked_prefill": true,
            "block_size": 16,
        },
        "workload": {
            "arrival_pattern": "closed_loop",
            "num_concurrent_users": users,
            "num_requests": requests,
            "input_len_dist": {"type": "fixed", "value": isl},
            "output_len_dist": {"type": "fixed", "value": osl},
            "seed": 1,
        },
    });
    let mut config: Config = serde_json::from_value(json).expect("inference-lab config");
    config.finalize();
    config
}

fn inference_lab_tok_s(c: &Case, isl: u32, osl: u32, users: u32) -> f64 {
    let config = inference_lab_config(c, isl, osl, users, users * 20);
    let mut sim = Simulator::new(config, None).expect("simulator");
    sim.run_with_callback(|_| {}).expect("run");
    let summary = sim.summary();
    // No request was preempted: the KV cache held every client, as it does in sim-core.
    assert_eq!(summary.preemptions.total, 0, "{}: inference-lab preempted requests", c.id);
    summary.throughput_metrics.output_tokens_per_sec
}

/// Points further apart than this fail (see the module doc for why 10%).
const TOLERANCE: f64 = 0.10;
/// Dense model at one client: the two step formulas coincide, so they must agree this closely.
const TOLERANCE_EXACT: f64 = 0.01;

#[test]
fn sim_core_agrees_with_inference_lab_on_one_gpu() {
    let k = roofline_coefficients();
    println!(
        "{:<12} {:>9} {:>5} {:>15} {:>15} {:>7}",
        "model", "isl/osl", "conc", "sim-core tok/s", "inf-lab tok/s", "ratio"
    );
    let mut failures = Vec::new();
    for case in [&DENSE, &MOE] {
        let s = sim_core_scenario(case);
        for (isl, osl) in [(512, 512), (2048, 256)] {
            for conc in [1, 8, 32] {
                let p = predict(&s, &k, Mode::Single, isl, osl, conc);
                let ours = p.output_tok_s;
                let theirs = inference_lab_tok_s(case, isl, osl, conc);
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
                let tol = if case.routing.is_none() && conc == 1 { TOLERANCE_EXACT } else { TOLERANCE };
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
    }
    assert!(failures.is_empty(), "sim-core and inference-lab disagree:\n{}", failures.join("\n"));
}
