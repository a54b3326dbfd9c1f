// What one bench run measured, and its two outputs: the stdout table and the
// JSON records that bench/make_tables.py merges across machines.
#pragma once
#include <deltakit/deltakit.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "workloads.hpp"

namespace dkb {

struct stats {
  double median = 0, min = 0, max = 0;
  int n = 0;
};
stats summarize(std::vector<double> samples);  // n == 0 for no samples

struct result {
  workload w;
  std::string status = "ok";  // ok | unsupported | failed | bad_output
  std::string message;        // why, when not ok
  std::string impl;
  std::vector<double> us;         // per-call device time of eager calls
  std::vector<double> round_us;   // median of each round's share of `us`
  std::vector<double> graph_us;   // per-replay device time of a one-call graph (decode on GPUs)
  std::string graph_note;         // why there is no graph time
  std::vector<double> stream_us;  // per-call time in a graph of stream_calls calls (replay / R)
  int stream_calls = 0;           // R: calls per graph, each on its own copy of the tensors
  std::string stream_note;        // why there is no stream time, or a caveat about it
  std::vector<double> stream_pdl_us;  // the same graph with DK_OPTION_PROGRAMMATIC_LAUNCH on
  std::string stream_pdl_note;        // why there is no such time
  // --copy-reference: per copy of a graph of R device-to-device copies of bytes_moved / 2
  // each (the same bytes read and written as a call): the graph's copy path, not a
  // ceiling of stream_us (memcpy nodes are slower than the decode on the H200).
  std::vector<double> stream_copy_us;
  std::string stream_copy_note;
  double host_us = -1;            // host time per eager call; < 0 when not measured
  double host_pdl_us = -1;        // the same with DK_OPTION_PROGRAMMATIC_LAUNCH on (decode)
  // Asynchronous backends: host time per call of each batch of back-to-back
  // calls, every round's; host_us / host_pdl_us are their medians.
  std::vector<double> host_batch_us, host_pdl_batch_us;
  // The timer's bare launch (timer::bare_launch) after each batch: the driver's
  // share of the host time, measured alongside; host_bare_us / host_pdl_bare_us
  // are their medians (< 0: not measured).
  std::vector<double> host_bare_batch_us, host_pdl_bare_batch_us;
  double host_bare_us = -1, host_pdl_bare_us = -1;
  std::string host_bare_note;  // why there is no bare launch (empty when there is)
  // dk_*_query after each batch (without the option), as many calls back to back:
  // the library's checks and kernel choice, the most of its own share of a call.
  std::vector<double> host_query_batch_us;
  double host_query_us = -1;
  double busy = -1;               // other runnable tasks around the workload (host_load.hpp)

  // Bytes moved / the median of `samples_us`, in GB/s; 0 without samples.
  double gbps_of(const std::vector<double>& samples_us) const;
  // Derived from the median eager time and the copy bandwidth.
  double gbps() const;
  double stream_gbps() const;  // the same from the median stream time; 0 without one
  double stream_pdl_gbps() const;
  double stream_copy_gbps() const;
  double tokens_per_s() const;
  double tflops() const;
};

struct run_info {
  std::string commit, command, mode, timestamp;
  std::string invocation;  // the wrapper command, when one passed --invocation
  dk_device_info device{};
  std::string backend, toolkit, timer_method;
  std::size_t flush_bytes = 0;
  int warmup = 0, repeat = 0, rounds = 1;    // warm-up per round; timed calls over all rounds
  bool copy_reference = false;               // --copy-reference
  int stream_calls_min = 0;                  // --stream-calls (0: not given)
  std::size_t copy_bytes = 0;                // bytes per dk_memcpy (traffic is twice this)
  std::vector<double> copy_us;               // per-copy times
  std::vector<double> copy_round_gbps;       // from the median copy time of each round
  double copy_gbps = 0;                      // (read + written) / median time
  int cores = 0;                             // online CPUs of the host
  double load_before = -1, load_after = -1;  // 1-minute load average around the run
  double busy_before = -1, busy_after = -1;  // other runnable tasks around the run
};

void print_table(std::FILE* f, const run_info& run, const std::vector<result>& results);
// Returns false (and says why on stderr) when the file cannot be written.
bool write_json(const std::string& path, const run_info& run, const std::vector<result>& results);

}  // namespace dkb
