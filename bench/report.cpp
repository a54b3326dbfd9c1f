#include "report.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "json.hpp"

namespace dkb {

stats summarize(std::vector<double> v) {
  stats s;
  s.n = static_cast<int>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.min = v.front();
  s.max = v.back();
  return s;
}

double result::gbps_of(const std::vector<double>& samples_us) const {
  const stats s = summarize(samples_us);
  return s.n ? double(w.bytes_moved()) / (s.median * 1e3) : 0.0;
}
double result::gbps() const { return gbps_of(us); }
double result::stream_gbps() const { return gbps_of(stream_us); }
double result::stream_pdl_gbps() const { return gbps_of(stream_pdl_us); }
double result::stream_copy_gbps() const { return gbps_of(stream_copy_us); }
double result::tokens_per_s() const {
  const stats s = summarize(us);
  return s.n ? double(w.num_tokens()) / (s.median * 1e-6) : 0.0;
}
double result::tflops() const {
  const stats s = summarize(us);
  return s.n ? w.flops() / (s.median * 1e6) : 0.0;
}

namespace {

std::string stats_json(const std::vector<double>& samples) {
  if (samples.empty()) return json::null();
  const stats s = summarize(samples);
  return json::object({{"median", json::num(s.median)},
                       {"min", json::num(s.min)},
                       {"max", json::num(s.max)},
                       {"n", json::integer(s.n)},
                       {"samples", json::numbers(samples)}});
}

std::string device_json(const run_info& run) {
  const dk_device_info& d = run.device;
  return json::object({{"name", json::str(d.name)},
                       {"vendor", json::str(d.vendor)},
                       {"arch", json::str(d.arch)},
                       {"compiled_archs", json::str(d.compiled_archs)},
                       {"compute_units", json::integer(d.compute_units)},
                       {"memory_bytes", json::integer(d.memory_bytes)},
                       {"peak_bandwidth_gbps", json::num(d.peak_bandwidth_gbps)}});
}

std::string config_json(const workload& w) {
  return json::object({{"gate", json::str(w.per_key ? "per-key, raw (a, A_log, dt_bias)" : "scalar, raw (a, A_log, dt_bias)")},
                       {"beta", json::str("logit")},
                       {"qk_l2norm", json::boolean(true)},
                       {"state_layout", json::str(w.v_last ? "v_last" : "k_last")},
                       {"slot_order", json::str(w.ascending_slots ? "ascending" : "shuffled")},
                       {"state_out", json::str(w.other_out_slots ? "other_slots" : "in_place")},
                       {"scale", json::str("1/sqrt(K)")}});
}

std::string record_json(const run_info& run, const result& r) {
  const bool ok = r.status == "ok" || r.status == "bad_output";
  const bool decode = r.w.op == "decode";
  const double gbps = ok ? r.gbps() : 0.0;
  const bool stream = ok && !r.stream_us.empty();
  const bool stream_pdl = ok && !r.stream_pdl_us.empty();
  const bool stream_copy = ok && !r.stream_copy_us.empty();
  const double peak = run.device.peak_bandwidth_gbps;
  std::string roofline = json::null();
  if (ok && decode)
    roofline = json::object({{"bound", json::str("memory")},
                             {"reference", json::str("measured copy bandwidth")},
                             {"gbps", json::num(run.copy_gbps)},
                             {"percent", json::num(100.0 * gbps / run.copy_gbps)}});
  else if (ok)  // prefill is compute bound; no measured compute roofline yet
    roofline = json::object(
        {{"bound", json::str("compute")}, {"reference", json::null()}, {"percent", json::null()}});
  return json::object({
      {"workload", json::str(r.w.name)},
      {"op", json::str(r.w.op)},
      {"model", json::str(r.w.model)},
      {"status", json::str(r.status)},
      {"message", json::str(r.message)},
      {"commit", json::str(run.commit)},
      {"mode", json::str(run.mode)},
      {"backend", json::str(run.backend)},
      {"impl", json::str(r.impl)},
      {"device", json::str(run.device.name)},
      {"arch", json::str(run.device.arch)},
      {"toolkit", json::str(run.toolkit)},
      {"shape", r.w.shape_json()},
      {"dtypes", r.w.dtypes_json()},
      {"config", config_json(r.w)},
      {"time_us", stats_json(r.us)},
      {"graph_time_us", stats_json(r.graph_us)},
      {"graph_note", json::str(r.graph_note)},
      {"stream_time_us", stats_json(r.stream_us)},
      {"stream_calls_per_graph", r.stream_calls > 0 ? json::integer(r.stream_calls) : json::null()},
      {"stream_note", json::str(r.stream_note)},
      {"stream_pdl_time_us", stats_json(r.stream_pdl_us)},
      {"stream_pdl_note", json::str(r.stream_pdl_note)},
      {"stream_copy_time_us", stats_json(r.stream_copy_us)},
      {"stream_copy_note", json::str(r.stream_copy_note)},
      {"round_medians_us", json::numbers(r.round_us)},
      {"host_us_per_call", r.host_us >= 0 ? json::num(r.host_us) : json::null()},
      {"host_pdl_us_per_call", r.host_pdl_us >= 0 ? json::num(r.host_pdl_us) : json::null()},
      {"host_batches_us", json::numbers(r.host_batch_us)},
      {"host_pdl_batches_us", json::numbers(r.host_pdl_batch_us)},
      {"host_bare_us_per_launch", r.host_bare_us >= 0 ? json::num(r.host_bare_us) : json::null()},
      {"host_pdl_bare_us_per_launch", r.host_pdl_bare_us >= 0 ? json::num(r.host_pdl_bare_us) : json::null()},
      {"host_bare_batches_us", json::numbers(r.host_bare_batch_us)},
      {"host_pdl_bare_batches_us", json::numbers(r.host_pdl_bare_batch_us)},
      {"host_bare_note", r.host_bare_note.empty() ? json::null() : json::str(r.host_bare_note)},
      {"host_query_us_per_call", r.host_query_us >= 0 ? json::num(r.host_query_us) : json::null()},
      {"host_query_batches_us", json::numbers(r.host_query_batch_us)},
      {"bytes", json::integer(r.w.bytes_moved())},
      {"flops", json::integer(static_cast<int64_t>(r.w.flops()))},
      {"tokens", json::integer(r.w.num_tokens())},
      {"gbps", ok ? json::num(gbps) : json::null()},
      {"pct_copy_bw", ok ? json::num(100.0 * gbps / run.copy_gbps) : json::null()},
      {"stream_gbps", stream ? json::num(r.stream_gbps()) : json::null()},
      {"stream_pct_copy_bw",
       stream ? json::num(100.0 * r.stream_gbps() / run.copy_gbps) : json::null()},
      {"stream_pdl_pct_copy_bw",
       stream_pdl ? json::num(100.0 * r.stream_pdl_gbps() / run.copy_gbps) : json::null()},
      {"stream_copy_pct_copy_bw",
       stream_copy ? json::num(100.0 * r.stream_copy_gbps() / run.copy_gbps) : json::null()},
      {"pct_peak_bw", ok && peak > 0 ? json::num(100.0 * gbps / peak) : json::null()},
      {"tokens_per_s", ok ? json::num(r.tokens_per_s()) : json::null()},
      {"tflops", ok ? json::num(r.tflops()) : json::null()},
      {"roofline", roofline},
      {"host_other_runnable", r.busy >= 0 ? json::num(r.busy) : json::null()},
  });
}

}  // namespace

void print_table(std::FILE* f, const run_info& run, const std::vector<result>& results) {
  std::fprintf(f, "# deltakit bench  commit %s  mode %s  backend %s\n", run.commit.c_str(),
               run.mode.c_str(), run.backend.c_str());
  std::fprintf(f, "# device %s  arch %s  %s\n", run.device.name, run.device.arch,
               run.toolkit.c_str());
  std::fprintf(f,
               "# copy bandwidth %.1f GB/s (dk_memcpy device-to-device, %zu MiB, read + written)\n",
               run.copy_gbps, run.copy_bytes >> 20);
  std::fprintf(f,
               "# host: %d cores, load average %.2f before / %.2f after, other runnable tasks "
               "%.1f before / %.1f after\n",
               run.cores, run.load_before, run.load_after, run.busy_before, run.busy_after);
  std::fprintf(
      f,
      "# time: %s, median of at least %d calls (n) over %d rounds, %d warm-up calls per round, "
      "%zu MiB cache flush before each call\n",
      run.timer_method.c_str(), run.repeat, run.rounds, run.warmup, run.flush_bytes >> 20);
  std::fprintf(f,
               "# graph_us: decode replayed alone from a one-call graph, flushed like the eager "
               "calls; stream_us: per call of a graph of R decode calls, each on its own copy of "
               "the tensors (replay / R); str%%copy: its %% of the copy bandwidth; pdl_us, "
               "pdl%%copy: the same graph with DK_OPTION_PROGRAMMATIC_LAUNCH on; host_pdl: "
               "host_us with that option on\n");
  // Markdown rows, aligned for the terminal; TFLOP/s only means something for prefill.
  std::fprintf(f,
               "| %-36s | %-28s | %10s | %10s | %10s | %5s | %9s | %9s | %9s | %9s | %3s | %8s | %9s | "
               "%8s | %8s | %6s | %9s | %7s |\n",
               "workload", "impl", "median_us", "min_us", "max_us", "n", "host_us", "host_pdl", "graph_us",
               "stream_us", "R", "str%copy", "pdl_us", "pdl%copy", "GB/s", "%copy", "tokens/s",
               "TFLOP/s");
  std::fprintf(f, "|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n",
               std::string(38, '-').c_str(), std::string(30, '-').c_str(), "-----------:",
               "-----------:", "-----------:", "------:", "----------:", "----------:", "----------:",
               "----------:", "----:", "---------:", "----------:", "---------:", "---------:",
               "-------:", "----------:", "--------:");
  for (const result& r : results) {
    if (r.status != "ok" && r.status != "bad_output") {
      std::fprintf(f, "| %-36s | %-28s | %s: %s |\n", r.w.name.c_str(),
                   r.impl.empty() ? "-" : r.impl.c_str(), r.status.c_str(), r.message.c_str());
      continue;
    }
    const stats s = summarize(r.us), g = summarize(r.graph_us), st = summarize(r.stream_us);
    const stats pdl = summarize(r.stream_pdl_us);
    char graph[32] = "-", stream[32] = "-", calls[16] = "-", stream_pct[32] = "-";
    char pdl_us[32] = "-", pdl_pct[32] = "-";
    if (pdl.n) {
      std::snprintf(pdl_us, sizeof pdl_us, "%.2f", pdl.median);
      std::snprintf(pdl_pct, sizeof pdl_pct, "%.1f%%", 100.0 * r.stream_pdl_gbps() / run.copy_gbps);
    }
    char host[32] = "-", host_pdl[32] = "-", tflops[32] = "-";
    if (g.n) std::snprintf(graph, sizeof graph, "%.2f", g.median);
    if (st.n) {
      std::snprintf(stream, sizeof stream, "%.2f", st.median);
      std::snprintf(calls, sizeof calls, "%d", r.stream_calls);
      std::snprintf(stream_pct, sizeof stream_pct, "%.1f%%",
                    100.0 * r.stream_gbps() / run.copy_gbps);
    }
    if (r.host_us >= 0) std::snprintf(host, sizeof host, "%.2f", r.host_us);
    if (r.host_pdl_us >= 0) std::snprintf(host_pdl, sizeof host_pdl, "%.2f", r.host_pdl_us);
    if (r.w.op == "prefill") std::snprintf(tflops, sizeof tflops, "%.4g", r.tflops());
    std::fprintf(f,
                 "| %-36s | %-28s | %10.2f | %10.2f | %10.2f | %5d | %9s | %9s | %9s | %9s | %3s | "
                 "%8s | %9s | %8s | %8.1f | %5.1f%% | %9.4g | %7s |\n",
                 r.w.name.c_str(), r.impl.c_str(), s.median, s.min, s.max, s.n, host, host_pdl, graph, stream,
                 calls, stream_pct, pdl_us, pdl_pct, r.gbps(), 100.0 * r.gbps() / run.copy_gbps, r.tokens_per_s(),
                 tflops);
    if (r.status == "bad_output") std::fprintf(f, "  ^ %s\n", r.message.c_str());
  }
  // --copy-reference: the same bytes moved by a graph of device copies, per decode row.
  for (const result& r : results) {
    const stats c = summarize(r.stream_copy_us);
    if (c.n)
      std::fprintf(f, "# copy reference, %s: %.2f us per call in a graph of %d copies (%.1f%% of copy bandwidth)\n",
                   r.w.name.c_str(), c.median, r.stream_calls, 100.0 * r.stream_copy_gbps() / run.copy_gbps);
    else if (!r.stream_copy_note.empty())
      std::fprintf(f, "# copy reference, %s: %s\n", r.w.name.c_str(), r.stream_copy_note.c_str());
  }
}

bool write_json(const std::string& path, const run_info& run, const std::vector<result>& results) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "dk_bench: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  json::members head = {
      {"schema", json::str("deltakit-bench/1")},
      {"commit", json::str(run.commit)},
      {"command", json::str(run.command)},
      {"invocation", json::str(run.invocation)},
      {"mode", json::str(run.mode)},
      {"timestamp", json::str(run.timestamp)},
      {"backend", json::str(run.backend)},
      {"device", device_json(run)},
      {"toolkit", json::str(run.toolkit)},
      {"host_load", json::object({{"cores", json::integer(run.cores)},
                                  {"load_average_before", json::num(run.load_before)},
                                  {"load_average_after", json::num(run.load_after)},
                                  {"other_runnable_before", json::num(run.busy_before)},
                                  {"other_runnable_after", json::num(run.busy_after)}})},
      {"timing", json::object({{"method", json::str(run.timer_method)},
                               {"rounds", json::integer(run.rounds)},
                               {"warmup_per_round", json::integer(run.warmup)},
                               {"repeat", json::integer(run.repeat)},
                               {"copy_reference", json::boolean(run.copy_reference)},
                               {"stream_calls_min", json::integer(run.stream_calls_min)},
                               {"flush_bytes", json::integer(int64_t(run.flush_bytes))}})},
      {"copy_bandwidth",
       json::object({{"bytes_per_copy", json::integer(int64_t(run.copy_bytes))},
                     {"time_us", stats_json(run.copy_us)},
                     {"gbps", json::num(run.copy_gbps)},
                     {"round_gbps", json::numbers(run.copy_round_gbps)},
                     {"note", json::str("dk_memcpy device-to-device; GB/s = "
                                        "(bytes read + written) / median time; round_gbps: "
                                        "the same from each round's copies")}})},
  };
  std::fputs("{\n", f);
  for (const auto& [k, v] : head) std::fprintf(f, "  %s: %s,\n", json::str(k).c_str(), v.c_str());
  std::fputs("  \"records\": [\n", f);
  for (std::size_t i = 0; i < results.size(); ++i)
    std::fprintf(f, "    %s%s\n", record_json(run, results[i]).c_str(),
                 i + 1 < results.size() ? "," : "");
  std::fputs("  ]\n}\n", f);
  const bool ok = std::fclose(f) == 0;
  if (!ok) std::fprintf(stderr, "dk_bench: error writing %s\n", path.c_str());
  return ok;
}

}  // namespace dkb
