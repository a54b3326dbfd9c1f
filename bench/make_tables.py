#!/usr/bin/env python3
"""Merge dk_bench JSON files from several machines into one Markdown page.

    bench/make_tables.py docs/perf/*.json -o docs/perf/README.md --png docs/perf/chart.png

One row per workload, one column per target. Measured targets come from the
JSON files; the other targets of the build (sm_80, sm_100a, sm_120a, gfx906,
and the H200 until its JSON is present) are shown as "compiled, not run here"
with the decode time floor at their datasheet bandwidth -- never invented
measurements. Several files of the same target are different runs: the newest
run fills the table and the spread between runs is reported.

Standard library only; the PNG needs matplotlib (without it the chart is
skipped with a message and the Markdown is still written).
"""
import argparse
import glob
import json
import os
import sys

# Targets of the build that may have no measurement. bw: datasheet GB/s.
DATASHEET = [
    {"label": "H200", "arch": "sm_90a", "bw": 4800.0},
    {"label": "A100-SXM4-80GB", "arch": "sm_80", "bw": 2039.0},
    {"label": "B200", "arch": "sm_100a", "bw": 8000.0},
    {"label": "RTX 5090", "arch": "sm_120a", "bw": 1792.0},
    {"label": "MI50", "arch": "gfx906", "bw": 1024.0},
]
SPREAD_LIMIT = 5.0  # percent: the reproducibility target
BUSY_LIMIT = 0.5    # other runnable tasks on a CPU host that make its timings noise


def norm_arch(arch):
    """sm_90a, sm_90 and 90a all name the same column; gfx906 stays."""
    a = (arch or "").lower().replace("sm", "").strip("_")
    return a.rstrip("af") if a[:1].isdigit() else a


def load(paths):
    runs = []
    for path in paths:
        with open(path) as f:
            run = json.load(f)
        if run.get("schema") != "deltakit-bench/1":
            sys.exit(f"{path}: not a deltakit-bench/1 file")
        run["path"] = path
        runs.append(run)
    return runs


class Target:
    """One machine (backend + device + arch) and all its runs, oldest first."""

    def __init__(self, backend, name, arch, units):
        self.backend, self.name, self.arch, self.units = backend, name, arch, units
        self.runs = []

    @property
    def label(self):
        if self.backend == "cpu":
            return f"CPU {self.arch}, {self.units} thread{'s' if self.units != 1 else ''}"
        short = self.name.replace("NVIDIA ", "").replace("AMD ", "")
        return f"{short} {self.arch}"

    def latest(self, workload):
        """The newest record of a workload, with the run it came from."""
        for run in reversed(self.runs):
            for rec in run["records"]:
                if rec["workload"] == workload:
                    return rec, run
        return None, None

    def modes(self):
        """Mode ("quick", "full") -> its runs, oldest first."""
        out = {}
        for run in self.runs:
            out.setdefault(run["mode"], []).append(run)
        return out


def group(runs):
    targets = {}
    for run in sorted(runs, key=lambda r: (r["timestamp"], r["path"])):
        d = run["device"]
        # CPU runs with different thread counts are different targets.
        units = d["compute_units"] if run["backend"] == "cpu" else 0
        key = (run["backend"], d["name"], d["arch"], units)
        targets.setdefault(key, Target(*key)).runs.append(run)
    # CPU first, then GPUs by name.
    return sorted(targets.values(), key=lambda t: (t.backend != "cpu", t.name, t.arch))


def fmt_num(x, digits=3):
    """3 significant digits, no exponent for ordinary magnitudes."""
    if x is None:
        return "-"
    if x == 0:
        return "0"
    if abs(x) >= 10 ** digits:
        return f"{x:,.0f}"
    from math import floor, log10
    decimals = max(0, digits - 1 - int(floor(log10(abs(x)))))
    return f"{x:.{decimals}f}"


def fmt_time(us):
    if us >= 1e6:
        return f"{fmt_num(us / 1e6)} s"
    if us >= 1000:
        return f"{fmt_num(us / 1000)} ms"
    return f"{fmt_num(us)} µs"


def fmt_bytes(n):
    return f"{fmt_num(n / 1e9)} GB" if n >= 1e9 else f"{fmt_num(n / 1e6)} MB"


def fmt_rate(x, unit=""):
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= scale:
            return f"{fmt_num(x / scale)}{prefix} {unit}".rstrip()
    return f"{fmt_num(x)} {unit}".rstrip()


