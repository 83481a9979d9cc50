//! Placement, reads and the step roofline on a 100 GB MoE model: what each rule of `bandwidth` promises.

use super::*;
use crate::spec::HostPin;

/// A 100 GB MoE model (80 GB of routed experts over 64 experts, top-4; 1 GB input embedding, 40 layers) on a
/// GPU with `hbm` GB.
fn case(hbm: f64) -> (ModelSpec, HardwareSpec) {
    let model = ModelSpec {
        routed_expert_bytes: 80e9,
        routed_experts: 64.0,
        experts_per_token: 4.0,
        compute_bits: 8.0,
        dense_compute_bits: 8.0,
        // None given: the experts store at their compute width.
        routed_expert_bits: 0.0,
        input_embedding_bytes: 1e9,
        ..ModelSpec::dense_for_tests(100e9, 10e9, 40.0, 4096.0, 100e3)
    };
    let hw = HardwareSpec::one_gpu_for_tests(hbm * 1e9, 4e12);
    (model, hw)
}

fn pinned(mut m: ModelSpec, pin: HostPin) -> ModelSpec {
    m.host_pin = pin;
    m
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

/// One GPU's engine for `m` on `hw`, without links and drafts.
fn lone_engine<'a>(m: &'a ModelSpec, hw: &'a HardwareSpec, k: &'a Coefficients) -> crate::model::batching::Engine<'a> {
    crate::model::batching::Engine {
        model: m,
        hw,
        k,
        placement: place(m, hw, 1.0, k),
        allreduce: crate::model::fabric::AllReduceCost::Free,
        allreduce_measured: None,
        acceptance: 0.0,
        spilled_routing_share: 1.0,
        attention_padding: 1.0,
        limits: k.batch_limits(hw),
        span: Default::default(),
    }
}

#[test]
fn sparse_mla_heads_pad_to_the_gpus_tile_and_attention_runs_at_its_kernels_rate() {
    use crate::model::batching::{StepLoad, ATTENTION_KERNEL_EFFICIENCY};
    let (mut m, hw) = case(200.0);
    // No sparse-MLA heads, or no tile: nothing is padded.
    assert_eq!(m.attention_head_padding(128.0, 2.0), 1.0);
    m.attention.sparse_mla_heads = 64.0;
    assert_eq!(m.attention_head_padding(0.0, 2.0), 1.0);
    // 64 heads on one Blackwell GPU compute as 128; split over two ranks, 32 each compute as 128; on Hopper
    // (64) one GPU is whole and two ranks compute 64 each; 256 heads on one GPU fill two tiles exactly.
    assert_eq!(m.attention_head_padding(128.0, 1.0), 2.0);
    assert_eq!(m.attention_head_padding(128.0, 2.0), 4.0);
    assert_eq!(m.attention_head_padding(64.0, 1.0), 1.0);
    assert_eq!(m.attention_head_padding(64.0, 2.0), 2.0);
    m.attention.sparse_mla_heads = 256.0;
    assert_eq!(m.attention_head_padding(128.0, 1.0), 1.0);
    // A step's attention FLOPs take the kernels' share of the BF16 peak times the padding, apart from the
    // GEMM efficiency: 1 PFLOP of attention on a 1 PFLOPS GPU padded twice takes 2 / 0.65 s.
    let k = Coefficients::default();
    let mut e = lone_engine(&m, &hw, &k);
    e.attention_padding = 2.0;
    let load = StepLoad { attention_flops: 1e15, ..StepLoad::default() };
    let t = e.step(&load).compute_s;
    assert!(close(t, 2.0 / ATTENTION_KERNEL_EFFICIENCY), "{t}");
}

