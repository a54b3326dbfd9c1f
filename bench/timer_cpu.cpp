// CPU timing: the CPU backend runs a call to completion before returning, so
// a steady_clock pair around the call (plus a stream sync, which is free) is
// its time. The flush reads a host buffer of max(64 MiB, 2 x the largest cache).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "timer.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace dkb {
namespace {

// The largest cache of cpu0 as sysfs reports it (sysconf's L3 figure can be
// the whole host's under a hypervisor); 0 when unknown.
std::size_t largest_cache_bytes() {
  std::size_t best = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string path =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size";
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (!f) break;
    unsigned long value = 0;
    char unit = 0;
    if (std::fscanf(f, "%lu%c", &value, &unit) >= 1)
      best = std::max<std::size_t>(best, value << (unit == 'K' ? 10 : unit == 'M' ? 20 : 0));
    std::fclose(f);
  }
  return best;
}

double now_us() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::micro>(clock::now().time_since_epoch()).count();
}

class cpu_timer final : public timer {
 public:
  explicit cpu_timer(dk_context* ctx)
      : ctx_(ctx),
        llc_(largest_cache_bytes()),
        flush_(std::max<std::size_t>(std::size_t(64) << 20, 2 * llc_), 0x5a) {}

  void* stream() const override { return nullptr; }
  const char* method() const override { return "steady_clock"; }
  std::string toolkit() const override {
#if defined(__clang__)
    return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
    return std::string("g++ ") + __VERSION__;
#else
    return "unknown compiler";
#endif
  }
  std::size_t flush_bytes() const override { return flush_.size(); }
  std::size_t last_level_cache_bytes() const override { return llc_; }
  bool synchronous() const override { return true; }

  dk_status time_calls(const launch_fn& f, int warmup, int repeat, bool flush,
                       std::vector<double>* out_us) override {
    for (int i = 0; i < warmup; ++i)
      if (dk_status s = call(f); s != DK_STATUS_SUCCESS) return s;
    for (int i = 0; i < repeat; ++i) {
      if (flush) flush_caches();
      const double t0 = now_us();
      if (dk_status s = call(f); s != DK_STATUS_SUCCESS) return s;
      out_us->push_back(now_us() - t0);
    }
    return DK_STATUS_SUCCESS;
  }

  bool time_graph(const std::vector<launch_fn>&, int, int, bool, std::vector<double>*,
                  std::string* why) override {
    *why = "no graphs on the CPU backend";
    return false;
  }

  dk_status host_time(const launch_fn& f, int n, double* out_us) override {
    const double t0 = now_us();
    for (int i = 0; i < n; ++i)
      if (dk_status s = f(nullptr); s != DK_STATUS_SUCCESS) return s;
    *out_us = (now_us() - t0) / std::max(n, 1);
    return dk_stream_synchronize(ctx_, nullptr);
  }

 private:
  dk_status call(const launch_fn& f) {
    dk_status s = f(nullptr);
    return s != DK_STATUS_SUCCESS ? s : dk_stream_synchronize(ctx_, nullptr);
  }

  // Reads (does not write) the whole flush buffer, one word per line, so the
  // caches end up holding the buffer's clean lines. (A memset of this size
  // takes glibc's non-temporal stores, which bypass the caches: the flush this
  // replaced left small states cached and small decodes 30 % apart between runs.)
  void flush_caches() {
    const std::uint64_t* data = reinterpret_cast<const std::uint64_t*>(flush_.data());
    const std::size_t n = flush_.size() / sizeof(std::uint64_t);
    std::uint64_t sum = 0;
#if defined(_OPENMP)
    // Every OpenMP thread reads a slice: the threads the CPU backend's parallel
    // regions use are then awake when the call starts, as in an engine whose
    // thread pool has just run the previous op (waking a sleeping thread in a
    // VM costs tens of microseconds, more than a whole B=1 decode).
#pragma omp parallel reduction(^ : sum)
    {
      const std::size_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      for (std::size_t i = n * t / nt; i < n * (t + 1) / nt; i += 8) sum ^= data[i];  // one word per 64-byte line
    }
#else
    for (std::size_t i = 0; i < n; i += 8) sum ^= data[i];
#endif
    flush_sink_ = flush_sink_ ^ sum;  // keeps the reads
  }

  dk_context* ctx_;
  std::size_t llc_;
  std::vector<unsigned char> flush_;  // filled once (nonzero): never written again
  volatile std::uint64_t flush_sink_ = 0;
};

}  // namespace

std::unique_ptr<timer> make_cpu_timer(dk_context* ctx, std::string*) {
  return std::make_unique<cpu_timer>(ctx);
}

}  // namespace dkb