def measured_cell(rec):
    if rec is None:
        return "–"
    status = rec["status"]
    if status in ("unsupported", "failed"):
        return status
    t = rec["time_us"]["median"]
    if rec["op"] == "decode":
        cell = f"{fmt_time(t)} · {fmt_num(rec['gbps'])} GB/s ({fmt_num(rec['pct_copy_bw'], 3)}%)"
        stream = rec.get("stream_time_us")  # absent from older files
        if stream:
            cell += (f"<br>in graph: {fmt_time(stream['median'])} "
                     f"({fmt_num(rec.get('stream_pct_copy_bw'), 3)}%)")
        pdl = rec.get("stream_pdl_time_us")  # absent from older files
        if pdl:
            cell += (f"<br>in graph, PDL: {fmt_time(pdl['median'])} "
                     f"({fmt_num(rec.get('stream_pdl_pct_copy_bw'), 3)}%)")
    else:
        cell = (f"{fmt_time(t)} · {fmt_rate(rec['tokens_per_s'], 'tok/s')} · "
                f"{fmt_num(rec['tflops'])} TFLOP/s")
    busy = rec.get("host_other_runnable")
    if rec["backend"] == "cpu" and busy is not None and busy >= BUSY_LIMIT:
        cell += " †"
    return cell + (" ⚠ bad output" if status == "bad_output" else "")


def floor_cell(op, nbytes, bw):
    if op != "decode":
        return "not run"
    return f"≥ {fmt_time(nbytes / (bw * 1e3))} floor"


def workload_rows(runs):
    """Workload name -> (op, bytes, a record to describe its shape), in first-seen order."""
    rows = {}
    for run in runs:
        for rec in run["records"]:
            rows.setdefault(rec["workload"], rec)
    return rows


def columns(targets):
    """Measured targets, then datasheet targets no measurement covers."""
    cols = [("measured", t) for t in targets]
    measured_arches = {norm_arch(t.arch) for t in targets if t.backend != "cpu"}
    for d in DATASHEET:
        if norm_arch(d["arch"]) not in measured_arches:
            cols.append(("datasheet", d))
    return cols


def header(col):
    kind, t = col
    if kind == "measured":
        return t.label
    return f"{t['label']} {t['arch']}<br>compiled, not run here"


def shape_text(rec):
    s = rec["shape"]
    heads = f"HQ={s['HQ']} HV={s['HV']} K={s['K']} V={s['V']}"
    if rec["op"] == "decode":
        layout = " V-last" if rec.get("config", {}).get("state_layout") == "v_last" else ""
        slots = ", slots in order" if rec.get("config", {}).get("slot_order") == "ascending" else ""
        if rec.get("config", {}).get("state_out") == "other_slots":
            slots += ", new state to other slots"
        return f"B={s['B']} T={s['T']} {heads}, {rec['dtypes']['state']}{layout} state{slots}"
    lens = s["seqlens"]
    seqs = f"{s['Ntok']} tokens" if len(lens) == 1 else f"{len(lens)} seqs, {s['Ntok']} tokens"
    return f"{seqs}, {heads}, {rec['dtypes']['state']} state"


def table(op, rows, cols):
    names = [n for n, rec in rows.items() if rec["op"] == op]
    if not names:
        return []
    out = ["| workload | shape | bytes | " + " | ".join(header(c) for c in cols) + " |",
           "|---|---|---:|" + "---|" * len(cols)]
    for name in names:
        rec0 = rows[name]
        cells = []
        for kind, t in cols:
            if kind == "measured":
                cells.append(measured_cell(t.latest(name)[0]))
            else:
                cells.append(floor_cell(op, rec0["bytes"], t["bw"]))
        out.append(f"| `{name}` | {shape_text(rec0)} | {fmt_bytes(rec0['bytes'])} | "
                   + " | ".join(cells) + " |")
    return out


def host_cell(host, bare, query=None):
    """Host time per call, and the timer's bare launch and dk_*_query beside it where measured."""
    if host is None:
        return "-"
    beside = ([f"bare {fmt_time(bare)}"] if bare is not None else []) + \
             ([f"query {fmt_time(query)}"] if query is not None else [])
    return fmt_time(host) + (f" ({', '.join(beside)})" if beside else "")