#[test]
fn every_tensor_parallel_rank_scores_with_the_whole_sparse_indexer() {
    use crate::model::batching::{StepLoad, ATTENTION_KERNEL_EFFICIENCY};
    let (mut m, hw) = case(200.0);
    m.attention.top_k = 2048.0;
    m.attention.indexer_flops_per_position_layer = 2.0 * 64.0 * 128.0;
    let k = Coefficients::default();
    // 32 sequences decoding at 8k context: the indexer scores all 8,192 positions of every layer.
    let mut load = StepLoad::default();
    load.add_decodes(&m, 32.0, 8192.0, 1.0);
    let indexer = 32.0 * 2.0 * 64.0 * 128.0 * m.attention.full_layers * 8192.0;
    assert!(close(load.indexer_flops, indexer), "{load:?}");
    assert!(load.attention_flops > load.indexer_flops);
    // Only the attention FLOPs, no weights: compare one rank with two, and two padded ranks.
    let attention_only = StepLoad { attention_flops: load.attention_flops, indexer_flops: indexer, ..load };
    let mut e = lone_engine(&m, &hw, &k);
    let rate = hw.flops_bf16 * ATTENTION_KERNEL_EFFICIENCY;
    let one = e.step(&StepLoad { decode_seqs: 0.0, ..attention_only }).compute_s;
    assert!(close(one, load.attention_flops / rate), "{one}");
    e.placement.tp = 2.0;
    let two = e.step(&StepLoad { decode_seqs: 0.0, ..attention_only }).compute_s;
    assert!(close(two, (load.attention_flops - indexer) / (2.0 * rate) + indexer / rate), "{two}");
    // Head padding stretches the attention kernels, not the indexer's.
    e.attention_padding = 4.0;
    let padded = e.step(&StepLoad { decode_seqs: 0.0, ..attention_only }).compute_s;
    assert!(close(padded, (load.attention_flops - indexer) * 2.0 / rate + indexer / rate), "{padded}");
    // Prefill: the chunk's indexer share at its mean context.
    let mut chunk = StepLoad::default();
    chunk.add_prefill(&m, 1.0, 0.0, 8192.0);
    assert!(close(chunk.indexer_flops, 8192.0 * 2.0 * 64.0 * 128.0 * m.attention.full_layers * 4096.0));
}

#[test]
fn an_nvfp4_checkpoint_multiplies_its_dense_layers_at_their_own_rate() {
    use crate::model::batching::StepLoad;
    // 80 GB of FP4 experts (4.5 stored bits): 142.2B routed parameters, 4 of 64 per token = 8.9B of the 10B
    // active; the other 1.1B multiply at FP8 in the mixed checkpoint.
    let (mut m, mut hw) = case(200.0);
    m.compute_bits = 4.0;
    m.dense_compute_bits = 4.0;
    hw.flops_fp4 = 8e15;
    hw.flops_fp8 = 2e15;
    let routed = 80e9 * 8.0 / 4.5 * 4.0 / 64.0;
    assert!(close(m.routed_active_params(), routed), "{}", m.routed_active_params());
    let k = Coefficients::default();
    let compute = |m: &ModelSpec| {
        lone_engine(m, &hw, &k).step(&StepLoad { prefill_tokens: 4096.0, ..StepLoad::default() }).compute_s
    };
    let all_fp4 = compute(&m);
    assert!(close(all_fp4, 2.0 * 10e9 * 4096.0 / 8e15 / k.compute_efficiency), "{all_fp4}");
    m.dense_compute_bits = 8.0;
    let mixed = compute(&m);
    let want = 2.0 * 4096.0 * (routed / 8e15 + (10e9 - routed) / 2e15) / k.compute_efficiency;
    assert!(close(mixed, want), "{mixed} against {want}");
    assert!(mixed > all_fp4);
}

#[test]
fn every_layer_pays_its_fixed_cost_once_a_step_whatever_the_batch() {
    use crate::model::batching::StepLoad;
    // 40 layers at 25 us: 1 ms a step on top of the step's own cost, the same at 1 and at 64 sequences; a
    // model twice as deep pays twice; an empty step pays nothing.
    let (mut m, hw) = case(200.0);
    let k = Coefficients { per_layer_overhead_s: 25e-6, ..Coefficients::default() };
    let none = Coefficients { per_layer_overhead_s: 0.0, ..k.clone() };
    let overhead = |m: &ModelSpec, k: &Coefficients, seqs: f64| {
        lone_engine(m, &hw, k).step(&StepLoad { decode_seqs: seqs, ..StepLoad::default() }).overhead_s
    };
    for seqs in [1.0, 64.0] {
        assert!(close(overhead(&m, &k, seqs) - overhead(&m, &none, seqs), 40.0 * 25e-6), "{seqs}");
    }
    assert_eq!(overhead(&m, &k, 0.0), 0.0);
    m.layers = 80.0;
    assert!(close(overhead(&m, &k, 1.0) - overhead(&m, &none, 1.0), 80.0 * 25e-6));
}

