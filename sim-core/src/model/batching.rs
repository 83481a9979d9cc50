//! One engine step as a roofline with overheads: what a batch of decoding sequences and prompt chunks costs.
//!
//! Step time (seconds) for a step with n decoding sequences (each verifying `k` draft tokens plus one) and P
//! prompt tokens, T = n * (k + 1) + P:
//! ```text
//!   t_hbm     = hbm_bytes / (eta_hbm * B_hbm),   t_slow = slow_bytes / (eta_slow * B_slow)
//!               hbm_bytes = dense + experts touched by T tokens + KV each sequence attends to (per architecture)
//!                           + linear layers' state, read once and written after each verified token (split
//!                             across TP ranks by heads; a drafting model holds a state slot per draft token)
//!   t_compute = 2 * (T + P_pad) * routed active params / peak at the experts' precision / tp / eta_c / s_r
//!               + 2 * T * other active params / peak at the dense layers' precision / tp / eta_c / s_d
//!               (P_pad: the rows the MoE kernel pads each touched expert's tokens to, in tokens: moe_padding_tokens;
//!                a Marlin kernel multiplies the experts at 16 bits; s_r, s_d: the share of the peak the machine's
//!                kernel table measured at each GEMM's intensity, `gemm_shares`, 1 unless the engine states
//!                `gemm_from_kernel_table`, when eta_c is 1)
//!               + attention FLOPs at each sequence's context but the sparse indexer's
//!                 / (BF16 peak x 0.65 x tp / head padding)
//!               + sparse indexer FLOPs / (BF16 peak x 0.65)      (every TP rank scores with all indexer heads)
//!   t_comm    = 2 * layers * (alpha(S) * scale + S / bw(S)) + (2 + 4 * k) * alpha(0) * scale   (TP)
//!               S = T * hidden * 2 B, a layer's message; alpha(S), bw(S): the latency and bandwidth of the
//!               protocol NCCL runs at that size (`nccl`; inside one machine one latency and the machine's rate);
//!               + half a link round trip per step when the engine spans machines (the driver's one-way control
//!               message); EP and PP: `Span`
//!   t_draft   = passes * (max((draft bytes + draft experts touched by n tokens) / tp + drafter KV at each context)
//!                        / (eta_hbm * B_hbm), drafter attention FLOPs / BF16 peak / tp / eta_c) + draft overhead)
//!   t_host    = the share of t_compute whose weights sit in CPU memory (spilled or pinned)
//!   t_step    = max(t_hbm, t_compute - t_host) + max(t_slow, t_host) + t_comm + t_draft + step overhead
//!               + per-layer overhead x layers
//!               + (per-sequence overhead
//!               + speculative-decoding overhead when the model drafts) x n
//! ```
//! The closed loop that decides which sequences and chunks share a step is `serving`.

use super::bandwidth::{host_compute_shares, moe_padding_tokens, ExpertSplit, ExpertTouch, Placement, StepReader};
use super::elementwise::LayerElementwise;
use super::fabric::AllReduceCost;
use super::{Bottleneck, Coefficients};
use crate::spec::{stored_bits_per_param, AllReduceCurve, ContextMeasures, GemmShape, HardwareSpec, ModelSpec};

/// The share of the BF16 dense tensor peak attention kernels reach, apart from the engine's GEMM efficiency
/// (attention multiplies activations by cached keys and values, not weights, in kernels of their own): FlashMLA's
/// published figures (github.com/deepseek-ai/FlashMLA README, reported elsewhere): sparse MLA prefill up to 640
/// TFLOPS on H800 SXM5 (989 dense BF16: 0.65) and 1,450 on B200 (2,250: 0.64), dense MHA prefill 1,460 on B200
/// (0.65), dense MLA decoding 660 on H800 (0.67).
pub const ATTENTION_KERNEL_EFFICIENCY: f64 = 0.65;

/// Everything one engine needs to time its steps.
#[derive(Debug, Clone)]
pub struct Engine<'a> {
    pub model: &'a ModelSpec,
    pub hw: &'a HardwareSpec,
    pub k: &'a Coefficients,
    pub placement: Placement,
    /// What one all-reduce between the ranks costs at a message size (free when tp = 1).
    pub allreduce: AllReduceCost,
    /// The link's measured all-reduce times, where tensor parallelism spans machines and the hardware gives
    /// them: each call then costs what was measured at its size, in place of the latency and bandwidth above.
    pub allreduce_measured: Option<&'a AllReduceCurve>,
    pub acceptance: f64,
    /// Routing share of the spilled experts relative to uniform (1.0 = uniform).
    pub spilled_routing_share: f64,
    /// Attention FLOPs a rank computes over its heads' share (`ModelSpec::attention_head_padding`; 1 unpadded).
    pub attention_padding: f64,
    /// The step's token budget and sequence cap on this GPU (`Coefficients::batch_limits`).
    pub limits: super::BatchLimits,
    /// How the engine is laid across machines: its control cost per step, expert and pipeline parallelism.
    pub span: Span,
}

