#!/usr/bin/env python3
"""Measures the kernels one engine step is made of on this machine's GPU and writes a kernel table.

The table (`data/kernels/<id>.json`, kind `kernels`) is what `sim-core` times a step with on this GPU: dense GEMM
time against the rows M it multiplies (per precision the GPU supports), grouped MoE GEMMs against the tokens each
expert gets, flash attention prefill and decode, the bandwidth of copies and elementwise kernels, and whole forward
passes of a layer stack (prefill, decode and mixed steps, eager and replayed as one CUDA graph) that check the
kernel sum.

Usage (PyTorch with CUDA, a few minutes on one GPU):

    python3 scripts/collect-kernels.py --id h100-sxm --hardware h100-sxm --out data/kernels/h100-sxm.json

then `sim-core plan --kernels data/kernels/h100-sxm.json ...` (`predict` and `calibrate` take it too) and
`sim-core report data/`, whose step check holds the step model to the passes it timed. Only PyTorch is needed;
every kernel timing is the median of CUDA-event timings of a captured CUDA graph of back-to-back calls (no host
launch gaps, as an engine replays its steps) after warm-up, on random data, rotating weight buffers where they
would fit in L2; whole forward passes are timed both eager and as one graph.
"""

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

SCHEMA_VERSION = 2

# Rows per GEMM: one decoding sequence up to a long prefill chunk.
M_SWEEP = [1, 2, 4, 8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 4096, 8192, 16384]
# (N, K) of the projections the models in data/ multiply, after a tensor-parallel split of 1, 2, 4 or 8: hidden
# sizes 2048-8192 in, their attention and MLP widths out.
GEMM_SHAPES = [
    (2048, 2048), (4096, 2048), (2048, 4096),
    (6144, 4096), (4096, 4096), (12288, 4096), (4096, 12288),
    (1536, 6144), (3072, 6144), (6144, 6144), (12288, 6144), (6144, 3072),
    (1024, 8192), (2048, 8192), (8192, 8192), (28672, 8192), (8192, 28672), (4096, 8192),
]
# Grouped MoE GEMMs: (experts run, N, K) for expert widths of the MoE models in data/ (up projection of gate and up
# fused, 2 x moe_intermediate out, hidden in).
GROUPED_SHAPES = [(8, 1536, 2048), (32, 1536, 2048), (8, 4096, 6144), (32, 4096, 6144), (8, 5760, 2880), (64, 4096, 6144)]
TOKENS_PER_EXPERT = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]


def median_ms(fn, warmup=3, reps=None, budget_s=0.15):
    """Median milliseconds of `fn` over CUDA-event timings after warm-up."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    torch.cuda.synchronize()
    one = max(start.elapsed_time(end), 1e-3)
    n = reps or int(min(200, max(5, budget_s * 1e3 / one)))
    times = []
    for _ in range(n):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        times.append((s, e))
    torch.cuda.synchronize()
    ms = sorted(s.elapsed_time(e) for s, e in times)
    return ms[len(ms) // 2]


def graphed_ms(fn, calls=16, budget_s=0.15):
    """Median milliseconds of one call of `fn` when `calls` of them run back to back as one CUDA graph (as an
    engine replays its steps): no host launch gap between kernels, so a small kernel's own time is what is
    measured. Falls back to eager timing where the call cannot be captured."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(calls):
                fn()
        return median_ms(g.replay, budget_s=budget_s) / calls
    except Exception:  # noqa: BLE001 - not capturable: eager, launch gaps included
        torch.cuda.synchronize()
        return median_ms(fn, budget_s=budget_s)


def rotating(make, bytes_each, l2_bytes):
    """Enough copies of an input that cycling through them never hits in L2 (weights come from HBM)."""
    count = max(1, min(8, math.ceil(3 * l2_bytes / max(bytes_each, 1))))
    return [make() for _ in range(count)]


class Cycle:
    def __init__(self, items):
        self.items, self.i = items, 0

    def next(self):
        x = self.items[self.i % len(self.items)]
        self.i += 1
        return x


def four_digits(x):
    """Every measured float to four significant digits (a timing's own noise is larger), so the table reads back
    the same through any JSON parser."""
    if isinstance(x, float) and x != 0:
        return float(f"{x:.4g}")
    if isinstance(x, list):
        return [four_digits(v) for v in x]
    if isinstance(x, dict):
        return {k: v if k == "provenance" else four_digits(v) for k, v in x.items()}
    return x