#[test]
fn a_prompt_token_multiplies_only_the_prefill_share_of_the_active_parameters() {
    use crate::model::batching::StepLoad;
    // DeepSeek-V4.1-Flash's shape: 8B of 16B active per prefill token. Prefill compute halves, decode
    // compute stays, and the bytes a step reads do not move.
    let (mut m, hw) = case(200.0);
    let k = Coefficients::default();
    let prefill = StepLoad { prefill_tokens: 4096.0, ..StepLoad::default() };
    let decode = StepLoad { decode_seqs: 64.0, ..StepLoad::default() };
    let run = |m: &ModelSpec, load: &StepLoad| lone_engine(m, &hw, &k).step(load);
    let (whole_prefill, whole_decode) = (run(&m, &prefill), run(&m, &decode));
    m.prefill_active_share = 0.5;
    let (half_prefill, half_decode) = (run(&m, &prefill), run(&m, &decode));
    assert!(close(half_prefill.compute_s, 0.5 * whole_prefill.compute_s), "{half_prefill:?}");
    assert_eq!(half_prefill.hbm_s, whole_prefill.hbm_s);
    assert_eq!(half_decode, whole_decode);
}

#[test]
fn a_drafters_attention_layer_reads_its_kv_at_each_sequences_context_every_pass() {
    use crate::model::batching::StepLoad;
    // An MTP layer of the main layers' geometry (2,500 B per position per layer), three draft tokens, 64
    // sequences: each pass reads the layer's KV of every position, so going from 1 to 8,192 positions adds
    // 3 x 64 x 2,500 B x 8,191 to the draft passes' reads; the pool holds 41 layers' KV per position.
    let (mut m, hw) = case(200.0);
    m.draft_tokens = 3.0;
    let k = Coefficients::default();
    let draft_s = |m: &ModelSpec, ctx: f64| {
        let mut load = StepLoad::default();
        load.add_decodes(m, 64.0, ctx, 4.0);
        lone_engine(m, &hw, &k).step(&load).overhead_s
    };
    let without = draft_s(&m, 8192.0) - draft_s(&m, 1.0);
    m.attention.draft_layers = 1.0;
    let with = draft_s(&m, 8192.0) - draft_s(&m, 1.0);
    let want = 3.0 * 64.0 * 2500.0 * 8191.0 / (k.hbm_efficiency * hw.hbm_bytes_per_sec);
    assert!(close(with - without, want), "{} against {want}", with - without);
    assert!(close(m.kv_bytes_held(100.0), 41.0 * 2500.0 * 100.0));
    // An EAGLE3 head's own dense attention of the same bytes per position reads and holds the same.
    m.attention.draft_layers = 0.0;
    m.attention.draft_own_kv_bytes = 2500.0;
    let own = draft_s(&m, 8192.0) - draft_s(&m, 1.0);
    assert!(close(own - without, want), "{} against {want}", own - without);
    assert!(close(m.kv_bytes_held(100.0), 41.0 * 2500.0 * 100.0));
}

#[test]
fn a_block_drafter_pays_one_pass_for_its_whole_block() {
    use crate::model::batching::StepLoad;
    // Five drafted tokens: an MTP drafter runs five passes (`draft_passes` 0: one per token), a block drafter
    // (DSpark) one; what the step verifies is the same six tokens per sequence either way.
    let (mut m, hw) = case(200.0);
    let k = Coefficients::default();
    m.draft_tokens = 5.0;
    m.draft_pass_bytes = 2e9;
    let step = |m: &ModelSpec| {
        let mut load = StepLoad::default();
        load.add_decodes(m, 8.0, 1000.0, 6.0);
        lone_engine(m, &hw, &k).step(&load)
    };
    // A pass of a one-layer drafter: its reads and its layer's fixed cost.
    let pass = 2e9 / (k.hbm_efficiency * hw.hbm_bytes_per_sec) + k.per_layer_overhead_s;
    m.draft_passes = 0.0;
    let five = step(&m);
    m.draft_passes = 1.0;
    let one = step(&m);
    assert!(close(five.overhead_s - one.overhead_s, 4.0 * pass), "{five:?} {one:?}");
    assert_eq!((one.hbm_s, one.compute_s), (five.hbm_s, five.compute_s));
    // Fewer drafted tokens than the card's passes (an override): never more passes than tokens.
    m.draft_passes = 3.0;
    m.draft_tokens = 2.0;
    assert_eq!(m.draft_passes_per_step(), 2.0);
}