/// What an engine laid across machines pays per step that one machine does not (all zero on one machine).
///
/// ```text
///   control:   head [driver] --scheduler output--> [remote worker]   one way per step
///   EP:        whole experts split across the ranks; the MoE output all-reduced as under TP (DP = 1)
///   DP+EP:     [A: own requests] <== per MoE layer: all-gather every token, reduce-scatter the outputs ==> [B]
///              and once a step the ranks agree on their token counts (a Gloo all-reduce)
///   PP:        [stage A: layers 1..L/2] --metadata (Gloo), 2 tensors (NCCL)--> [stage B]   one hop per micro-batch
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Span {
    /// The driver's per-step send of the scheduler's output to the remote worker: one way on the link's transport,
    /// seconds (0 on one machine). The driver waits for the answer of one worker only, the output rank, which is
    /// on its own machine under tensor parallelism: vLLM's Ray executor returns `refs[0].get()` ("Get output only
    /// from a single worker (output_rank)", `RayDistributedExecutor.execute_model`,
    /// vllm/v1/executor/ray_distributed_executor.py) and the multiprocessing executor broadcasts the scheduler
    /// output through its message queue (`rpc_broadcast_mq`, `shm_broadcast.MessageQueue`, remote readers over
    /// ZMQ) and reads the response of `output_rank` only (vllm/v1/executor/multiproc_executor.py). Under a
    /// pipeline the output rank is the last stage's, across the link: its answer comes back one way, while the
    /// send to it overlaps the first stage's pass.
    pub control_s: f64,
    /// The ranks whole routed experts are split across (vLLM's `--enable-expert-parallel`), 0 or 1 without
    /// expert parallelism. With one data-parallel rank vLLM runs no all-to-all kernels
    /// (`FusedMoEParallelConfig.use_all2all_kernels` is `dp_size > 1 and use_ep`,
    /// vllm/model_executor/layers/fused_moe/config.py): the MoE layer's output is all-reduced over the
    /// tensor-parallel group as without expert parallelism, so the collectives are TP's; what changes is which
    /// experts each rank reads (`bandwidth::ExpertSplit`).
    pub expert_ranks: f64,
    /// Data-parallel ranks whose tokens every MoE layer multiplies, one engine per machine (vLLM's DP+EP; 0 or 1
    /// without). With data parallel above 1 vLLM runs its all-to-all backend, by default all-gather /
    /// reduce-scatter (`ParallelConfig.all2all_backend = "allgather_reducescatter"`, vllm/config/parallel.py;
    /// `AgRsAll2AllManager`, vllm/distributed/device_communicators/all2all.py): each MoE layer gathers every
    /// rank's hidden states, expert weights and ids over the data-parallel group (`dispatch`), multiplies its own
    /// experts' share of all of them, and reduce-scatters the outputs back (`combine`). The engine modelled is
    /// one rank with its own requests; the other is taken as loaded alike.
    pub data_ranks: f64,
    /// The data-parallel group's communicator across the machines (`moe_exchange` prices `dispatch` and
    /// `combine` by it), present only under DP+EP.
    pub data_group: Option<super::nccl::Communicator>,
    /// What the ranks pay once a step to agree on their token counts, seconds: `coordinate_batch_across_dp`
    /// (vllm/v1/worker/dp_utils.py) all-reduces them over the data-parallel group, on Gloo when async scheduling
    /// is on (`ParallelConfig.disable_nccl_for_dp_synchronization`): a round trip on the link's transport.
    pub data_sync_s: f64,
    /// Pipeline stages the layers are split across (1 or 0: none). vLLM keeps as many micro-batches in flight.
    pub pipeline_stages: f64,
    /// One hop between stages, as vLLM's `GroupCoordinator.send_tensor_dict` / `isend_tensor_dict` makes it
    /// (vllm-project/vllm `vllm/distributed/parallel_state.py`): first the tensors' metadata (keys, shapes,
    /// dtypes) by `send_object` over the CPU (Gloo) group, which the receiver needs before it posts its receives,
    /// one way on the link's transport (`stage_metadata_s`); then each tensor of the dict by its own NCCL send
    /// over the device group (`stage_send`: NCCL's latency of a send of its size), its bytes at the link's
    /// payload rate. A stage's dict holds `STAGE_TENSORS` tensors.
    pub stage_metadata_s: f64,
    pub stage_send: Option<super::nccl::Communicator>,
    pub stage_hop_bytes_per_sec: f64,
}

