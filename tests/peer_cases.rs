//! The peer cross-check's cases and how each tool runs one point, shared by `crosscheck.rs` (do sim-core and
//! inference-lab 1.0 agree) and `benches/peer.rs` (how fast is each): one table, so the speed measured is the
//! speed on exactly the points whose agreement the test bounds.
//!
//! Each case is one model described once and handed to both tools on one H100-like GPU (80 GB, 3.35 TB/s,
//! 989.5 TFLOPS dense BF16); its sweep is the closed loop at every (ISL, OSL) of `WORKLOADS` and every client
//! count of `CONCURRENCY`. Why these cases and why these bounds: see `crosscheck.rs`.

use inference_lab::config::Config;
use inference_lab::simulation::Simulator;
use sim_core::describe::ModelDescription;
use sim_core::model::bandwidth::place;
use sim_core::model::{predict, Coefficients, Prediction};
use sim_core::scenario::{AllReduceCurve, HardwareSpec, LinkParams, ModelSpec, Scenario};
use sim_core::Mode;

const HBM_BYTES: f64 = 80e9;
const HBM_BW: f64 = 3.35e12;
const BF16_FLOPS: f64 = 989.5e12;

/// One model described once, handed to both tools.
pub struct Case {
    pub id: &'static str,
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

/// A dense GQA model shaped like Llama-3.1-8B (BF16).
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

/// A MoE shaped like Qwen3-30B-A3B (BF16, 128 routed experts, 8 per token, 48 MoE layers).
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

/// Every case, in the order the test and the bench report them.
pub const CASES: [&Case; 2] = [&DENSE, &MOE];

/// Fixed (ISL, OSL) of the closed loop.
const WORKLOADS: [(u32, u32); 2] = [(512, 512), (2048, 256)];
/// Closed-loop client counts.
const CONCURRENCY: [u32; 3] = [1, 8, 32];

/// Past the KV pool's edge: long prompts at 1.3 to 3.6 times the requests the pool holds (8192/1024: the pool
/// holds ~50 on the dense case, ~36 on the MoE) and long outputs at 1.1 to 2.4 times (2048/2048: ~114 and
/// ~81), where both tools preempt by recompute.
const EDGE_POINTS: [Point; 4] = [
    Point { isl: 8192, osl: 1024, conc: 64 },
    Point { isl: 8192, osl: 1024, conc: 128 },
    Point { isl: 2048, osl: 2048, conc: 128 },
    Point { isl: 2048, osl: 2048, conc: 192 },
];

/// Points further apart than this fail (see `crosscheck.rs` for why 10%).
const TOLERANCE: f64 = 0.10;
/// Dense model at one client: the two step formulas coincide, so they must agree this closely.
const TOLERANCE_EXACT: f64 = 0.01;

/// One closed-loop point of a case's sweep.
#[derive(Clone, Copy)]
pub struct Point {
    pub isl: u32,
    pub osl: u32,
    pub conc: u32,
}

impl Case {
    /// The case's sweep: every workload at every client count (6 points; 12 over both cases).
    pub fn points(&self) -> Vec<Point> {
        WORKLOADS.iter().flat_map(|&(isl, osl)| CONCURRENCY.iter().map(move |&conc| Point { isl, osl, conc })).collect()
    }

    /// The case's points past the KV pool's edge (`EDGE_POINTS`).
    pub fn edge_points(&self) -> Vec<Point> {
        EDGE_POINTS.to_vec()
    }