#[test]
fn a_draft_pass_pays_the_per_layer_cost_of_each_of_its_layers() {
    use crate::model::batching::StepLoad;
    // No cost of its own: a draft pass's fixed cost is the engine's per-layer cost times the drafter's
    // layers, so a profile fitted on models that never draft still prices a drafter.
    let (mut m, hw) = case(200.0);
    let k = Coefficients { per_layer_overhead_s: 30e-6, ..Coefficients::default() };
    m.draft_tokens = 3.0;
    m.draft_pass_bytes = 1e9;
    let step = |m: &ModelSpec, k: &Coefficients| {
        let mut load = StepLoad::default();
        load.add_decodes(m, 16.0, 1000.0, 4.0);
        lone_engine(m, &hw, k).step(&load)
    };
    // Absent: one layer (an EAGLE3 head), or the drafter's attention layers (an MTP module's).
    assert_eq!(m.draft_pass_layer_count(), 1.0);
    m.attention.draft_layers = 2.0;
    assert_eq!(m.draft_pass_layer_count(), 2.0);
    m.attention.draft_layers = 0.0;
    let one = step(&m, &k);
    m.draft_pass_layers = 3.0;
    let three = step(&m, &k);
    // Three passes a step, two more layers each: 6 x 30 us.
    assert!(close(three.overhead_s - one.overhead_s, 6.0 * 30e-6), "{one:?} {three:?}");
    // Without a per-layer cost a draft pass is its reads alone.
    let free = Coefficients { per_layer_overhead_s: 0.0, ..k.clone() };
    let a = step(&m, &free);
    m.draft_tokens = 0.0;
    let plain = step(&m, &free);
    let reads = 3.0 * 1e9 / (free.hbm_efficiency * hw.hbm_bytes_per_sec);
    assert!(close(a.overhead_s - plain.overhead_s - 16.0 * free.spec_per_seq_overhead_s, reads), "{a:?} {plain:?}");
}

#[test]
fn routed_parameters_come_from_the_experts_stored_width() {
    // 80 GB of experts, top-4 of 64: at 8 stored bits 80B parameters, 5B routed per token; stored as MXFP4
    // (4.25 bits) the same bytes hold 150.6B parameters, 9.4B per token, though they multiply at FP8.
    let (mut m, _) = case(200.0);
    assert!(close(m.routed_active_params(), 5e9));
    m.routed_expert_bits = 4.25;
    assert!(close(m.routed_active_params(), 80e9 * 8.0 / 4.25 * 4.0 / 64.0));
    // Never more than every active parameter; no stored width given: the compute width's (4.5 at 4 bits).
    m.routed_expert_bits = 1.0;
    assert_eq!(m.routed_active_params(), m.active_params);
    m.routed_expert_bits = 0.0;
    m.compute_bits = 4.0;
    assert!(close(m.routed_active_params(), 80e9 * 8.0 / 4.5 * 4.0 / 64.0));
}

#[test]
fn weights_in_cpu_memory_keep_their_multiplies_off_the_hbm_roofline() {
    use crate::model::batching::StepLoad;
    let k = Coefficients::default();
    let step = |hbm: f64, load: &StepLoad| {
        let (m, hw) = case(hbm);
        lone_engine(&m, &hw, &k).step(load)
    };
    for tokens in [1.0, 64.0, 2048.0, 16384.0] {
        let load = StepLoad { prefill_tokens: tokens, ..StepLoad::default() };
        let mut last = 0.0;
        // Less HBM spills more experts: a step never gets faster, and never beats the per-step roofline.
        for hbm in [200.0, 110.0, 90.0, 70.0, 50.0] {
            let t = step(hbm, &load);
            let floor = (t.hbm_s + t.slow_s).max(t.compute_s) + t.overhead_s;
            assert!(t.total_s >= floor * (1.0 - 1e-12), "{tokens} tokens on {hbm} GB: {t:?}");
            assert!(t.total_s >= last * (1.0 - 1e-12), "{tokens} tokens on {hbm} GB: {} < {last}", t.total_s);
            last = t.total_s;
        }
    }
    // A compute-bound prefill with a few of its experts in CPU memory (100 GB of weights on 100 GB of HBM
    // offload 13.5 GB): their multiplies wait for the slow path's stream instead of hiding under the HBM
    // reads.
    let load = StepLoad { prefill_tokens: 16384.0, ..StepLoad::default() };
    let t = step(100.0, &load);
    assert!(t.compute_s > t.hbm_s + t.slow_s, "{t:?}");
    assert!(t.total_s > t.compute_s + t.overhead_s, "{t:?}");
}