/// The tensors one pipeline stage hands the next: vLLM's decoder models return `IntermediateTensors` of
/// `hidden_states` and `residual` from every stage but the last (e.g. `Qwen3MoeModel.forward`,
/// vllm/model_executor/models/qwen3_moe.py; Llama's, DeepSeek's and GPT-OSS's alike), each tokens x hidden in
/// BF16.
pub const STAGE_TENSORS: f64 = 2.0;

impl Span {
    fn stages(&self) -> f64 {
        self.pipeline_stages.max(1.0)
    }
}

/// What one step carries: decoding sequences, prompt tokens, and the attention work at their contexts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepLoad {
    /// Sequences decoding in this step (each verifies its draft tokens plus one).
    pub decode_seqs: f64,
    /// Prompt tokens prefilled in this step.
    pub prefill_tokens: f64,
    /// KV bytes the decoding sequences read (whole model, before a tensor-parallel split).
    pub kv_read_bytes: f64,
    /// Linear-layer state the decoding sequences read and write (once read, written after each verified token;
    /// whole model, before the split).
    pub state_rw_bytes: f64,
    /// Attention FLOPs of every query token in the step at its own context (whole model).
    pub attention_flops: f64,
    /// KV bytes and attention FLOPs of one draft pass over the decoding sequences: the drafter's own attention
    /// layers at each sequence's context (whole model; `Engine::step` charges them once per drafted token).
    pub draft_kv_read_bytes: f64,
    pub draft_attention_flops: f64,
    /// The sparse indexer's share of `attention_flops` and `draft_attention_flops`: every tensor-parallel rank
    /// computes it whole (vLLM's `Indexer` in `deepseek_v2.py`: "no tensor parallel, just replicated").
    pub indexer_flops: f64,
    pub draft_indexer_flops: f64,
}

impl StepLoad {
    /// Adds `count` decoding sequences at context `ctx`, each verifying `per_seq` tokens.
    pub fn add_decodes(&mut self, m: &ModelSpec, count: f64, ctx: f64, per_seq: f64) {
        self.add_decodes_with(m, m.kv_per_layer(), count, ctx, per_seq);
    }

    /// `add_decodes` given `m.kv_per_layer()`.
    pub fn add_decodes_with(&mut self, m: &ModelSpec, kv_per_layer: f64, count: f64, ctx: f64, per_seq: f64) {
        let mut x = ContextMeasures::default();
        x.add(count, &m.attention.context_measures(ctx));
        self.add_decode_measures(m, kv_per_layer, &x, per_seq);
    }

    /// Adds the decoding sequences `x` sums, each verifying `per_seq` tokens. Every decode cost is linear in the
    /// measures, so the serving loop sums its cohorts' measures and costs them here once a step, rather than
    /// the attention geometry once per cohort.
    pub fn add_decode_measures(&mut self, m: &ModelSpec, kv_per_layer: f64, x: &ContextMeasures, per_seq: f64) {
        let a = &m.attention;
        self.decode_seqs += x.seqs;
        self.kv_read_bytes += a.decode_kv_bytes_of(kv_per_layer, x);
        self.state_rw_bytes += x.seqs * a.decode_state_bytes(per_seq);
        self.attention_flops += per_seq * a.query_flops_of(x);
        self.indexer_flops += per_seq * a.indexer_query_flops_of(x);
        if a.draft_layers > 0.0 || a.draft_own_kv_bytes > 0.0 {
            self.draft_kv_read_bytes += a.draft_pass_kv_bytes_of(kv_per_layer, x);
            self.draft_attention_flops += a.draft_pass_flops_of(x);
            self.draft_indexer_flops += a.indexer_draft_pass_flops_of(x);
        }
    }

    /// This load with every measure times `f` (a micro-batch's share of a step's load: every field is a sum
    /// over the step's sequences and chunks).
    pub fn scaled(&self, f: f64) -> StepLoad {
        StepLoad {
            decode_seqs: self.decode_seqs * f,
            prefill_tokens: self.prefill_tokens * f,
            kv_read_bytes: self.kv_read_bytes * f,
            state_rw_bytes: self.state_rw_bytes * f,
            attention_flops: self.attention_flops * f,
            draft_kv_read_bytes: self.draft_kv_read_bytes * f,
            draft_attention_flops: self.draft_attention_flops * f,
            indexer_flops: self.indexer_flops * f,
            draft_indexer_flops: self.draft_indexer_flops * f,
        }
    }

    /// Adds `count` prompt chunks of `n` tokens each, following `offset` already computed tokens.
    pub fn add_prefill(&mut self, m: &ModelSpec, count: f64, offset: f64, n: f64) {
        self.prefill_tokens += count * n;
        self.attention_flops += count * m.attention.prefill_flops(offset, n);
        self.indexer_flops += count * m.attention.indexer_prefill_flops(offset, n);
    }
}

