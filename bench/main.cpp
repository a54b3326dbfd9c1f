// dk_bench: the standard workloads of SPEC §7 over the public C API.
//
//   dk_bench [--backend cpu|cuda|hip] [--device N] [--quick] [--filter SUBSTR]...
//            [--rounds N] [--repeat N] [--warmup N] [--json FILE] [--commit ID]
//            [--invocation TEXT] [--copy-reference] [--stream-calls N]
//            [--slot-order shuffled|ascending] [--state-out in-place|other-slots] [--list]
//
// Every workload's tensors are set up once. Then --rounds passes go over all
// workloads; in each, a workload gets warm-up calls and its share of --repeat
// calls, each timed alone after a cache flush (timer.hpp), batches of eager
// calls for the host time per call, and the device copy bandwidth is measured
// again. Spreading the samples over the whole run makes the medians robust to
// slow drifts of a shared machine. The first round also times decode replayed
// from a CUDA/HIP graph, alone and in a graph of many calls on rotating copies
// of its tensors ("stream", as in an engine's decode graph).
// A table goes to stdout, progress to stderr, records to --json.
#include <deltakit/deltakit.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "buffers.hpp"
#include "host_load.hpp"
#include "options.hpp"
#include "report.hpp"
#include "timer.hpp"
#include "workloads.hpp"

#ifndef DKB_COMMIT
#define DKB_COMMIT "unknown"
#endif