#[test]
fn weights_that_fit_the_memory_share_are_never_offloaded() {
    // 100 GB of weights; the report's profile keeps 8/252 for the runtime and, when it must offload, 34/252
    // free of weights. On 105 GB the weights fit the share (101.7 GB): nothing is offloaded and the pool
    // is what they leave, though that is less than an offloading deployment would keep.
    let k = Coefficients::default();
    let (m, hw) = case(105.0);
    let p = place(&m, &hw, 1.0, &k);
    assert_eq!(p.spilled_bytes(), 0.0, "{p:?}");
    assert!(close(p.kv_pool_bytes, 105e9 * (1.0 - 8.0 / 252.0) - 100e9), "{p:?}");
    assert!(p.fits);
    // On 100 GB they do not fit the share (96.8 GB): the deployment offloads down to 218/252 of memory.
    let (m, hw) = case(100.0);
    let p = place(&m, &hw, 1.0, &k);
    assert!(close(p.spilled_bytes(), 100e9 - 100e9 * 218.0 / 252.0), "{p:?}");
    assert!(close(p.kv_pool_bytes, 100e9 * 26.0 / 252.0), "{p:?}");
    // A profile that reserves less than its runtime takes still offloads at least what the share forces out.
    let lean = Coefficients { hbm_reserve_fraction: 0.01, runtime_reserve_fraction: 0.1, ..Coefficients::default() };
    assert!(close(offloaded_bytes(100e9, 0.0, 100e9, &lean), 10e9));
    // A deployment that must offload counts its pin: a pin below the reserve's need changes nothing, a
    // larger one offloads only itself.
    let k0 = Coefficients::default();
    let need = 100e9 - 100e9 * 218.0 / 252.0;
    assert!(close(offloaded_bytes(100e9, 5e9, 100e9, &k0) + 5e9, need));
    assert_eq!(offloaded_bytes(100e9, need + 1e9, 100e9, &k0), 0.0);
    // Where the pool is a share of what the weights leave (TensorRT-LLM), every byte of memory is the share.
    let trt = Coefficients { kv_free_memory_fraction: 0.9, ..Coefficients::default() };
    assert_eq!(offloaded_bytes(99e9, 0.0, 100e9, &trt), 0.0);
}

#[test]
fn a_byte_pin_frees_hbm_for_the_kv_pool() {
    let (m, hw) = case(200.0);
    let k = Coefficients::default();
    let base = place(&m, &hw, 1.0, &k);
    assert_eq!((base.pinned_bytes(), base.spilled_bytes()), (0.0, 0.0));
    let pm = pinned(m, HostPin { bytes: 20e9, ..HostPin::default() });
    let p = place(&pm, &hw, 1.0, &k);
    assert!(close(p.pinned_bytes(), 20e9), "{p:?}");
    assert!(close(base.hbm_weight_bytes() - p.hbm_weight_bytes(), 20e9));
    assert!(close(p.kv_pool_bytes - base.kv_pool_bytes, 20e9));
    assert_eq!(p.spilled_bytes(), 0.0);
    // Whole layers in order: the slice keeps the layers' dense-to-expert ratio (99 GB of layers, 80 of experts).
    assert!(close(p.expert_bytes_pinned, 20e9 * 80.0 / 99.0), "{}", p.expert_bytes_pinned);
    assert!(p.fits);
    // The pinned bytes are read over the slow path; a one-token step touches 4 of 64 experts there.
    let r = step_reads(&pm, &p, 1.0, 0.0, 1.0);
    assert!(close(r.slow_bytes, p.dense_bytes_pinned + p.expert_bytes_pinned * 4.0 / 64.0), "{r:?}");
}