def provenance(args):
    p = torch.cuda.get_device_properties(0)
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
    except Exception:  # noqa: BLE001 - a machine without nvidia-smi still gets a table
        driver = "unknown"
    return {
        "gpu": p.name,
        "multiprocessors": p.multi_processor_count,
        "memory_bytes": p.total_memory,
        "l2_bytes": getattr(p, "L2_cache_size", 0),
        "compute_capability": f"{p.major}.{p.minor}",
        "driver": driver,
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "command": "python3 scripts/collect-kernels.py " + " ".join(sys.argv[1:]),
    }


def fp8_supported():
    p = torch.cuda.get_device_properties(0)
    return (p.major, p.minor) >= (8, 9) and hasattr(torch, "float8_e4m3fn") and hasattr(torch, "_scaled_mm")


def gemm_sweep(dtype, l2, ms, shapes, log):
    rows = []
    for n, k in shapes:
        seconds = []
        for m in ms:
            if dtype == "bf16":
                ws = rotating(lambda: torch.randn(n, k, device="cuda", dtype=torch.bfloat16), n * k * 2, l2)
                a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
                cyc = Cycle(ws)
                fn = lambda: torch.matmul(a, cyc.next().t())  # noqa: E731
            else:
                e4m3 = torch.float8_e4m3fn
                ws = rotating(lambda: torch.randn(n, k, device="cuda").to(e4m3), n * k, l2)
                a = torch.randn(m, k, device="cuda").to(e4m3)
                one = torch.ones((), device="cuda", dtype=torch.float32)
                cyc = Cycle(ws)
                fn = lambda: torch._scaled_mm(a, cyc.next().t(), one, one, out_dtype=torch.bfloat16)  # noqa: E731
            try:
                seconds.append(graphed_ms(fn) / 1e3)
            except Exception as e:  # noqa: BLE001
                log(f"gemm {dtype} m={m} n={n} k={k}: {e}")
                seconds.append(None)
            del ws, a
        if any(s is not None for s in seconds):
            keep = [(m, s) for m, s in zip(ms, seconds) if s is not None]
            rows.append({"dtype": dtype, "n": n, "k": k, "m": [m for m, _ in keep], "seconds": [s for _, s in keep]})
        log(f"gemm {dtype} {n}x{k}: " + " ".join(f"{2*m*n*k/s/1e12:.0f}" for m, s in zip(ms, seconds) if s))
    return rows


def grouped_sweep(l2, log):
    """Uniform grouped GEMMs: `experts` experts each multiply `t` tokens (torch.bmm, the batched cuBLAS kernel;
    torch._grouped_mm where PyTorch has it, as MoE kernels group experts of unequal counts)."""
    rows = []
    for experts, n, k in GROUPED_SHAPES:
        for kernel in ("bmm", "grouped_mm"):
            if kernel == "grouped_mm" and not hasattr(torch, "_grouped_mm"):
                continue
            seconds, ts = [], []
            for t in TOKENS_PER_EXPERT:
                ws = rotating(lambda: torch.randn(experts, n, k, device="cuda", dtype=torch.bfloat16),
                              experts * n * k * 2, l2)
                cyc = Cycle(ws)
                try:
                    if kernel == "bmm":
                        a = torch.randn(experts, t, k, device="cuda", dtype=torch.bfloat16)
                        fn = lambda: torch.bmm(a, cyc.next().transpose(1, 2))  # noqa: E731
                    else:
                        a = torch.randn(experts * t, k, device="cuda", dtype=torch.bfloat16)
                        offs = torch.arange(1, experts + 1, device="cuda", dtype=torch.int32) * t
                        ref = torch.bmm(a.view(experts, t, k), ws[0].transpose(1, 2)).reshape(experts * t, n)
                        got = torch._grouped_mm(a, ws[0].transpose(1, 2), offs=offs, out_dtype=torch.bfloat16)
                        err = ((got.float() - ref.float()).norm() / ref.float().norm()).item()
                        if not err < 2e-2:
                            raise RuntimeError(f"grouped_mm differs from bmm by {err:.3g}")
                        fn = lambda: torch._grouped_mm(a, cyc.next().transpose(1, 2), offs=offs,  # noqa: E731
                                                       out_dtype=torch.bfloat16)
                    seconds.append(graphed_ms(fn) / 1e3)
                    ts.append(t)
                except Exception as e:  # noqa: BLE001
                    log(f"grouped {kernel} e={experts} t={t} {n}x{k}: {e}")
                del ws
            if ts:
                rows.append({"dtype": "bf16", "kernel": kernel, "experts": experts, "n": n, "k": k,
                             "tokens_per_expert": ts, "seconds": seconds})
                log(f"grouped {kernel} {experts}x{n}x{k}: " + " ".join(
                    f"{2*experts*t*n*k/s/1e12:.0f}" for t, s in zip(ts, seconds)))
    return rows