impl<'a> Engine<'a> {
    /// Tokens accepted per sequence per step: (1 - p^(k+1)) / (1 - p) for k draft tokens.
    pub fn tokens_per_step(&self) -> f64 {
        let k = self.model.draft_tokens.max(0.0);
        let p = self.acceptance.clamp(0.0, 0.999);
        if k == 0.0 {
            1.0
        } else {
            (1.0 - p.powf(k + 1.0)) / (1.0 - p)
        }
    }

    /// The precision the routed experts multiply at: the model's, unless the engine's MoE kernel is a
    /// weight-only one that multiplies at 16 bits (`MoeKernel::compute_bits`).
    pub fn routed_compute_bits(&self) -> f64 {
        self.k.moe_kernel.compute_bits(self.model.compute_bits)
    }

    /// The dense tensor rate of a precision of `bits`: FP4 (NVFP4, MXFP4), FP8, or BF16 above 8 bits.
    fn flops_at(&self, bits: f64) -> f64 {
        if bits <= 4.0 {
            self.hw.flops_fp4
        } else if bits <= 8.0 {
            self.hw.flops_fp8
        } else {
            self.hw.flops_bf16
        }
    }

    /// Seconds at the spec peak for the weight multiplies of one token (2 FLOPs per active parameter), as
    /// (routed experts, every other linear layer): each at its own precision (an NVFP4 checkpoint's attention
    /// projections and shared experts multiply at FP8 or BF16, not at the FP4 rate).
    pub fn weight_seconds_per_token(&self) -> (f64, f64) {
        let m = self.model;
        let routed = m.routed_active_params();
        (
            2.0 * routed / self.flops_at(self.routed_compute_bits()),
            2.0 * (m.active_params - routed) / self.flops_at(m.dense_compute_bits),
        )
    }

    /// Time of one engine step carrying `load`.
    pub fn step(&self, load: &StepLoad) -> StepTime {
        self.costs().step(load)
    }

    /// The terms of `step` that the load does not change, for timing many steps of this engine.
    pub fn costs(&self) -> StepCosts<'_, 'a> {
        let m = self.model;
        let k = self.k;
        let tp = self.placement.tp;
        let (routed_per_token, dense_per_token) = self.weight_seconds_per_token();
        let (host_routed, host_dense) = host_compute_shares(&self.placement, self.spilled_routing_share);
        StepCosts {
            e: self,
            reader: StepReader::new(m, &self.placement, self.spilled_routing_share)
                .with_split(self.expert_split())
                .with_moe_tokens(self.span.data_ranks),
            draft_touch: ExpertTouch::new(m, 1.0),
            routed_per_token,
            dense_per_token,
            // A kernel table's curve is the GEMMs' efficiency (`gemm_shares`): one fitted scalar on top would
            // count it twice.
            scale: 1.0 / (tp * if k.gemms_at_table_curve(self.hw) { 1.0 } else { k.compute_efficiency }),
            // Attention runs at its kernels' own share of the BF16 peak, on the heads each rank computes
            // (padded); a sparse indexer's scoring runs whole on every rank, unpadded (its own kernel, all of its
            // heads).
            attention_rate: self.hw.flops_bf16 * tp * ATTENTION_KERNEL_EFFICIENCY / self.attention_padding,
            indexer_rate: self.hw.flops_bf16 * ATTENTION_KERNEL_EFFICIENCY,
            host_routed,
            host_dense,
            // Per layer on one rank of a stage: the tensor-parallel degree within a pipeline stage (the stage's
            // layers are counted where the pass charges them).
            elementwise: {
                let stage_tp = tp / self.span.stages();
                LayerElementwise::new(m, stage_tp, m.kv_split(stage_tp))
            },
        }
    }

    /// How the routed experts lie over the ranks: whole experts under expert parallelism, else sliced.
    pub fn expert_split(&self) -> ExpertSplit {
        if self.span.expert_ranks > 1.0 {
            ExpertSplit::Whole { ranks: self.span.expert_ranks, experts: self.model.routed_experts }
        } else {
            ExpertSplit::Sliced
        }
    }

    /// One GPU's share of `whole` bytes of KV positions (whole model): GQA's KV is split across tensor-parallel
    /// ranks by heads, down to one whole head per rank; MLA's latent (and a sparse indexer's keys) is replicated
    /// on every rank.
    fn kv_per_rank(&self, whole: f64) -> f64 {
        whole / self.kv_split()
    }

    /// The ranks KV positions are split across (`ModelSpec::kv_split`): the tensor-parallel degree under GQA up
    /// to the KV heads, 1 under MLA (`kv_per_rank`); a pipeline's stages on top, each holding only its own
    /// layers' KV (vLLM's pipeline stages allocate the KV cache of the layers they run), whatever the attention.
    pub fn kv_split(&self) -> f64 {
        let stages = self.span.stages();
        stages * self.model.kv_split(self.placement.tp / stages)
    }