namespace dkb {
namespace {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

dk_backend backend_id(const std::string& name) {
  return name == "cuda" ? DK_BACKEND_CUDA : name == "hip" ? DK_BACKEND_HIP : DK_BACKEND_CPU;
}

// The context for --backend/--device, or the best device present.
dk_status open_context(const options& o, dk_context** ctx) {
  if (!o.backend.empty()) return dk_context_create(backend_id(o.backend), o.device, ctx);
  dk_backend compiled[8];
  int32_t n = 0;
  if (dk_status s = dk_backends_compiled(compiled, 8, &n); s != DK_STATUS_SUCCESS) return s;
  for (int32_t i = 0; i < std::min<int32_t>(n, 8); ++i) {
    int32_t count = 0;
    if (dk_device_count(compiled[i], &count) == DK_STATUS_SUCCESS && count > o.device)
      return dk_context_create(compiled[i], o.device, ctx);
  }
  return dk_context_create_best(ctx);
}

std::unique_ptr<timer> open_timer(dk_context* ctx, const dk_device_info& info, std::string* why) {
  switch (info.backend) {
    case DK_BACKEND_CPU:
      return make_cpu_timer(ctx, why);
#if DKB_WITH_CUDA
    case DK_BACKEND_CUDA:
      return make_cuda_timer(ctx, info.device_id, why);
#endif
#if DKB_WITH_HIP
    case DK_BACKEND_HIP:
      return make_hip_timer(ctx, info.device_id, why);
#endif
    default:
      *why = std::string("this dk_bench was built without timing for backend ") +
             dk_backend_name(static_cast<dk_backend>(info.backend));
      return nullptr;
  }
}

// Device-to-device dk_memcpy of 1 GiB (256 MiB on the CPU): `samples` more
// copy times appended to run->copy_us; GB/s = (bytes read + written) / median.
void measure_copy(dk_context* ctx, timer& t, int samples, run_info* run) {
  void *src = nullptr, *dst = nullptr;
  check(dk_malloc(ctx, run->copy_bytes, &src), "dk_malloc (copy bandwidth)");
  if (dk_status s = dk_malloc(ctx, run->copy_bytes, &dst); s != DK_STATUS_SUCCESS) {
    dk_free(ctx, src);
    check(s, "dk_malloc (copy bandwidth)");
  }
  dk_status s = dk_memset(ctx, src, 0x5a, run->copy_bytes, t.stream());
  if (s == DK_STATUS_SUCCESS) s = dk_memset(ctx, dst, 0, run->copy_bytes, t.stream());
  if (s == DK_STATUS_SUCCESS)
    s = t.time_calls(
        [&](void* stream) {
          return dk_memcpy(ctx, dst, src, run->copy_bytes, DK_COPY_DEVICE_TO_DEVICE, stream);
        },
        1, samples, false, &run->copy_us);
  dk_free(ctx, src);
  dk_free(ctx, dst);
  check(s, "dk_memcpy (copy bandwidth)");
  auto gbps = [&](double us) { return 2.0 * double(run->copy_bytes) / (us * 1e3); };
  const std::vector<double> round(run->copy_us.end() - samples, run->copy_us.end());
  run->copy_round_gbps.push_back(gbps(summarize(round).median));
  run->copy_gbps = gbps(summarize(run->copy_us).median);
}

// A workload being measured: its result so far and its device tensors.
struct entry {
  result r;
  std::unique_ptr<bench_case> c;
};

// Allocates, fills and queries one workload; failures land in the result.
entry prepare(dk_context* ctx, const workload& w) {
  entry e;
  e.r.w = w;
  try {
    e.c = make_case(ctx, w);
    const char* impl = nullptr;
    dk_status s = e.c->query(&impl);
    if (impl) e.r.impl = impl;
    if (s != DK_STATUS_SUCCESS) {
      e.r.status = s == DK_STATUS_UNSUPPORTED ? "unsupported" : "failed";
      e.r.message = std::string(dk_status_string(s)) + ": " + dk_last_error();
      e.c.reset();
    }
  } catch (const std::exception& ex) {  // dk_failure, or host memory exhausted
    e.r.status = "failed";
    e.r.message = ex.what();
    e.c.reset();
  }
  return e;
}

// A round of a cheap workload keeps taking samples (up to kMaxSampleFactor
// times its share) until it has lasted kMinRoundSeconds: the median of a call
// of tens of microseconds needs many samples to settle on a shared machine.
constexpr double kMinRoundSeconds = 0.25;
constexpr int kMaxSampleFactor = 8;
constexpr int kHostTimeBatches = 5;  // batches of back-to-back eager calls per round for the host time

// --copy-reference: a graph of R device-to-device copies of bytes_moved / 2 each
// (the bytes a call reads and writes), timed like the decode graph: per copy.
// In a CUDA graph these are memcpy nodes, which on the H200 move 62-65 % of the
// copy bandwidth at large sizes: a reference for the graph's copy path, not a
// ceiling for a kernel.
void measure_stream_copy(dk_context* ctx, timer& t, int replays, result* r) {
  const size_t bytes = size_t(r->w.bytes_moved() / 2);
  std::vector<void*> buffers(2 * size_t(r->stream_calls), nullptr);
  auto release = [&] {
    for (void* b : buffers)
      if (b) dk_free(ctx, b);
  };
  for (void*& b : buffers)
    if (dk_malloc(ctx, bytes, &b) != DK_STATUS_SUCCESS) {
      r->stream_copy_note = std::string("buffers: ") + dk_last_error();
      release();
      return;
    }
  std::vector<launch_fn> copies;
  for (size_t i = 0; i < buffers.size(); i += 2) {
    void* dst = buffers[i];
    const void* src = buffers[i + 1];
    copies.push_back([ctx, dst, src, bytes](void* stream) {
      return dk_memcpy(ctx, dst, src, bytes, DK_COPY_DEVICE_TO_DEVICE, stream);
    });
  }
  std::vector<double> replay_us;
  if (t.time_graph(copies, 3, replays, false, &replay_us, &r->stream_copy_note))
    for (double us : replay_us) r->stream_copy_us.push_back(us / r->stream_calls);
  release();
}

// The in-graph ("stream") decode time. An engine runs decode inside one graph,
// one call per layer, each layer's state cold and no timer between the calls.
// Modelled by R independent copies of the workload's tensors (the first is the
// workload's own) and one graph of R calls, call i on copy i. R copies of the
// state span at least 4x the last-level cache (R capped at 1024), so a copy's
// state has left the cache before the next replay reaches it and no flush is
// needed; --stream-calls raises R (a model's layer count). Replays are timed
// back to back; per-call time = replay time / R, which carries 1/R of the
// graph's own start (small R overstates it, NOTES.md v13 of kernels/decode).
// The copies exist only for this measurement. Failures only fill stream_note.
// Where the context takes DK_OPTION_PROGRAMMATIC_LAUNCH, the same graph is
// captured and timed a second time with it on (stream_pdl_us).
void measure_stream(dk_context* ctx, timer& t, int replays, const run_info& run, entry* e) {
  result& r = e->r;
  if (r.graph_us.empty()) {
    r.stream_note = "no graph timing: " + r.graph_note;
    return;
  }
  const double llc = double(t.last_level_cache_bytes());
  const double pool = double(std::max<int64_t>(r.w.state_pool_bytes(), 1));
  r.stream_calls = std::clamp(std::max(static_cast<int>(std::ceil(4.0 * llc / pool)), run.stream_calls_min), 2, 1024);
  std::vector<std::unique_ptr<bench_case>> copies;
  std::vector<launch_fn> calls;
  std::vector<double> replay_us, pdl_replay_us;
  bench_case* own = e->c.get();
  calls.push_back([own](void* stream) { return own->launch(stream); });
  try {
    while (static_cast<int>(calls.size()) < r.stream_calls) {
      copies.push_back(make_case(ctx, r.w, static_cast<int>(calls.size())));
      bench_case* c = copies.back().get();
      calls.push_back([c](void* stream) { return c->launch(stream); });
    }
    if (!t.time_graph(calls, 3, replays, false, &replay_us, &r.stream_note)) return;
    if (dk_context_set_option(ctx, DK_OPTION_PROGRAMMATIC_LAUNCH, 1) == DK_STATUS_SUCCESS) {
      if (!t.time_graph(calls, 3, replays, false, &pdl_replay_us, &r.stream_pdl_note))
        pdl_replay_us.clear();
      check(dk_context_set_option(ctx, DK_OPTION_PROGRAMMATIC_LAUNCH, 0), "programmatic launch off");
    } else {
      r.stream_pdl_note = std::string("no programmatic launch: ") + dk_last_error();
    }
    int64_t bad = 0;
    for (const auto& c : copies) bad += c->non_finite_outputs();
    if (bad > 0) {
      r.stream_note = std::to_string(bad) + " non-finite output values in the tensor copies";
      return;
    }
  } catch (const std::exception& ex) {  // dk_failure, or host memory exhausted
    dk_context_set_option(ctx, DK_OPTION_PROGRAMMATIC_LAUNCH, 0);  // never left on for later workloads
    r.stream_note = std::string("tensor copies: ") + ex.what();
    return;
  }
  for (double us : replay_us) r.stream_us.push_back(us / r.stream_calls);
  for (double us : pdl_replay_us) r.stream_pdl_us.push_back(us / r.stream_calls);
  if (run.copy_reference) measure_stream_copy(ctx, t, replays, &r);
  // Present, with a caveat: the rotation may be too small to keep the state cold.
  char note[192] = "";
  if (llc <= 0)
    std::snprintf(note, sizeof note, "last-level cache size unknown: copies may stay cached");
  else if (r.stream_calls * pool < 4.0 * llc)  // R capped at 1024
    std::snprintf(note, sizeof note,
                  "the %d copies hold %.0f MiB of state, %.2f x the last-level cache: part of "
                  "it may stay cached between replays",
                  r.stream_calls, r.stream_calls * pool / 1048576.0, r.stream_calls * pool / llc);
  r.stream_note = note;
}

// One round of one workload: warm-up and at least `samples` timed calls, and
// batches of eager calls for the host time; in the first round also the graph
// replays (decode).
void measure_round(dk_context* ctx, timer& t, const run_info& run, int samples, bool first,
                   entry* e) {
  result& r = e->r;
  bench_case* c = e->c.get();
  auto launch = [c](void* stream) { return c->launch(stream); };
  try {
    const auto start = std::chrono::steady_clock::now();
    check(t.time_calls(launch, run.warmup, samples, true, &r.us), "timed calls");
    for (int taken = samples; taken < kMaxSampleFactor * samples;) {
      const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
      if (spent.count() >= kMinRoundSeconds) break;
      const int more = std::min(samples, kMaxSampleFactor * samples - taken);
      check(t.time_calls(launch, 0, more, true, &r.us), "timed calls");
      taken += more;
    }
    if (!t.synchronous()) {
      // Several batches in every round, their median taken after the last (finish):
      // a burst of other work on the host during one workload's batches would
      // otherwise stand for the library's cost, as it would for its device time.
      // Each batch is followed by one of the timer's bare launches (where it has
      // them), as many, keeping the GPU as busy: the same host noise hits both.
      const double device_us = summarize(r.us).median;
      // After the calls without the option, as many dk_*_query calls: the library's
      // own checks and kernel choice, with no launch.
      auto host_batches = [&](bool programmatic, std::vector<double>* out_us, std::vector<double>* bare_us) {
        std::string why;
        const launch_fn bare = t.bare_launch(device_us, programmatic, &why);
        if (!bare && r.host_bare_note.empty()) r.host_bare_note = why;
        for (int i = 0; i < kHostTimeBatches; ++i) {
          const int n = std::max(samples, 20);
          double us = 0;
          if (dk_status s = t.host_time(launch, n, &us); s != DK_STATUS_SUCCESS) return s;
          out_us->push_back(us);
          if (!programmatic) {
            const char* impl = nullptr;
            const auto q0 = std::chrono::steady_clock::now();
            for (int k = 0; k < n; ++k)
              if (dk_status s = c->query(&impl); s != DK_STATUS_SUCCESS) return s;
            const std::chrono::duration<double, std::micro> q = std::chrono::steady_clock::now() - q0;
            r.host_query_batch_us.push_back(q.count() / n);
          }
          if (!bare) continue;
          if (dk_status s = t.host_time(bare, n, &us); s != DK_STATUS_SUCCESS) return s;
          bare_us->push_back(us);
        }
        return DK_STATUS_SUCCESS;
      };
      check(host_batches(false, &r.host_batch_us, &r.host_bare_batch_us), "host time");
      // Decode again with DK_OPTION_PROGRAMMATIC_LAUNCH on, where the context takes it:
      // the driver's launch path differs with that attribute (host_pdl_us). The
      // option goes off again before any failure is reported.
      if (r.w.op == "decode" && dk_context_set_option(ctx, DK_OPTION_PROGRAMMATIC_LAUNCH, 1) == DK_STATUS_SUCCESS) {
        const dk_status s = host_batches(true, &r.host_pdl_batch_us, &r.host_pdl_bare_batch_us);
        check(dk_context_set_option(ctx, DK_OPTION_PROGRAMMATIC_LAUNCH, 0), "programmatic launch off");
        check(s, "host time, programmatic launch");
      }
    }
    if (first && r.w.op == "decode") {
      if (!t.time_graph({launch}, 3, samples, true, &r.graph_us, &r.graph_note)) r.graph_us.clear();
      measure_stream(ctx, t, std::max(samples, 20), run, e);
    }
  } catch (const dk_failure& ex) {
    r.status = "failed";
    r.message = ex.what();
    r.us.clear();
    e->c.reset();
  }
}

// After the last round: host time on synchronous backends, output check, free.
void finish(entry* e, bool synchronous) {
  result& r = e->r;
  if (!e->c) return;
  if (synchronous) r.host_us = summarize(r.us).median;  // a call returns when its work is done
  if (!r.host_batch_us.empty()) r.host_us = summarize(r.host_batch_us).median;
  if (!r.host_pdl_batch_us.empty()) r.host_pdl_us = summarize(r.host_pdl_batch_us).median;
  if (!r.host_bare_batch_us.empty()) r.host_bare_us = summarize(r.host_bare_batch_us).median;
  if (!r.host_pdl_bare_batch_us.empty()) r.host_pdl_bare_us = summarize(r.host_pdl_bare_batch_us).median;
  if (!r.host_query_batch_us.empty()) r.host_query_us = summarize(r.host_query_batch_us).median;
  try {
    if (int64_t bad = e->c->non_finite_outputs(); bad > 0) {
      r.status = "bad_output";
      r.message = std::to_string(bad) + " non-finite output values";
    }
  } catch (const dk_failure& ex) {
    r.status = "failed";
    r.message = ex.what();
  }
  e->c.reset();
}

// Progress on stderr: one line per step, rewritten in place on a terminal.
void progress(const char* step, const std::string& name, const std::string& what,
              double elapsed_s) {
  static const bool tty = isatty(fileno(stderr));
  std::fprintf(stderr, tty ? "\r\033[K[%s %4.0fs] %s %s" : "[%s %4.0fs] %s %s\n", step, elapsed_s,
               name.c_str(), what.c_str());
  std::fflush(stderr);
}

int bench_main(int argc, char** argv) {
  options o;
  if (int rc = parse_options(argc, argv, DKB_COMMIT, &o)) return rc < 0 ? 0 : rc;

  std::vector<workload> selected;
  for (workload w : standard_workloads(o.quick)) {
    w.ascending_slots = o.ascending_slots;
    w.other_out_slots = o.other_out_slots && w.op == "decode";
    bool keep = o.filters.empty();
    for (const std::string& f : o.filters) keep = keep || w.name.find(f) != std::string::npos;
    if (keep) selected.push_back(w);
  }
  if (o.list) {
    for (const workload& w : selected) std::printf("%s\n", w.name.c_str());
    return 0;
  }
  if (selected.empty()) {
    std::fprintf(stderr, "dk_bench: no workload matches the filters (see --list)\n");
    return 2;
  }

  dk_context* ctx = nullptr;
  if (dk_status s = open_context(o, &ctx); s != DK_STATUS_SUCCESS) {
    std::fprintf(stderr, "dk_bench: cannot open %s device %d: %s: %s\n",
                 o.backend.empty() ? "a" : o.backend.c_str(), o.device, dk_status_string(s),
                 dk_last_error());
    return 2;
  }
  std::unique_ptr<dk_context, dk_status (*)(dk_context*)> ctx_guard(ctx, dk_context_destroy);
  // The base columns (isolated, in graph, host) launch the ordinary way; where the
  // context takes programmatic launch (its default there) the pdl columns turn it on.
  dk_context_set_option(ctx, DK_OPTION_PROGRAMMATIC_LAUNCH, 0);

  run_info run;
  run.commit = o.commit;
  run.command = o.command;
  run.invocation = o.invocation;
  run.mode = o.quick ? "quick" : "full";
  run.timestamp = utc_now();
  dk_context_device_info(ctx, &run.device);
  run.backend = dk_backend_name(static_cast<dk_backend>(run.device.backend));
  const bool on_cpu = run.device.backend == DK_BACKEND_CPU;
  std::string why;
  std::unique_ptr<timer> t = open_timer(ctx, run.device, &why);  // destroyed before ctx
  if (!t) {
    std::fprintf(stderr, "dk_bench: %s\n", why.c_str());
    return 2;
  }
  run.toolkit = t->toolkit();
  run.timer_method = t->method();
  run.flush_bytes = t->flush_bytes();
  // The quick CPU run takes more, shorter rounds and more samples (~3.5 minutes
  // in all): this VM's memory bandwidth drifts by up to 1.7x over minutes, and
  // spreading every workload's samples over the whole run lets two runs see
  // the same mix of fast and slow phases.
  const bool cpu_quick = on_cpu && o.quick;
  run.rounds = o.rounds > 0 ? o.rounds : cpu_quick ? 24 : 3;
  run.repeat = std::max(o.repeat > 0 ? o.repeat : cpu_quick ? 192 : o.quick ? 45 : 60, run.rounds);
  run.warmup = o.warmup >= 0 ? o.warmup : o.quick ? 2 : 5;
  run.copy_reference = o.copy_reference;
  run.stream_calls_min = o.stream_calls;
  run.copy_bytes = std::size_t(on_cpu ? 256 : 1024) << 20;
  run.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  run.load_before = load_average();
  run.busy_before = other_runnable_tasks();

  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::fprintf(stderr, "dk_bench: %s on %s (%s), %zu workloads x %d rounds, mode %s\n",
               run.backend.c_str(), run.device.name, run.device.arch, selected.size(), run.rounds,
               run.mode.c_str());
  if (on_cpu && run.busy_before >= 0.5)
    std::fprintf(stderr,
                 "dk_bench: warning: %.1f other runnable tasks on %d cores: other work shares "
                 "these cores and CPU timings will be noisy\n",
                 run.busy_before, run.cores);

  std::vector<entry> entries;
  for (std::size_t i = 0; i < selected.size(); ++i) {
    char step[32];
    std::snprintf(step, sizeof step, "setup %zu/%zu", i + 1, selected.size());
    progress(step, selected[i].name, "", elapsed());
    entries.push_back(prepare(ctx, selected[i]));
    if (entries.back().r.status == "failed")
      std::fprintf(stderr, "\ndk_bench: %s: %s\n", selected[i].name.c_str(),
                   entries.back().r.message.c_str());
  }

  for (int round = 0; round < run.rounds; ++round) {
    // This round's share of the timed calls (the first rounds take the remainder).
    const int samples = run.repeat / run.rounds + (round < run.repeat % run.rounds ? 1 : 0);
    try {
      measure_copy(ctx, *t, std::max(samples / 2, 3), &run);
    } catch (const dk_failure& e) {
      std::fprintf(stderr, "\ndk_bench: copy bandwidth: %s\n", e.what());
      return 1;
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
      entry& e = entries[i];
      if (!e.c) continue;
      char step[48];
      std::snprintf(step, sizeof step, "round %d/%d %zu/%zu", round + 1, run.rounds, i + 1,
                    entries.size());
      progress(step, e.r.w.name, "...", elapsed());
      const double busy = other_runnable_tasks();
      const std::size_t before = e.r.us.size();
      measure_round(ctx, *t, run, samples, round == 0, &e);
      e.r.busy = std::max({e.r.busy, busy, other_runnable_tasks()});
      std::string what = e.r.status;
      if (e.c) {
        std::vector<double> mine(e.r.us.begin() + before, e.r.us.end());
        e.r.round_us.push_back(summarize(mine).median);
        char buf[96];
        std::snprintf(buf, sizeof buf, "%.2f us%s", summarize(mine).median,
                      on_cpu && busy >= 0.5 ? " (host busy: noisy)" : "");
        what = buf;
      }
      progress(step, e.r.w.name, what, elapsed());
      if (e.r.status == "failed") std::fprintf(stderr, "\ndk_bench: %s\n", e.r.message.c_str());
      if (round == 0 && e.c && e.r.w.op == "decode" && e.r.graph_us.empty() && !on_cpu)
        std::fprintf(stderr, "\ndk_bench: %s: no graph timing: %s\n", e.r.w.name.c_str(),
                     e.r.graph_note.c_str());
      else if (round == 0 && e.c && e.r.w.op == "decode" && !on_cpu && !e.r.stream_note.empty())
        std::fprintf(stderr, "\ndk_bench: %s: in-graph timing: %s\n", e.r.w.name.c_str(),
                     e.r.stream_note.c_str());
    }
  }
  for (entry& e : entries) finish(&e, t->synchronous());
  if (isatty(fileno(stderr))) std::fputc('\n', stderr);
  run.load_after = load_average();
  run.busy_after = other_runnable_tasks();
  std::fprintf(stderr, "dk_bench: done in %.1f s; copy bandwidth %.1f GB/s\n", elapsed(),
               run.copy_gbps);

  std::vector<result> results;
  for (entry& e : entries) results.push_back(std::move(e.r));
  print_table(stdout, run, results);
  if (!o.json_path.empty() && !write_json(o.json_path, run, results)) return 1;
  int failures = 0;
  for (const result& r : results) failures += r.status == "failed" || r.status == "bad_output";
  if (failures) std::fprintf(stderr, "dk_bench: %d workload(s) failed\n", failures);
  return failures ? 1 : 0;
}

}  // namespace
}  // namespace dkb

int main(int argc, char** argv) { return dkb::bench_main(argc, argv); }