#[test]
fn a_share_of_free_memory_sizes_the_pool_from_what_the_weights_leave() {
    // 100 GB of weights on 200 GB: vLLM's rule gives weights and KV 90% of all memory (80 GB of KV);
    // TensorRT-LLM's gives KV 90% of what the weights and the runtime's 10% leave (72 GB).
    let (m, hw) = case(200.0);
    let vllm = Coefficients { runtime_reserve_fraction: 0.1, ..Coefficients::default() };
    let trt = Coefficients { kv_free_memory_fraction: 0.9, ..vllm.clone() };
    let (a, b) = (place(&m, &hw, 1.0, &vllm), place(&m, &hw, 1.0, &trt));
    assert!(close(a.hbm_weight_bytes(), b.hbm_weight_bytes()));
    assert!(close(a.kv_pool_bytes, 0.9 * 200e9 - a.hbm_weight_bytes()), "{a:?}");
    assert!(close(b.kv_pool_bytes, 0.9 * (200e9 - 20e9 - b.hbm_weight_bytes())), "{b:?}");
    // Without a runtime share the pool is 90% of what the weights leave.
    let bare = Coefficients { runtime_reserve_fraction: 0.0, ..trt.clone() };
    assert!(close(place(&m, &hw, 1.0, &bare).kv_pool_bytes, 0.9 * 100e9));
    assert!(b.kv_pool_bytes < a.kv_pool_bytes);
    // The share is of free memory: above 1 is refused, by name.
    let err = Coefficients::default().set_named("kv_free_memory_fraction", 1.5).unwrap_err();
    assert!(err.contains("kv_free_memory_fraction") && err.contains("from 0 to 1,"), "{err}");
}

#[test]
fn a_pin_smaller_than_the_spill_changes_nothing_but_which_bytes_are_where() {
    // 100 GB on 80 GB of HBM spills; a 5 GB pin is inside the overflow, so HBM weights and the pool stay.
    let (m, hw) = case(80.0);
    let k = Coefficients::default();
    let base = place(&m, &hw, 1.0, &k);
    assert!(base.spilled_bytes() > 5e9);
    let p = place(&pinned(m, HostPin { bytes: 5e9, ..HostPin::default() }), &hw, 1.0, &k);
    assert!(close(p.hbm_weight_bytes(), base.hbm_weight_bytes()));
    assert!(close(p.kv_pool_bytes, base.kv_pool_bytes));
    assert!(close(p.host_weight_bytes(), base.host_weight_bytes()));
}

#[test]
fn experts_and_layers_pin_what_they_name() {
    let (m, hw) = case(200.0);
    let k = Coefficients::default();
    let p = place(&pinned(m.clone(), HostPin { experts: 16.0, ..HostPin::default() }), &hw, 1.0, &k);
    assert!(close(p.expert_bytes_pinned, 80e9 / 4.0) && p.dense_bytes_pinned == 0.0, "{p:?}");
    let p = place(&pinned(m.clone(), HostPin { layers: 10.0, ..HostPin::default() }), &hw, 1.0, &k);
    assert!(close(p.expert_bytes_pinned, 20e9) && close(p.dense_bytes_pinned, 19e9 / 4.0), "{p:?}");
    // Every layer: all but the input embedding; more than every layer is still every layer.
    let p = place(&pinned(m.clone(), HostPin { layers: 99.0, experts: 5.0, ..HostPin::default() }), &hw, 1.0, &k);
    assert!(close(p.hbm_weight_bytes(), 1e9) && close(p.pinned_bytes(), 99e9), "{p:?}");
    // Under TP2 each GPU pins its half of the same layers.
    let p2 = place(&pinned(m, HostPin { layers: 10.0, ..HostPin::default() }), &hw, 2.0, &k);
    assert!(close(p2.pinned_bytes(), (20e9 + 19e9 / 4.0) / 2.0), "{p2:?}");
}