    /// KV bytes one sequence holds at context `ctx` on one GPU of this engine.
    pub fn kv_bytes_at(&self, ctx: f64) -> f64 {
        let positions = self.kv_per_rank(self.model.attention.kv_position_bytes(self.model.kv_per_layer(), ctx));
        // A sequence holds its state from its first position (`AttentionSpec::held_state_bytes`).
        if ctx > 0.0 {
            positions + self.state_bytes()
        } else {
            positions
        }
    }

    /// Recurrent state one sequence keeps in the linear-attention layers on one GPU of this engine: its running
    /// state and, when the model drafts, a slot per draft token (`ModelSpec::pool_state_bytes`). Split across
    /// the ranks whatever the KV does: vLLM shards a linear layer's heads (`KimiDeltaAttention.local_num_heads =
    /// num_heads / tp`, and `MambaStateShapeCalculator.kda_state_shape` sizes the recurrent state
    /// `(num_heads / tp, head_dim, head_dim)`), so even beside MLA's replicated latent each rank holds its share.
    pub fn state_bytes(&self) -> f64 {
        self.model.pool_state_bytes() / self.placement.tp
    }

    /// Most sequences of `isl + osl` tokens the KV pool holds at once.
    pub fn max_resident(&self, isl: f64, osl: f64) -> f64 {
        let per_seq = self.kv_bytes_at(isl + osl);
        if per_seq <= 0.0 {
            return f64::INFINITY;
        }
        (self.placement.kv_pool_bytes / per_seq).floor()
    }
}

/// An engine's step costs with what no load changes computed once (`Engine::costs`): the serving loop times
/// thousands of steps of one engine per sweep point.
#[derive(Debug, Clone, Copy)]
pub struct StepCosts<'e, 'a> {
    e: &'e Engine<'a>,
    reader: StepReader,
    /// A draft pass's expert touches (one token per sequence, uniform routing).
    draft_touch: ExpertTouch,
    /// `Engine::weight_seconds_per_token`, and the share of the peak the engine reaches on one rank.
    routed_per_token: f64,
    dense_per_token: f64,
    scale: f64,
    attention_rate: f64,
    indexer_rate: f64,
    /// `host_compute_shares` of the engine's placement.
    host_routed: f64,
    host_dense: f64,
    /// The layer's memory-bound kernels that grow with the step's tokens (charged where a kernel table times them).
    elementwise: LayerElementwise,
}

impl StepCosts<'_, '_> {
    /// Time of one engine step carrying `load`: one pass through the model, or under pipeline parallelism the
    /// cycle in which every running sequence advances once.
    ///
    /// A pipeline of `p` stages splits the running sequences into up to `p` micro-batches (vLLM's virtual
    /// engines); each stage holds `1/p` of the layers and passes each micro-batch's activations on over the link.
    /// In one cycle every stage runs every micro-batch once, so the cycle is `p` stage passes over a
    /// micro-batch: one stream pays both stages back to back, and a full pipeline works both machines at once
    /// on half of the batch each. The scheduler runs once per micro-batch; one activation hop and the driver's
    /// control message are paid per cycle.
    pub fn step(&self, load: &StepLoad) -> StepTime {
        let span = &self.e.span;
        let stages = span.stages();
        if stages <= 1.0 {
            return self.pass(load, 1.0);
        }
        let micro = if load.decode_seqs >= stages { stages } else { 1.0 };
        let part = load.scaled(1.0 / micro);
        let one = self.pass(&part, stages);
        let k = self.e.k;
        let step_overhead_s = if one.total_s > 0.0 { k.step_overhead_s } else { 0.0 };
        let m = self.e.model;
        let tokens = part.decode_seqs * (m.draft_tokens + 1.0) + part.prefill_tokens;
        let tensor_bytes = tokens * m.hidden_size * 2.0;
        let send_s = span.stage_send.map_or(0.0, |c| c.send_latency_s(tensor_bytes))
            + tensor_bytes / span.stage_hop_bytes_per_sec;
        let hop_s = span.stage_metadata_s + STAGE_TENSORS * send_s;
        let link_s = if one.total_s > 0.0 { hop_s + span.control_s } else { 0.0 };
        let scale = |x: f64| stages * x;
        StepTime {
            total_s: scale(one.total_s - step_overhead_s) + micro * step_overhead_s + link_s,
            hbm_s: scale(one.hbm_s),
            slow_s: scale(one.slow_s),
            compute_s: scale(one.compute_s),
            comm_s: scale(one.comm_s) + link_s,
            overhead_s: scale(one.overhead_s - step_overhead_s) + micro * step_overhead_s,
        }
    }

