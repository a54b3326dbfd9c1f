#!/usr/bin/env python3
"""Times FLA's Triton decode (fla-core's fused_recurrent_gated_delta_rule) on dk_bench's
fp32-state decode workloads with dk_bench's GPU timers, for a comparison on one machine.

    python3 bench/fla_compare.py [--json FILE] [--filter SUBSTR] [--samples N]

Needs PyTorch with CUDA and fla-core (`pip install fla-core`). The workloads are dk_bench's
`decode/qwen3next/b{1,8,32,128,512}/state-f32`, `decode/contest/b1/state-f32` and the
speculative-verification rows `decode/qwen3next-mtp4/b{1,8,32,128}/state-f32` (T = 4 tokens per
sequence, the state kept once at the end): bf16 q/k/v
and output, the raw gate (`a` bf16, `A_log` and `dt_bias` fp32), beta as a bf16 logit, q/k
L2 norm, all fused in FLA's kernel as in deltakit's, K-last fp32 state (FLA's
`state_v_first=True`). FLA reads the states in batch order from one tensor (it takes no slot
index) and writes the new states to a tensor it allocates; compare it with
`dk_bench --slot-order ascending`, whose sequence i reads and writes slot i in place.

Timers, as dk_bench's (bench/README.md): "isolated" = one call captured in a CUDA graph, each
replay after an L2 flush (a memset of max(256 MiB, 4 x L2)) between a pair of CUDA events;
"in graph" = one graph of R calls on R copies of the tensors, R = clamp(ceil(4 x L2 / state
bytes), 2, 1024), 3 warm-up replays, then replays timed by event pairs, time / R per call;
"host" = wall time of 50 back-to-back eager calls / 50, median of 5 batches; copy bandwidth
= a 1 GiB device-to-device copy, (read + written) / median time. Medians throughout.
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch

try:
    from fla.ops.gated_delta_rule import fused_recurrent_gated_delta_rule
except ImportError as exc:  # a comparison tool: say what is missing and stop
    sys.exit(f"fla_compare: needs fla-core ({exc})")

K = V = 128
# (name, HQ, HV, batch, tokens per sequence)
WORKLOADS = [(f"decode/qwen3next/b{b}/state-f32", 16, 32, b, 1) for b in (1, 8, 32, 128, 512)]
WORKLOADS.append(("decode/contest/b1/state-f32", 4, 8, 1, 1))
WORKLOADS += [(f"decode/qwen3next-mtp4/b{b}/state-f32", 16, 32, b, 4) for b in (1, 8, 32, 128)]


class Call:
    """One decode call's tensors (one copy of the workload) and the call itself."""

    def __init__(self, batch, hq, hv, tokens):
        dev, bf16 = "cuda", torch.bfloat16
        self.q = torch.randn(batch, tokens, hq, K, device=dev, dtype=bf16)
        self.k = torch.randn(batch, tokens, hq, K, device=dev, dtype=bf16)
        self.v = torch.randn(batch, tokens, hv, V, device=dev, dtype=bf16)
        self.a = torch.randn(batch, tokens, hv, device=dev, dtype=bf16)
        self.b = torch.randn(batch, tokens, hv, device=dev, dtype=bf16)
        self.a_log = torch.empty(hv, device=dev).uniform_(0.0, 2.7)
        self.dt_bias = torch.empty(hv, device=dev).uniform_(-0.5, 0.5)
        self.state = torch.empty(batch, hv, V, K, device=dev).uniform_(-0.1, 0.1)

    def __call__(self):
        return fused_recurrent_gated_delta_rule(
            self.q, self.k, self.v, g=self.a, beta=self.b, scale=K ** -0.5,
            initial_state=self.state, output_final_state=True, use_qk_l2norm_in_kernel=True,
            use_gate_in_kernel=True, A_log=self.a_log, dt_bias=self.dt_bias,
            use_beta_sigmoid_in_kernel=True, state_v_first=True)

    def bytes_moved(self):
        t = [self.q, self.k, self.v, self.v, self.a, self.b, self.a_log, self.dt_bias]  # v twice: out
        return 2 * self.state.numel() * 4 + sum(x.numel() * x.element_size() for x in t)