#[test]
fn pinned_experts_keep_routing_mass() {
    // Uniform routing everywhere: pinning experts moves reads to the slow path without adding any.
    let (m, hw) = case(200.0);
    let k = Coefficients::default();
    let base = place(&m, &hw, 1.0, &k);
    let pm = pinned(m.clone(), HostPin { experts: 24.0, ..HostPin::default() });
    let p = place(&pm, &hw, 1.0, &k);
    for tokens in [1.0, 8.0, 64.0] {
        let a = step_reads(&m, &base, tokens, 0.0, 1.0);
        let b = step_reads(&pm, &p, tokens, 0.0, 1.0);
        assert!(close(a.hbm_bytes + a.slow_bytes, b.hbm_bytes + b.slow_bytes), "{tokens}: {a:?} {b:?}");
        assert!(b.slow_bytes > 0.0 && a.slow_bytes == 0.0);
    }
}

#[test]
fn a_pin_on_a_full_host_does_not_fit() {
    let (m, mut hw) = case(200.0);
    hw.cpu_memory_bytes = 10e9;
    let p = place(&pinned(m, HostPin { bytes: 30e9, ..HostPin::default() }), &hw, 1.0, &Coefficients::default());
    assert!(!p.fits && close(p.missing_bytes, 20e9), "{p:?}");
}

#[test]
fn each_moe_kernel_sizes_its_tile_as_its_source_does() {
    use MoeKernel::*;
    // vLLM's Triton default config: by the tokens in the batch.
    let triton: Vec<f64> = [1.0, 32.0, 33.0, 96.0, 97.0, 512.0, 513.0].map(|t| TritonFusedMoe.tile_rows(t, 0.0)).into();
    assert_eq!(triton, [16.0, 16.0, 32.0, 32.0, 64.0, 64.0, 128.0]);
    // Marlin: the first of 8, 16, 32, 48 with tokens per expert below 0.9 of it, else 64.
    let marlin: Vec<f64> = [0.5, 7.1, 7.3, 14.5, 28.7, 43.1, 43.3].map(|n| Marlin.tile_rows(0.0, n)).into();
    assert_eq!(marlin, [8.0, 8.0, 16.0, 32.0, 32.0, 48.0, 64.0]);
    // TRT-LLM-gen: the integer tokens per expert up to a power of two, within 8-64.
    let trtllm: Vec<f64> = [0.3, 8.0, 9.0, 16.9, 33.0, 500.0].map(|n| FlashinferTrtllmGen.tile_rows(0.0, n)).into();
    assert_eq!(trtllm, [8.0, 8.0, 16.0, 16.0, 64.0, 64.0]);
    assert_eq!([63.0, 64.0].map(|t| FlashinferCutlassSm12x.tile_rows(t, 0.0)), [64.0, 128.0]);
    assert_eq!([1.0, 1e5].map(|t| VllmCutlassSm100.tile_rows(t, t)), [128.0, 128.0]);
    assert_eq!(Unpadded.tile_rows(1.0, 1.0), 0.0);
}

#[test]
fn a_touched_expert_pays_a_whole_tile_and_a_dense_model_pays_none() {
    // 64 experts, top-4: one decoding token touches 4 experts, each padded to a 16-row tile.
    let (m, hw) = case(200.0);
    assert_eq!(moe_padding_tokens(&m, MoeKernel::Unpadded, 1.0, 1.0, || expert_touch_fraction(&m, 1.0, 1.0)), 0.0);
    assert!(close(
        moe_padding_tokens(&m, MoeKernel::TritonFusedMoe, 1.0, 1.0, || expert_touch_fraction(&m, 1.0, 1.0)),
        (4.0 * 16.0 - 4.0) / 4.0
    ));
    // Many tokens per expert: half a tile per touched expert on average (8192 tokens: 512 per expert).
    let many =
        moe_padding_tokens(&m, MoeKernel::TritonFusedMoe, 1.0, 8192.0, || expert_touch_fraction(&m, 8192.0, 1.0));
    assert!(close(many, 64.0 * 128.0 / 2.0 / 4.0), "{many}");
    // A model without routed experts has nothing to pad.
    let mut dense = m.clone();
    dense.routed_experts = 0.0;
    assert_eq!(
        moe_padding_tokens(&dense, MoeKernel::VllmCutlassSm100, 1.0, 64.0, || expert_touch_fraction(&dense, 64.0, 1.0)),
        0.0
    );
    // In a step, the padding is routed multiplies: compute grows, the bytes read do not.
    use crate::model::batching::StepLoad;
    let unpadded = Coefficients::default();
    let padded = Coefficients { moe_kernel: MoeKernel::VllmCutlassSm100, ..Coefficients::default() };
    let load = StepLoad { decode_seqs: 16.0, ..StepLoad::default() };
    let (a, b) = (lone_engine(&m, &hw, &unpadded).step(&load), lone_engine(&m, &hw, &padded).step(&load));
    assert_eq!(a.hbm_s, b.hbm_s);
    let e = lone_engine(&m, &hw, &padded);
    let (routed_s, _) = e.weight_seconds_per_token();
    let extra = routed_s
        * moe_padding_tokens(&m, MoeKernel::VllmCutlassSm100, 1.0, 16.0, || expert_touch_fraction(&m, 16.0, 1.0))
        / padded.compute_efficiency;
    assert!(extra > 0.0 && close(b.compute_s - a.compute_s, extra), "{a:?} {b:?}");
}