    /// The shares of the tensor peak the step's weight GEMMs reach (`spec::GemmCurves::share`; 1 without a
    /// kernel table or where the engine's GEMMs run at one fitted efficiency, `gemm_from_kernel_table` 0):
    /// (routed experts, dense layers). A dense GEMM multiplies `dense_rows` rows; a routed expert its share of
    /// the `routed_rows` (with the kernel's padding) over the experts the step touches. Widths: the hidden size
    /// in, its tensor-parallel share out.
    fn gemm_shares(&self, dense_rows: f64, routed_rows: f64, touched_uniform: impl FnOnce() -> f64) -> (f64, f64) {
        let e = self.e;
        let curves = &e.hw.gemm;
        if !e.k.gemms_at_table_curve(e.hw) {
            return (1.0, 1.0);
        }
        let m = e.model;
        // A dense GEMM's output is its tensor-parallel share; under expert parallelism a routed expert is whole.
        let routed_tp = if e.span.expert_ranks > 1.0 { 1.0 } else { e.placement.tp };
        let shape = |rows: f64, stored_bits: f64, compute_bits: f64, tp: f64| GemmShape {
            m: rows.max(1.0),
            n: (m.hidden_size / tp).max(1.0),
            k: m.hidden_size.max(1.0),
            weight_bytes: stored_bits / 8.0,
            activation_bytes: if compute_bits <= 8.0 { 1.0 } else { 2.0 },
        };
        let share = |bits: f64, g: GemmShape| curves.share(bits, g, e.flops_at(bits), e.hw.hbm_bytes_per_sec);
        let dense_bits = m.dense_compute_bits;
        let dense = share(dense_bits, shape(dense_rows, stored_bits_per_param(dense_bits), dense_bits, e.placement.tp));
        let experts = m.routed_experts * touched_uniform();
        let routed = if experts > 0.0 && m.experts_per_token > 0.0 {
            let per_expert = routed_rows * m.experts_per_token / experts;
            let bits = e.routed_compute_bits();
            share(bits, shape(per_expert, m.expert_storage_bits(), bits, routed_tp))
        } else {
            1.0
        };
        (routed.max(1e-3), dense.max(1e-3))
    }

    /// Under DP+EP, what the exchange across the machines of `layers` MoE layers costs when the ranks carry
    /// `tokens` together (0 otherwise): the dispatch all-gathers each token's BF16 hidden state with its top-k
    /// weights and ids (4 bytes each), the combine reduce-scatters the experts' BF16 outputs, each an NCCL ring
    /// over the data-parallel group at the protocol NCCL picks for its size. Every layer of the main pass is taken
    /// as an MoE layer (a model's few leading dense layers would exchange nothing), and the calls' latency carries
    /// the profile's TP latency scale, the per-call cost across machines the fits find beyond NCCL's model.
    fn moe_exchange_s(&self, tokens: f64, layers: f64) -> f64 {
        let (e, m) = (self.e, self.e.model);
        let Some(group) = e.span.data_group else { return 0.0 };
        let hidden = tokens * m.hidden_size * 2.0;
        let routing = tokens * m.experts_per_token * 8.0;
        let call = |bytes: f64| {
            let c = group.fastest(super::nccl::Call::Gather, bytes);
            c.latency_s * e.k.tp_latency_scale + c.transfer_s
        };
        layers * (call(hidden + routing) + call(hidden))
    }