def detail_table(t):
    out = ["| workload | impl | median | min | max | samples | host/call | host/call, PDL | graph replay "
           "| in graph (R calls) | in graph % copy BW | in graph, PDL | PDL % copy BW "
           "| GB/s | % copy BW | tokens/s | TFLOP/s |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    gpu = t.backend != "cpu"
    seen = []
    for run in t.runs:
        for rec in run["records"]:
            if rec["workload"] not in seen:
                seen.append(rec["workload"])
    for name in seen:
        rec, _ = t.latest(name)
        if rec["status"] in ("unsupported", "failed"):
            out.append(f"| `{name}` | {rec['impl'] or '-'} | {rec['status']}: {rec['message']} |"
                       + " |" * 14)
            continue
        tm, g, st = rec["time_us"], rec.get("graph_time_us"), rec.get("stream_time_us")
        pdl = rec.get("stream_pdl_time_us")
        host = host_cell(rec.get("host_us_per_call"), rec.get("host_bare_us_per_launch"),
                         rec.get("host_query_us_per_call"))
        # absent in runs before they were measured
        host_pdl = host_cell(rec.get("host_pdl_us_per_call"), rec.get("host_pdl_bare_us_per_launch"))
        out.append("| `{}` | `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |"
                   .format(
            name, rec["impl"], fmt_time(tm["median"]), fmt_time(tm["min"]), fmt_time(tm["max"]),
            tm["n"],
            host, host_pdl,
            fmt_time(g["median"]) if g else "-",
            (f"{fmt_time(st['median'])} ({rec.get('stream_calls_per_graph')})" if st else "-")
            + (" ‡" if gpu and rec.get("stream_note") else ""),
            fmt_num(rec.get("stream_pct_copy_bw"), 3) + "%" if st else "-",
            fmt_time(pdl["median"]) if pdl else "-",
            fmt_num(rec.get("stream_pdl_pct_copy_bw"), 3) + "%" if pdl else "-",
            fmt_num(rec["gbps"]), fmt_num(rec["pct_copy_bw"], 3) + "%",
            fmt_rate(rec["tokens_per_s"]),
            fmt_num(rec["tflops"]) if rec["op"] == "prefill" else "-"))
    # Why a GPU decode has no in-graph time, or a caveat about the one it has.
    notes = [(name, rec.get("stream_note")) for name in seen
             for rec in [t.latest(name)[0]] if gpu and rec.get("stream_note")]
    if notes:
        out += [""] + [f"‡ `{name}` in graph: {note}.  " for name, note in notes]
    return out


def spread(values):
    """(max - min) / min of positive values, in percent."""
    return 100.0 * (max(values) / min(values) - 1.0)


def spread_section(t, mode, runs):
    """Run-to-run spread of each workload's median over the runs of one mode.

    On the CPU, decode is bound by memory bandwidth, which drifts on a shared VM
    between runs; there the spread is also given after normalising each run's
    median to the mean copy bandwidth of the runs: time x copy GB/s / mean copy GB/s.
    Only for runs that recorded per-round copy bandwidth: older ones timed a
    single-thread memmove, whose bandwidth does not track a 2-thread decode's.
    """
    rounds = [r["copy_bandwidth"].get("round_gbps") for r in runs]
    normalise = t.backend == "cpu" and all(rounds)
    copies = [r["copy_bandwidth"]["gbps"] for r in runs]
    mean_copy = sum(copies) / len(copies)
    rows, raw, norm = [], [], []
    for name in workload_rows(runs):
        pairs = [(rec["time_us"]["median"], run["copy_bandwidth"]["gbps"])
                 for run in runs for rec in run["records"]
                 if rec["workload"] == name and rec["status"] == "ok" and rec["time_us"]]
        if len(pairs) < 2:
            continue
        medians = [m for m, _ in pairs]
        raw.append((spread(medians), name))
        cells = [", ".join(fmt_time(m) for m in medians), mark(raw[-1][0])]
        if normalise:
            decode = name.startswith("decode/")
            if decode:
                norm.append((spread([m * c / mean_copy for m, c in pairs]), name))
            cells.append(mark(norm[-1][0]) if decode else "-")
        rows.append(f"| `{name}` | " + " | ".join(cells) + " |")
    head = f"### {t.label}: {len(runs)} {mode} runs"
    if not raw:
        return [head, "", "No workload was measured in two of these runs.", ""]
    out = [head, "", "- " + summary("spread of the median over runs, (max - min) / min", raw)]
    if norm:
        out.append("- " + summary("decode spread **normalised** by each run's copy bandwidth "
                                  "(time × copy GB/s / mean copy GB/s)", norm))
    out.append(f"- copy bandwidth of the runs: {', '.join(fmt_num(c) for c in copies)} GB/s "
               f"(spread {spread(copies):.1f}%)")
    if all(rounds):  # per-round samples: absent from older files
        lo, hi = min(min(r) for r in rounds), max(max(r) for r in rounds)
        out.append(f"  - per round it ranged {fmt_num(lo)} to {fmt_num(hi)} GB/s "
                   f"({spread([lo, hi]):.0f}%) within and across these runs.")
    elif t.backend == "cpu":
        out.append("  - no spread normalised by it: runs recorded without per-round copy "
                   "bandwidth copied with one thread's memmove, which does not track the "
                   "bandwidth a 2-thread decode gets.")
    out += ["", "| workload | median per run | spread |"
            + (" spread, normalised by copy BW |" if normalise else ""),
            "|---|---|---:|" + ("---:|" if normalise else "")] + rows + [""]
    return out


def mark(pct):
    """A spread in percent, bold when over the reproducibility target."""
    return f"**{pct:.1f}%**" if pct > SPREAD_LIMIT else f"{pct:.1f}%"


def summary(what, spreads):
    spreads = sorted(spreads, reverse=True)
    vals = sorted(s for s, _ in spreads)
    within = sum(1 for s in vals if s <= SPREAD_LIMIT)
    return (f"{what}: median {vals[len(vals) // 2]:.1f}%, max {spreads[0][0]:.1f}% "
            f"(`{spreads[0][1]}`); {within} of {len(vals)} workloads within "
            f"{SPREAD_LIMIT:.0f}%.")


def reproducibility(targets):
    """Per target and mode with >= 2 runs: the spread section; else one line."""
    out, single = [], []
    for t in targets:
        for mode, runs in t.modes().items():
            if len(runs) >= 2:
                out += spread_section(t, mode, runs)
            else:
                single.append(f"- {t.label}: one {mode} run so far: no run-to-run spread.")
    return out + single + ([""] if single else [])


def chart(path, targets):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("make_tables: matplotlib is not installed: chart not written "
              "(pip install matplotlib)", file=sys.stderr)
        return False
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator
    fig, (ax_d, ax_p) = plt.subplots(1, 2, figsize=(13, 5))
    xs_d, xs_p = set(), set()
    for i, t in enumerate(targets):
        run, color = t.runs[-1], f"C{i}"
        for state, style in (("float32", "-o"), ("bfloat16", "--s")):
            pts = sorted((r["shape"]["B"], r["gbps"]) for r in run["records"]
                         if r["op"] == "decode" and r["model"] == "qwen3next"
                         and r["status"] == "ok" and r["dtypes"]["state"] == state)
            if pts:
                ax_d.plot(*zip(*pts), style, color=color, label=f"{t.label}, {state} state")
                xs_d.update(x for x, _ in pts)
        copy = run["copy_bandwidth"]["gbps"]
        ax_d.axhline(copy, color=color, lw=0.8, ls=":")
        ax_d.annotate(f"{t.label}: copy bandwidth {fmt_num(copy)} GB/s", (1, copy), fontsize=7,
                      va="bottom", color=color)
        for model, style in (("qwen3next", "-o"), ("qwen3next-tp8", "--s")):
            pts = sorted((r["tokens"], r["tokens_per_s"]) for r in run["records"]
                         if r["op"] == "prefill" and r["model"] == model
                         and r["status"] == "ok" and len(r["shape"]["seqlens"]) == 1)
            if pts:
                s = next(r["shape"] for r in run["records"] if r["model"] == model)
                ax_p.plot(*zip(*pts), style, color=color,
                          label=f"{t.label}, HQ={s['HQ']} HV={s['HV']}")
                xs_p.update(x for x, _ in pts)
    ax_d.set(xscale="log", yscale="log", xlabel="batch (sequences)", ylabel="GB/s",
             title="decode, qwen3next (HQ=16 HV=32 K=V=128, T=1)")
    ax_p.set(xscale="log", yscale="log", xlabel="sequence length (tokens)", ylabel="tokens/s",
             title="prefill, one sequence, K=V=128")
    for ax, xs in ((ax_d, xs_d), (ax_p, xs_p)):
        if xs:  # label the measured sizes themselves, not powers of ten
            ax.xaxis.set_major_locator(FixedLocator(sorted(xs)))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        # Plain numbers on the log y axis; minor ticks labelled only within ~1 decade.
        lo, hi = ax.get_ylim()
        plain = FuncFormatter(lambda v, _: fmt_rate(v))
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(plain if hi / max(lo, 1e-30) < 30 else NullFormatter())
        ax.grid(True, which="both", lw=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return True


def regenerate_command(args):
    """The command line that wrote this file, paths from the repository root; a
    folder's every JSON file is written as its glob."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rel = lambda p: os.path.relpath(os.path.abspath(p), root)
    files = sorted(rel(p) for p in args.json)
    folders = {os.path.dirname(p) for p in files}
    if len(folders) == 1:
        folder = folders.pop()
        every = sorted(rel(p) for p in glob.glob(os.path.join(root, folder, "*.json")))
        if every == files:
            files = [os.path.join(folder, "*.json")]
    cmd = ["python3 bench/make_tables.py", *files, "-o", rel(args.output)]
    if args.png:
        cmd += ["--png", rel(args.png)]
    return " ".join(cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", nargs="+", help="dk_bench --json files")
    ap.add_argument("-o", "--output", required=True, help="Markdown file to write")
    ap.add_argument("--png", help="chart to write (needs matplotlib)")
    args = ap.parse_args()

    runs = load(sorted(args.json))
    targets = group(runs)
    rows = workload_rows(runs)
    cols = columns(targets)
    outdir = os.path.dirname(os.path.abspath(args.output))
    rel = lambda p: os.path.relpath(os.path.abspath(p), outdir)
    commits = sorted({r["commit"] for r in runs})
    rel_bench = rel(os.path.join(os.path.dirname(os.path.abspath(__file__)), "README.md"))
    inputs = " ".join(rel(p) for p in sorted(args.json))

    md = ["# deltakit performance", "",
          "Generated by `bench/make_tables.py` from the JSON records in this folder; do not edit.",
          "Regenerate (from the repository root):", "",
          "```sh",
          regenerate_command(args),
          "```", "",
          f"Commits measured: {', '.join(f'`{c}`' for c in commits)}.", ""]
    if args.png:
        md += ["![decode GB/s against batch, prefill tokens/s against length]"
               f"({rel(args.png)})", ""]
    md += ["## How to read it", "",
           "- Every workload runs the configuration engines use: bf16 q/k/v/out, raw scalar gate "
           "(`a` bf16, `A_log`/`dt_bias` fp32; per key, `a` [B, T, HV, K] and `dt_bias` [HV, K], "
           "in the `kimi-linear` rows), beta as a bf16 logit, q/k L2 norm, K-last state "
           "pool (V-last in the `-vlast` rows) addressed by int32 indices (scattered "
           "slots), random non-zero inputs.",
           "- Time: median over the timed calls (CUDA/HIP events on GPUs, steady_clock on the "
           "CPU), taken in several passes over all workloads after warm-up, with the caches "
           "flushed before every timed call (GPUs: a memset of max(256 MiB, 4x L2); CPU: a read "
           "of more than twice the last-level cache, since runs at f3b6aef; earlier CPU runs "
           "used a memset that glibc does with non-temporal stores, which did not evict). "
           "See [bench/README.md](" + rel_bench + ") for the method.",
           "- Decode **bytes** = state slots read + written (at the state dtype) + q/k/v/out/gate/"
           "beta/parameter/index bytes once. **GB/s** = bytes / median time; the percentage is of "
           "the device-to-device copy bandwidth (`dk_memcpy`, bytes read + written) measured in "
           "the same run. On the CPU backend a large `dk_memcpy` runs on the OpenMP threads "
           "the kernels use (runs recorded before that used one thread's `memmove`, which a "
           "2-thread decode could exceed).",
           "- *host/call*: host time per eager call, the median of batches of back-to-back "
           "calls. *(bare N)* (CUDA, runs since dk_bench recorded it): the same batches of a bare "
           "launch measured after each batch, a kernel that only waits as long as the call "
           "takes on the GPU, with a parameter block the size of deltakit's decode kernels', "
           "launched through the driver: the driver's share of the host time on that host. "
           "*(query N)* (runs since dk_bench recorded it): as many `dk_*_query` calls after each "
           "batch, the library's own checks and kernel choice without a launch.",
           "- Decode *in graph* (GPUs): the time per call of one CUDA/HIP graph of R decode "
           "calls, call i on its own copy i of the tensors, R copies of the state spanning at "
           "least 4x the L2 (R at most 1024), replays timed back to back: replay time / R. This "
           "is how engines run decode (one call per layer inside one graph, each layer's state "
           "cold), without the isolated timing's per-call event and flush overhead (a few µs). "
           "The percentage is of the copy bandwidth, as above.",
           "- Decode *in graph, PDL* (CUDA, sm_90+): the same graph captured with "
           "`DK_OPTION_PROGRAMMATIC_LAUNCH` on, so that each call's launch overlaps the end of "
           "the one before (runs since 737afce). A CUDA context of sm_90 or newer has the option "
           "on by default in the code today; dk_bench "
           "turns it off for every other column, isolated, *in graph* and *host/call*.",
           "- Prefill **TFLOP/s** = 4·Ntok·HV·K·V / time, the convention peers publish (not the "
           "FLOPs the chunked algorithm executes).",
           "- *compiled, not run here* columns: targets this build compiles for but that no "
           "machine here ran. Their decode cells give the time floor at the datasheet bandwidth "
           "(bytes / bandwidth: "
           + ", ".join(f"{d['label']} {fmt_num(d['bw'], 4)} GB/s" for d in DATASHEET)
           + "); nothing in them is measured.",
           "- `–`: the workload was not part of that target's runs (each target runs its own set: "
           "the CPU the `--quick` one, with shorter prefills and no V-last rows; GPUs the full "
           "one).",
           "- † (CPU): other tasks were runnable on the host while it was measured; the "
           "number is noise, not the kernel.", ""]
    for op, title in (("decode", "Decode"), ("prefill", "Prefill")):
        lines = table(op, rows, cols)
        if lines:
            md += [f"## {title}", ""] + lines + [""]

    md += ["## Reproducibility", "",
           f"Runs of the same target and mode; the target is every median within "
           f"{SPREAD_LIMIT:.0f}% (bold: over it).", ""] + reproducibility(targets)

    md += ["## Measured targets", ""]
    for t in targets:
        last = t.runs[-1]
        d = last["device"]
        md += [f"### {t.label}", "",
               f"- device: {d['name']} ({d['vendor']}), arch `{d['arch']}`, compiled archs "
               f"`{d['compiled_archs']}`, {d['compute_units']} compute units; "
               "datasheet bandwidth " + (f"{fmt_num(d['peak_bandwidth_gbps'])} GB/s"
                                         if d["peak_bandwidth_gbps"] else "unknown"),
               f"- toolkit: {last['toolkit']}",
               f"- copy bandwidth (newest run): {fmt_num(last['copy_bandwidth']['gbps'])} GB/s",
               f"- timing: {last['timing']['method']}, {last['timing']['rounds']} passes, "
               f"{last['timing']['warmup_per_round']} warm-up calls per pass, at least "
               f"{last['timing']['repeat']} timed calls per workload, "
               f"{last['timing']['flush_bytes'] >> 20} MiB flush before each",
               "- runs (file: commit, mode, start time, host; the command that produced it, then "
               "the dk_bench command line):"]
        for run in t.runs:
            hl = run.get("host_load", {})
            md.append(f"  - [`{rel(run['path'])}`]({rel(run['path'])}): `{run['commit']}`, "
                      f"{run['mode']}, {run['timestamp']}, {hl.get('cores', '?')} cores, "
                      f"{fmt_num(hl.get('other_runnable_before'), 2)} other runnable tasks "
                      "at the start")
            if run.get("invocation"):
                md.append(f"    - `{run['invocation']}`")
            md.append(f"    - `{run['command']}`")
        md += ["", "Newest run of each workload:", ""] + detail_table(t) + [""]

    with open(args.output, "w") as f:
        f.write("\n".join(md))
    print(f"make_tables: wrote {args.output} ({len(rows)} workloads, {len(targets)} measured "
          f"target(s), {len(cols) - len(targets)} datasheet target(s)) from {inputs}")
    if args.png and chart(args.png, targets):
        print(f"make_tables: wrote {args.png}")


if __name__ == "__main__":
    main()