def event_us(fn):
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    fn()
    end.record()
    end.synchronize()
    return begin.elapsed_time(end) * 1000.0


def capture(calls):
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for c in calls:
            c()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    with torch.cuda.graph(graph):
        outs = [c() for c in calls]
    return graph, outs


def copy_gbps(samples):
    n = 1 << 30
    src = torch.full((n,), 0x5A, dtype=torch.uint8, device="cuda")
    dst = torch.zeros_like(src)
    dst.copy_(src)
    us = statistics.median(event_us(lambda: dst.copy_(src)) for _ in range(samples))
    return 2 * n / us / 1e3


def measure(name, hq, hv, batch, tokens, samples, l2, flush):
    own = Call(batch, hq, hv, tokens)
    o, final = own()  # compiles the Triton kernel for this shape
    torch.cuda.synchronize()
    if not (torch.isfinite(o.float()).all() and torch.isfinite(final).all()):
        raise RuntimeError(f"{name}: non-finite output")
    rec = {"workload": name, "batch": batch, "tokens": tokens, "hq": hq, "hv": hv, "k": K, "v": V,
           "bytes": own.bytes_moved()}

    graph, _ = capture([own])
    iso = []
    for _ in range(samples):
        flush.zero_()
        iso.append(event_us(graph.replay))
    rec["graph_time_us"] = statistics.median(iso)
    rec["graph_samples_us"] = iso
    del graph

    pool = own.state.numel() * 4
    r = min(max(math.ceil(4.0 * l2 / pool), 2), 1024)
    calls = [own] + [Call(batch, hq, hv, tokens) for _ in range(r - 1)]
    graph, _ = capture(calls)
    for _ in range(3):
        graph.replay()
    stream = [event_us(graph.replay) / r for _ in range(max(samples, 20))]
    rec["stream_calls_per_graph"] = r
    rec["stream_time_us"] = statistics.median(stream)
    rec["stream_samples_us"] = stream
    del graph, calls

    torch.cuda.synchronize()
    host = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(50):
            own()
        host.append((time.perf_counter() - t0) * 1e6 / 50)
        torch.cuda.synchronize()
    rec["host_us_per_call"] = statistics.median(host)
    rec["host_batches_us"] = host
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="write the records here")
    ap.add_argument("--filter", action="append", default=[], help="workloads whose name contains this")
    ap.add_argument("--samples", type=int, default=60, help="timed isolated replays per workload")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("fla_compare: no CUDA device")
    torch.manual_seed(1)
    props = torch.cuda.get_device_properties(0)
    l2 = props.L2_cache_size
    flush = torch.empty(max(256 << 20, 4 * l2), dtype=torch.uint8, device="cuda")
    gbps_before = copy_gbps(10)
    records = []
    for name, hq, hv, b, t in WORKLOADS:
        if args.filter and not any(f in name for f in args.filter):
            continue
        records.append(measure(name, hq, hv, b, t, args.samples, l2, flush))
    gbps = statistics.median([gbps_before, copy_gbps(10)])
    import fla
    import triton
    run = {"tool": "bench/fla_compare.py", "device": props.name, "copy_gbps": gbps,
           "fla_core": fla.__version__, "torch": torch.__version__, "triton": triton.__version__,
           "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    print(f"FLA fused_recurrent_gated_delta_rule on {props.name}, fla-core {fla.__version__}, "
          f"copy {gbps:.0f} GB/s")
    print(f"{'workload':38} {'isolated us':>12} {'in graph us':>12} {'R':>5} {'%copy (graph)':>14} {'host us':>8}")
    for rec in records:
        rec["stream_pct_copy_bw"] = 100.0 * rec["bytes"] / rec["stream_time_us"] / 1e3 / gbps
        print(f"{rec['workload']:38} {rec['graph_time_us']:12.2f} {rec['stream_time_us']:12.2f} "
              f"{rec['stream_calls_per_graph']:5d} {rec['stream_pct_copy_bw']:14.1f} {rec['host_us_per_call']:8.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"run": run, "results": records}, f, indent=1)


if __name__ == "__main__":
    main()