    /// One forward pass over `1/stages` of the layers (all of them without a pipeline), with the tensor- or
    /// expert-parallel collectives of those layers and, on an engine spanning machines without a pipeline, the
    /// driver's one-way control message.
    fn pass(&self, load: &StepLoad, stages: f64) -> StepTime {
        let e = self.e;
        let m = e.model;
        let k = e.k;
        let tp = e.placement.tp;
        let seqs = load.decode_seqs;
        let tokens = seqs * (m.draft_tokens + 1.0) + load.prefill_tokens;
        let kv_read = e.kv_per_rank(load.kv_read_bytes) + load.state_rw_bytes / tp;
        let reads = self.reader.reads(tokens, kv_read);
        // An engine that reads the kernel table streams HBM at the share its GEMMs of a few rows reach there,
        // and pays each kernel's fixed time (`KernelCosts`); any other at its profile's bandwidth efficiency.
        let table_kernels = if k.gemms_from_kernel_table() { e.hw.gemm.kernels.as_ref() } else { None };
        let hbm_efficiency = table_kernels.map_or(k.hbm_efficiency, |c| c.stream_share);
        let hbm_s = reads.hbm_bytes / (hbm_efficiency * e.hw.hbm_bytes_per_sec);
        let slow_s = reads.slow_bytes / (k.slow_efficiency * e.hw.slow_path_bytes_per_sec);
        // Weights multiply at their own precision; attention runs at BF16 (FlashAttention and FlashMLA kernels
        // compute in BF16, dequantising an FP8 KV cache).
        let (routed_per_token, dense_per_token, scale) = (self.routed_per_token, self.dense_per_token, self.scale);
        // A prompt token multiplies by the prefill share of the active parameters (all of them but in a model
        // that publishes fewer per prefill token); its expert touches above are counted as a decode token's.
        let multiplied = seqs * (m.draft_tokens + 1.0) + load.prefill_tokens * m.prefill_active_share;
        // A pipeline stage scores only its own layers' indexer (its share of the layers, whole on each rank).
        let indexer_rate = self.indexer_rate * e.span.stages();
        let attention_s = |all: f64, indexer: f64| (all - indexer) / self.attention_rate + indexer / indexer_rate;
        // The routed experts' kernel multiplies each touched expert's tokens in whole tiles of rows: the padding,
        // in tokens' worth of routed multiplies, is added to the routed share only.
        let touched_uniform = || reads.touched_uniform.unwrap_or_else(|| self.reader.uniform_touch(tokens));
        // Under DP+EP a rank's experts multiply every rank's tokens: its share of all of them is, loaded alike,
        // this rank's tokens over its own tensor-parallel split, with each expert's rows and padding those of
        // all the ranks' tokens.
        let ranks = e.span.data_ranks.max(1.0);
        let padding = moe_padding_tokens(m, k.moe_kernel, k.moe_tile_scale, tokens * ranks, touched_uniform) / ranks;
        let routed_multiplied = multiplied + padding;
        // Each family of weight GEMMs at the share of the tensor peak its rows reach on this GPU (the measured
        // curve against intensity over the ridge; 1 without a kernel table): the dense layers multiply every
        // token's row, a routed expert the rows routed to it.
        let (routed_share, dense_share) = self.gemm_shares(multiplied, routed_multiplied * ranks, touched_uniform);
        let weights_s =
            (routed_per_token * routed_multiplied / routed_share + dense_per_token * multiplied / dense_share) * scale;
        let compute_s = weights_s + attention_s(load.attention_flops, load.indexer_flops);
        // The multiplies of weights in CPU memory stream them over the slow path while they run: that share of
        // the compute cannot hide under the HBM reads or the other layers' compute (a roofline per kernel, not
        // per step), and the rest cannot hide under the slow path.
        let (host_routed, host_dense) = (self.host_routed, self.host_dense);
        let host_compute_s = (routed_per_token * host_routed * routed_multiplied / routed_share
            + dense_per_token * host_dense * multiplied / dense_share)
            * scale;
        let layers = m.layers / stages;
        let comm_s = if tp > 1.0 && tokens > 0.0 {
            // Per forward pass: two all-reduces per layer, one for the vocabulary-parallel embedding and one
            // gather of the LM head's logits; each draft pass is one more layer with its own embedding and head.
            // Expert parallelism with one data-parallel rank keeps the MoE layer's all-reduce (`Span::expert_ranks`).
            let main_calls = 2.0 * layers + 2.0;
            let draft_calls = if seqs > 0.0 { m.draft_passes_per_step() * 4.0 } else { 0.0 };
            // A layer's all-reduce carries every token's BF16 hidden state (tokens x hidden x 2 bytes).
            let layer_bytes = tokens * m.hidden_size * 2.0;
            match e.allreduce_measured {
                // Measured: every call pays the smallest measured call (the fixed cost, scaled like a
                // latency); a layer's all-reduces add what the sweep measured beyond it at their size.
                Some(curve) => {
                    let floor = curve.floor_s();
                    (main_calls + draft_calls) * floor * k.tp_latency_scale
                        + 2.0 * layers * (curve.seconds(layer_bytes) - floor)
                }
                // The layers' all-reduces pay the latency of the protocol NCCL runs at their size and its time
                // for the bytes; the embedding's, the head's and the drafts' calls a small message's latency.
                None => {
                    let (latency_s, transfer_s) = e.allreduce.call(layer_bytes);
                    let layer_calls = 2.0 * layers;
                    let other_calls = main_calls + draft_calls - layer_calls;
                    (layer_calls * latency_s + other_calls * e.allreduce.small_message_latency_s()) * k.tp_latency_scale
                        + 2.0 * layers * transfer_s
                }
            }
        } else {
            0.0
        };
        let exchange_s = self.moe_exchange_s(tokens * ranks, m.layers / stages);
        let comm_s = comm_s + if tokens > 0.0 { exchange_s + e.span.data_sync_s } else { 0.0 };
        // The driver reaches its remote worker once a step; a pipeline pays it once a cycle (`step`).
        let comm_s = comm_s + if tokens > 0.0 && stages <= 1.0 { e.span.control_s } else { 0.0 };
        let draft_s = if seqs > 0.0 && m.draft_tokens > 0.0 {
            // Each draft pass runs one token per sequence: its MoE layer touches experts by the same
            // distinct-expert formula as the main pass, at that token count.
            // Its own attention layers (an MTP module's) read their KV at each sequence's context and spend
            // attention FLOPs beside the weight reads; a pass is as long as the slower of the two, plus the
            // fixed cost of each of its layers' kernels, as every layer of the main pass pays.
            let touched = self.draft_touch.fraction(seqs);
            let bytes =
                (m.draft_pass_bytes + m.draft_expert_bytes * touched) / tp + e.kv_per_rank(load.draft_kv_read_bytes);
            let read_s = bytes / (k.hbm_efficiency * e.hw.hbm_bytes_per_sec);
            let attention_s = attention_s(load.draft_attention_flops, load.draft_indexer_flops);
            // Under DP+EP a drafter with routed experts exchanges its tokens as the main pass's MoE layers do.
            let layers = m.draft_pass_layer_count();
            let exchange_s = if m.draft_expert_bytes > 0.0 { self.moe_exchange_s(seqs * ranks, layers) } else { 0.0 };
            m.draft_passes_per_step() * (read_s.max(attention_s) + k.per_layer_overhead_s * layers + exchange_s)
        } else {
            0.0
        };
        // Speculative decoding adds per-sequence bookkeeping around the drafter (proposal inputs, rejection
        // sampling, lookahead slots) that vLLM reports dominating large-batch steps (vllm#15029).
        let spec_s = if m.draft_tokens > 0.0 { k.spec_per_seq_overhead_s * seqs } else { 0.0 };
        let overhead_s = if tokens > 0.0 {
            k.step_overhead_s + k.per_layer_overhead_s * layers + k.per_seq_overhead_s * seqs + spec_s + draft_s
        } else {
            0.0
        };
        let (total_s, overhead_s) = match table_kernels {
            // Kernel by kernel, as the table times them: the weight GEMMs as the larger of their bytes and their
            // FLOPs, then attention as the larger of its KV reads and its FLOPs (the two run one after the other,
            // never overlapped), the memory-bound kernels that grow with the tokens, then every kernel's fixed
            // time. A pass carrying a prompt and decodes runs their attention as two calls, as the table's mixed
            // passes do (and vLLM's FlashInfer and MLA backends): the decodes' KV reads after the prompt's FLOPs,
            // not under them.
            Some(c) => {
                // The KV one attention call reads (a layer's, on this rank) at the share the table's decode
                // attention reached at that size; a prompt's attention at the share its tokens reached.
                let bw = e.hw.hbm_bytes_per_sec;
                let kv_share = c.decode_attention_share(kv_read / m.layers.max(1.0)).unwrap_or(hbm_efficiency);
                let kv_s = kv_read / (kv_share.clamp(1e-3, 1.0) * bw);
                let weights_hbm_s = (hbm_s - kv_read / (hbm_efficiency * bw)).max(0.0);
                let gemm_s = weights_s - host_compute_s;
                let attention_s = match (c.prefill_attention_share(load.prefill_tokens), load.prefill_tokens > 0.0) {
                    (Some(share), true) => {
                        (compute_s - weights_s) * ATTENTION_KERNEL_EFFICIENCY / share.clamp(1e-3, 1.0)
                    }
                    _ => compute_s - weights_s,
                };
                let (prompt, decodes) = (load.prefill_tokens > 0.0, seqs > 0.0);
                let fixed_s = if tokens > 0.0 { c.layer_fixed_s(prompt, decodes) * layers } else { 0.0 };
                let attention_s = if prompt && decodes { kv_s + attention_s } else { kv_s.max(attention_s) };
                let elementwise_s = self.elementwise.seconds(c, tokens, bw) * layers;
                let total = weights_hbm_s.max(gemm_s)
                    + attention_s
                    + elementwise_s
                    + slow_s.max(host_compute_s)
                    + comm_s
                    + overhead_s
                    + fixed_s;
                (total, overhead_s + fixed_s)
            }
            None => {
                (hbm_s.max(compute_s - host_compute_s) + slow_s.max(host_compute_s) + comm_s + overhead_s, overhead_s)
            }
        };
        StepTime { total_s, hbm_s, slow_s, compute_s, comm_s, overhead_s }
    }
}

/// The parts of one step's time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepTime {
    pub total_s: f64,
    pub hbm_s: f64,
    pub slow_s: f64,
    pub compute_s: f64,
    pub comm_s: f64,
    pub overhead_s: f64,
}

impl StepTime {
    pub fn bottleneck(&self) -> Bottleneck {
        let parts = [
            (self.hbm_s, Bottleneck::HbmBandwidth),
            (self.slow_s, Bottleneck::SlowPathBandwidth),
            (self.compute_s, Bottleneck::Compute),
            (self.comm_s, Bottleneck::Link),
            (self.overhead_s, Bottleneck::Overhead),
        ];
        parts.iter().fold((f64::MIN, Bottleneck::Overhead), |best, &(t, b)| if t > best.0 { (t, b) } else { best }).1
    }
}