    /// How far apart (as a fraction) the two tools may be at `p`.
    pub fn tolerance(&self, p: Point) -> f64 {
        if self.routing.is_none() && p.conc == 1 {
            TOLERANCE_EXACT
        } else {
            TOLERANCE
        }
    }
}

/// sim-core's scenario for a case; checks the weights sit entirely in HBM, as they do in inference-lab.
pub fn sim_core_scenario(c: &Case) -> Scenario {
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
        // The peer charges no collective latency inside a machine.
        intra_call_latency_s: Some(0.0),
        intra_fabric: sim_core::spec::IntraMachineFabric::Nvlink,
        sparse_attention_head_tile: 0.0,
        // The peer runs every GEMM at its roofline: no kernel table.
        gemm: Default::default(),
        link: LinkParams {
            rails: 1.0,
            line_rate_bytes_per_sec_per_rail: 50e9,
            payload_efficiency: 0.9,
            call_latency_s: 20e-6,
            all_reduce: AllReduceCurve::default(),
            // No control message: the peer has none.
            transport: sim_core::spec::TransportKind::Rdma,
            round_trip_s: 0.0,
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
        vocab_size: None,
        input_embedding_params: None,
        attention: "gqa".into(),
        kv_heads: Some(f64::from(c.kv_heads)),
        head_dim: Some(f64::from(c.head_dim)),
        kv_lora_rank: None,
        rope_dim: None,
        qk_nope_head_dim: None,
        v_head_dim: None,
        kv_bytes_per_element: 2.0,
        routed_experts,
        experts_per_token,
        routed_expert_params: None,
        bits_per_weight: 16.0,
        dense_bits_per_weight: None,
        draft_tokens: 0.0,
        draft_attention_layers: None,
        mtp_routed_expert_params: None,
        mtp_dense_params: None,
        draft_acceptance: 0.7,
        attention_heads: None,
        sliding_window: None,
        sliding_window_layers: None,
        window_kv_heads: None,
        window_head_dim: None,
        sparse_top_k: None,
        indexer_heads: None,
        indexer_head_dim: None,
        linear_attention_layers: None,
        linear_state_bytes: None,
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
        load: Default::default(),
        router: Default::default(),
        server: Default::default(),
    }
}

/// sim-core at the datasheet roofline: inference-lab prices every step there with no overhead.
pub fn roofline_coefficients() -> Coefficients {
    Coefficients {
        hbm_efficiency: 1.0,
        slow_efficiency: 1.0,
        compute_efficiency: 1.0,
        step_overhead_s: 0.0,
        per_seq_overhead_s: 0.0,
        per_layer_overhead_s: 0.0,
        // inference-lab's requests reach its scheduler when sent: no API server, tokenizer or stream between.
        request_overhead_s: 0.0,
        // The batch limits inference-lab's scheduler is given below (`max_num_batched_tokens`, `max_num_seqs`).
        prefill_chunk_tokens: 8192.0,
        max_num_seqs: 256.0,
        ..Default::default()
    }
}

/// Runs one point in sim-core.
pub fn sim_core_point(s: &Scenario, k: &Coefficients, p: Point) -> Prediction {
    predict(s, k, Mode::Single, p.isl, p.osl, p.conc)
}

/// inference-lab's configuration for one point of a case: 20 requests per client, so the closed loop runs many
/// rounds and its steady state dominates the measured throughput.
pub fn inference_lab_config(c: &Case, p: Point) -> Config {
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
            "num_concurrent_users": p.conc,
            "num_requests": p.conc * 20,
            "input_len_dist": {"type": "fixed", "value": p.isl},
            "output_len_dist": {"type": "fixed", "value": p.osl},
            "seed": 1,
        },
    });
    let mut config: Config = serde_json::from_value(json).expect("inference-lab config");
    config.finalize();
    config
}

/// `inference_lab_config` with inference-lab's KV pool set to `pool_bytes` (sim-core's pool for the case), so
/// both tools run out of blocks at the same number of requests.
pub fn inference_lab_config_with_pool(c: &Case, p: Point, pool_bytes: f64) -> Config {
    let mut config = inference_lab_config(c, p);
    config.scheduler.kv_cache_capacity = pool_bytes as u64;
    config.finalize();
    config
}

/// Runs one point in inference-lab: (output tokens per second, preemptions per completed request).
pub fn inference_lab_run(config: Config) -> (f64, f64) {
    let mut sim = Simulator::new(config, None).expect("simulator");
    sim.run_with_callback(|_| {}).expect("run");
    let summary = sim.summary();
    let per_request = summary.preemptions.total as f64 / summary.requests.completed.max(1) as f64;
    (summary.throughput_metrics.output_tokens_per_sec, per_request)
}

/// Runs one point in inference-lab (a configuration from `inference_lab_config`): output tokens per second.
pub fn inference_lab_point(c: &Case, config: Config) -> f64 {
    let (tok_s, preemptions) = inference_lab_run(config);
    // No request was preempted: the KV cache held every client, as it does in sim-core.
    assert_eq!(preemptions, 0.0, "{}: inference-lab preempted requests", c.id);
    tok_s
}