#[test]
fn kv_per_rank_splits_by_heads_and_never_below_one_head() {
    // 100 KB of KV per token over 4 KV heads (MiniMax-M3's count): TP2 and TP4 split it, TP8 and TP16 keep one
    // whole head per rank (25 KB), as vLLM replicates heads once ranks outnumber them.
    let (mut m, hw) = case(200.0);
    let k = Coefficients::default();
    m.kv_heads = 4.0;
    for (tp, want) in [(1.0, 100e3), (2.0, 50e3), (4.0, 25e3), (8.0, 25e3), (16.0, 25e3)] {
        assert!(close(place(&m, &hw, tp, &k).kv_bytes_per_token, want), "tp {tp}");
    }
    for heads in [1.0, 2.0, 8.0, 64.0] {
        m.kv_heads = heads;
        for tp in 1..=32 {
            let tp = f64::from(tp);
            let per_rank = place(&m, &hw, tp, &k).kv_bytes_per_token;
            assert!(per_rank >= m.kv_bytes_per_token / heads * (1.0 - 1e-12), "{heads} heads, tp {tp}");
            assert!(close(per_rank, m.kv_bytes_per_token / tp.min(heads)), "{heads} heads, tp {tp}");
        }
    }
    // No head count given: split over every rank; MLA: replicated whatever the heads.
    m.kv_heads = 0.0;
    assert!(close(place(&m, &hw, 16.0, &k).kv_bytes_per_token, 100e3 / 16.0));
    m.kv_split_under_tp = false;
    m.kv_heads = 4.0;
    assert_eq!(place(&m, &hw, 16.0, &k).kv_bytes_per_token, 100e3);
    // The engine's split (what the serving loop's blocks use) is the placement's.
    m.kv_split_under_tp = true;
    let mut e = lone_engine(&m, &hw, &k);
    e.placement = place(&m, &hw, 8.0, &k);
    assert_eq!(e.kv_split(), 4.0);
}

/// The busiest of two expert-parallel ranks against the exact expectation: one token touching k of E experts,
/// E / 2 on each rank, puts a hypergeometric count X on one of them; the busiest holds E[max(X, k - X)].
#[test]
fn the_busiest_expert_parallel_rank_follows_the_hypergeometric_count() {
    let choose = |n: f64, r: f64| (0..r as u32).fold(1.0, |acc, i| acc * (n - f64::from(i)) / f64::from(i + 1));
    for (experts, k) in [(128.0, 8.0), (256.0, 8.0), (64.0, 6.0)] {
        let half = experts / 2.0;
        let exact: f64 = (0..=k as u32)
            .map(|x| {
                let x = f64::from(x);
                x.max(k - x) * choose(half, x) * choose(half, k - x) / choose(experts, k)
            })
            .sum();
        let split = ExpertSplit::Whole { ranks: 2.0, experts };
        let modelled = split.busiest_rank_factor(k / experts) * k / 2.0;
        assert!((modelled / exact - 1.0).abs() < 0.05, "{experts} experts, top-{k}: {modelled} against {exact}");
    }
    // Every expert touched: the ranks read alike; sliced experts always do.
    assert_eq!(ExpertSplit::Whole { ranks: 2.0, experts: 128.0 }.busiest_rank_factor(1.0), 1.0);
    assert_eq!(ExpertSplit::Sliced.busiest_rank_factor(0.01), 1.0);
}