def sdpa(q, k, v, causal):
    """PyTorch's flash attention. Fewer KV heads than query heads (GQA) are read as they are, never copied out
    to the query heads (an engine's attention kernel reads each KV head once): one query token per sequence is a
    query group per KV head; a prompt uses SDPA's `enable_gqa`, or expands KV where this PyTorch lacks it."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        if k.shape[1] == q.shape[1]:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        rep = q.shape[1] // k.shape[1]
        b, h, n, d = q.shape
        if n == 1 and not causal:
            g = q.reshape(b, k.shape[1], rep, d)
            return F.scaled_dot_product_attention(g, k, v).reshape(b, h, 1, d)
        try:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        except (TypeError, RuntimeError):
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def kernel_count(fn):
    """CUDA kernels one eager call of `fn` launches (PyTorch's profiler; copies and memsets not counted)."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return sum(1 for n in names if not n.lower().startswith(("memcpy", "memset")))


def attention_sweep(log):
    """Flash attention (PyTorch's SDPA flash backend) prefill over a whole causal prompt and decode of one query
    token per sequence against its cached context, each KV head read once (`sdpa`)."""
    prefill, decode = [], []
    for heads, kv_heads, d in [(32, 8, 128), (64, 8, 64), (16, 4, 128), (64, 8, 128)]:
        for n in [128, 512, 1024, 2048, 4096, 8192, 16384]:
            q = torch.randn(1, heads, n, d, device="cuda", dtype=torch.bfloat16)
            kv = torch.randn(1, kv_heads, n, d, device="cuda", dtype=torch.bfloat16)
            try:
                s = graphed_ms(lambda: sdpa(q, kv, kv, True), calls=4) / 1e3
                prefill.append({"heads": heads, "kv_heads": kv_heads, "head_dim": d, "query_tokens": n,
                                "context": n, "causal": True, "seconds": s})
            except Exception as e:  # noqa: BLE001
                log(f"prefill attention h={heads} d={d} n={n}: {e}")
        for seqs in [1, 4, 16, 64, 256]:
            for ctx in [512, 2048, 8192]:
                if seqs * ctx * kv_heads * d * 4 > 8e9:
                    continue
                q = torch.randn(seqs, heads, 1, d, device="cuda", dtype=torch.bfloat16)
                k = torch.randn(seqs, kv_heads, ctx, d, device="cuda", dtype=torch.bfloat16)
                try:
                    s = graphed_ms(lambda: sdpa(q, k, k, False), calls=4) / 1e3
                    decode.append({"heads": heads, "kv_heads": kv_heads, "head_dim": d, "seqs": seqs, "context": ctx,
                                   "kv_bytes": 2 * seqs * kv_heads * ctx * d * 2, "seconds": s})
                except Exception as e:  # noqa: BLE001
                    log(f"decode attention h={heads} d={d} b={seqs} ctx={ctx}: {e}")
                del k
    log(f"attention: {len(prefill)} prefill, {len(decode)} decode rows")
    return prefill, decode


def elementwise_sweep(log):
    """Bytes moved per second by the memory-bound kernels a step runs per token (copy, RMS norm, SiLU and
    multiply, rotary embedding's multiply-add) against the bytes they move."""
    rows = []
    hidden = 4096
    for tokens in [1, 16, 128, 1024, 8192, 65536, 262144]:
        x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16)
        g = torch.randn(tokens, 2 * hidden, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(hidden, device="cuda", dtype=torch.bfloat16)
        ops = {
            "copy": (lambda: x.clone(), 2 * x.numel() * 2),
            "rms_norm": (lambda: F.rms_norm(x, (hidden,), w), 2 * x.numel() * 2),
            "silu_mul": (lambda: F.silu(g[:, :hidden]) * g[:, hidden:], 3 * x.numel() * 2),
            "add": (lambda: x + x, 2 * x.numel() * 2),
        }
        for op, (fn, nbytes) in ops.items():
            try:
                rows.append({"op": op, "tokens": tokens, "width": hidden, "bytes": nbytes,
                             "seconds": graphed_ms(fn) / 1e3})
            except Exception as e:  # noqa: BLE001
                log(f"elementwise {op} t={tokens}: {e}")
    big = torch.empty(int(2e9) // 2, device="cuda", dtype=torch.bfloat16)
    other = torch.empty_like(big)
    s = median_ms(lambda: other.copy_(big), reps=10) / 1e3
    rows.append({"op": "copy", "tokens": 0, "width": 0, "bytes": 2 * big.numel() * 2, "seconds": s})
    log(f"elementwise: large copy {2 * big.numel() * 2 / s / 1e12:.2f} TB/s (read + write)")
    del big, other
    return rows


def stack_layer(h, w_qkv, w_o, w_gate_up, w_down, norm, cos, sin, k_cache, v_cache, p_len, d_seqs, ctx, nh, nkv, d):
    """One decoder layer as an engine runs it: RMS norm, the QKV projection, rotary embedding from a cached
    cos/sin table, attention, the output projection and residual, RMS norm, the gated MLP and residual. The rows
    are one prompt of `p_len` tokens (attending causally to itself) followed by `d_seqs` decoding sequences of one
    token each (attending to their cache of `ctx` positions, each KV head read once); a mixed step has both, and
    as in vLLM every GEMM multiplies all its rows at once, only attention runs per part."""
    hidden = h.shape[-1]
    a = F.rms_norm(h, (hidden,), norm)
    qkv = a @ w_qkv.t()
    q, k, v = qkv.split([nh * d, nkv * d, nkv * d], dim=-1)

    def rope(x, heads):
        x = x.view(-1, heads, d)
        x1, x2 = x[..., : d // 2], x[..., d // 2:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    q, k = rope(q, nh), rope(k, nkv)
    v = v.view(-1, nkv, d)
    parts = []
    if p_len > 0:
        qp = q[:p_len].view(1, p_len, nh, d).transpose(1, 2)
        kp = k[:p_len].view(1, p_len, nkv, d).transpose(1, 2)
        vp = v[:p_len].view(1, p_len, nkv, d).transpose(1, 2)
        parts.append(sdpa(qp, kp, vp, True).transpose(1, 2).reshape(p_len, nh * d))
    if d_seqs > 0:
        qd = q[p_len:].view(d_seqs, 1, nh, d).transpose(1, 2)
        k_cache[:, :, ctx - 1:ctx] = k[p_len:].view(d_seqs, 1, nkv, d).transpose(1, 2)
        v_cache[:, :, ctx - 1:ctx] = v[p_len:].view(d_seqs, 1, nkv, d).transpose(1, 2)
        att = sdpa(qd, k_cache[:, :, :ctx], v_cache[:, :, :ctx], False)
        parts.append(att.transpose(1, 2).reshape(d_seqs, nh * d))
    att = parts[0] if len(parts) == 1 else torch.cat(parts, dim=0)
    h = h + att @ w_o.t()
    a = F.rms_norm(h, (hidden,), norm)
    gu = a @ w_gate_up.t()
    inter = gu.shape[-1] // 2
    return h + (F.silu(gu[:, :inter]) * gu[:, inter:]) @ w_down.t()


class Stack(torch.nn.Module):
    """A decoder layer stack shaped like Qwen3-8B (hidden 4096, 32 query and 8 KV heads of 128, MLP 12288, vocab
    151936), with rotary embedding, RMS norms, residuals, a KV cache and the LM head on the sampled rows only. Its
    layer is compiled with torch.compile where this PyTorch can (as vLLM compiles its models: elementwise work
    fused around the GEMMs and attention), else run eager; `compiled` says which."""

    def __init__(self, layers, hidden=4096, heads=32, kv_heads=8, head_dim=128, inter=12288, vocab=151936,
                 compile_layer=True):
        super().__init__()
        self.h, self.nh, self.nkv, self.d, self.inter = hidden, heads, kv_heads, head_dim, inter
        bf = dict(device="cuda", dtype=torch.bfloat16)
        std = 0.02
        self.qkv = [torch.randn((heads + 2 * kv_heads) * head_dim, hidden, **bf) * std for _ in range(layers)]
        self.o = [torch.randn(hidden, heads * head_dim, **bf) * std for _ in range(layers)]
        self.gate_up = [torch.randn(2 * inter, hidden, **bf) * std for _ in range(layers)]
        self.down = [torch.randn(hidden, inter, **bf) * std for _ in range(layers)]
        self.norm = torch.ones(hidden, **bf)
        self.head = torch.randn(vocab, hidden, **bf) * std
        self.layers = layers
        half = head_dim // 2
        inv = 1.0 / (1e6 ** (torch.arange(half, device="cuda", dtype=torch.float32) / half))
        ang = torch.arange(65536, device="cuda", dtype=torch.float32)[:, None] * inv[None, :]
        self.cos_cache, self.sin_cache = ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16)
        self.layer = stack_layer
        self.compiled = False
        if compile_layer and hasattr(torch, "compile"):
            self.layer = torch.compile(stack_layer, dynamic=True)
            self.compiled = True

    def params(self):
        per_layer = (self.nh + 2 * self.nkv) * self.d * self.h + self.h * self.nh * self.d + 3 * self.inter * self.h
        return {"layers": self.layers, "hidden": self.h, "heads": self.nh, "kv_heads": self.nkv, "head_dim": self.d,
                "intermediate": self.inter, "vocab": self.head.shape[0], "layer_params": per_layer,
                "compiled": self.compiled}

    def forward(self, x, k_cache, v_cache, pos, p_len, d_seqs, ctx, sample_rows):
        """`x`: (p_len + d_seqs, hidden): one prompt of p_len tokens attending causally to itself, then d_seqs
        sequences of one token each at context ctx (their cache already holds ctx positions)."""
        h = x
        cos, sin = self.cos_cache[pos][:, None, :], self.sin_cache[pos][:, None, :]
        for i in range(self.layers):
            kc = k_cache[i] if k_cache is not None else None
            vc = v_cache[i] if v_cache is not None else None
            h = self.layer(h, self.qkv[i], self.o[i], self.gate_up[i], self.down[i], self.norm, cos, sin, kc, vc,
                           p_len, d_seqs, ctx, self.nh, self.nkv, self.d)
        last = F.rms_norm(h[sample_rows], (self.h,), self.norm)
        return last @ self.head.t()


def step_sweep(log, layers):
    """Whole forward passes of `Stack`: prefill of one prompt, decode of a batch, and both in one pass (a mixed
    step), each launched from the host (eager) and replayed as one CUDA graph (as vLLM replays its steps), with the
    kernels one pass launches."""
    stack = Stack(layers)
    try:
        with torch.no_grad():
            x = torch.randn(16, stack.h, device="cuda", dtype=torch.bfloat16)
            stack(x, None, None, torch.arange(16, device="cuda"), 16, 0, 16, torch.tensor([15], device="cuda"))
            torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - a PyTorch whose compiler fails here still measures the stack, eager
        log(f"torch.compile of the layer failed ({type(e).__name__}: {e}); the stack runs eager")
        stack = Stack(layers, compile_layer=False)
    log(f"stack: {'compiled' if stack.compiled else 'eager'} layer")
    rows = []
    with torch.no_grad():
        for n in [16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]:
            x = torch.randn(n, stack.h, device="cuda", dtype=torch.bfloat16)
            pos = torch.arange(n, device="cuda")
            rows_s = torch.tensor([n - 1], device="cuda")
            try:
                fn = lambda: stack(x, None, None, pos, n, 0, n, rows_s)  # noqa: E731
                eager = median_ms(fn, budget_s=0.5) / 1e3
                graphed = graphed_ms(fn, calls=1, budget_s=0.5) / 1e3
                kernels = kernel_count(fn)
                for graph, sec in [(False, eager), (True, graphed)]:
                    rows.append({"phase": "prefill", "graph": graph, "seqs": 1, "query_tokens": n, "context": n,
                                 "seconds": sec, "kernels": kernels})
                log(f"prefill step n={n}: eager {eager*1e3:.2f} ms, graph {graphed*1e3:.2f} ms")
            except Exception as e:  # noqa: BLE001
                log(f"prefill step n={n}: {e}")
        ctx = 512
        for b in [1, 2, 4, 8, 16, 32, 64, 128, 256]:
            try:
                kc = [torch.randn(b, stack.nkv, ctx, stack.d, device="cuda", dtype=torch.bfloat16)
                      for _ in range(layers)]
                vc = [torch.randn_like(c) for c in kc]
                x = torch.randn(b, stack.h, device="cuda", dtype=torch.bfloat16)
                pos = torch.full((b,), ctx - 1, device="cuda")
                rows_s = torch.arange(b, device="cuda")
                fn = lambda: stack(x, kc, vc, pos, 0, b, ctx, rows_s)  # noqa: E731
                eager = median_ms(fn, budget_s=0.5) / 1e3
                s = torch.cuda.Stream()
                s.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(s):
                    for _ in range(2):
                        fn()
                torch.cuda.current_stream().wait_stream(s)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    fn()
                graphed = median_ms(g.replay, budget_s=0.5) / 1e3
                kernels = kernel_count(fn)
                for graph, sec in [(False, eager), (True, graphed)]:
                    rows.append({"phase": "decode", "graph": graph, "seqs": b, "query_tokens": 1, "context": ctx,
                                 "seconds": sec, "kernels": kernels})
                log(f"decode step b={b}: eager {eager*1e3:.2f} ms, graph {graphed*1e3:.2f} ms")
                del g, kc, vc
            except Exception as e:  # noqa: BLE001
                log(f"decode step b={b}: {e}")
        # Mixed steps, as a chunked-prefill engine runs them: one prompt's tokens and a batch of decodes in one pass,
        # every GEMM over all rows at once (the weights read once), attention per part.
        ctx = 1024
        for n in [256, 1024, 4096]:
            for b in [4, 16, 64]:
                try:
                    kc = [torch.randn(b, stack.nkv, ctx, stack.d, device="cuda", dtype=torch.bfloat16)
                          for _ in range(layers)]
                    vc = [torch.randn_like(c) for c in kc]
                    x = torch.randn(n + b, stack.h, device="cuda", dtype=torch.bfloat16)
                    pos = torch.cat([torch.arange(n, device="cuda"), torch.full((b,), ctx - 1, device="cuda")])
                    rows_s = torch.arange(n - 1, n + b, device="cuda")
                    fn = lambda: stack(x, kc, vc, pos, n, b, ctx, rows_s)  # noqa: E731
                    eager = median_ms(fn, budget_s=0.5) / 1e3
                    graphed = graphed_ms(fn, calls=1, budget_s=0.5) / 1e3
                    kernels = kernel_count(fn)
                    for graph, sec in [(False, eager), (True, graphed)]:
                        rows.append({"phase": "mixed", "graph": graph, "seqs": 1, "query_tokens": n, "context": n,
                                     "decode_seqs": b, "decode_context": ctx, "seconds": sec, "kernels": kernels})
                    log(f"mixed step n={n} + b={b}: eager {eager*1e3:.2f} ms, graph {graphed*1e3:.2f} ms")
                    del kc, vc
                except Exception as e:  # noqa: BLE001
                    log(f"mixed step n={n} + b={b}: {e}")
    return stack.params(), rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--id", required=True, help="the table's id, e.g. h100-sxm")
    ap.add_argument("--hardware", required=True, help="the hardware file's id in data/hardware/ this GPU is")
    ap.add_argument("--out", required=True, help="where to write the table (data/kernels/<id>.json)")
    ap.add_argument("--layers", type=int, default=36, help="layers of the checked stack (Qwen3-8B: 36)")
    ap.add_argument("--quick", action="store_true", help="fewer shapes, for a smoke run")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("error: no CUDA GPU visible to PyTorch")
    torch.manual_seed(0)
    t0 = time.time()
    lines = []

    def log(s):
        lines.append(s)
        print(f"[{time.time() - t0:6.1f}s] {s}", flush=True)

    prov = provenance(args)
    log(f"{prov['gpu']} driver {prov['driver']} cuda {prov['cuda']} torch {prov['torch']}")
    l2 = prov["l2_bytes"] or 50 * 2**20
    shapes = GEMM_SHAPES[:3] if args.quick else GEMM_SHAPES
    table = {
        "$schema": "../schema/kernels.json",
        "schema_version": SCHEMA_VERSION,
        "kind": "kernels",
        "id": args.id,
        "hardware": args.hardware,
        "provenance": prov,
        "gemm": [],
        "grouped_gemm": [],
        "attention_prefill": [],
        "attention_decode": [],
        "elementwise": [],
        "steps": {"stack": None, "rows": []},
    }

    def save():
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(four_digits(table), f, indent=1)
            f.write("\n")

    table["gemm"] += gemm_sweep("bf16", l2, M_SWEEP, shapes, log)
    save()
    if fp8_supported():
        table["gemm"] += gemm_sweep("fp8", l2, M_SWEEP, shapes, log)
        save()
    table["grouped_gemm"] = grouped_sweep(l2, log)
    save()
    table["attention_prefill"], table["attention_decode"] = attention_sweep(log)
    save()
    table["elementwise"] = elementwise_sweep(log)
    save()
    stack, rows = step_sweep(log, 4 if args.quick else args.layers)
    table["steps"] = {"stack": stack, "rows": rows}
    table["provenance"]["seconds_taken"] = round(time.time() - t0, 1)
    save()
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
