// HIP timing: a hipEvent pair around each call on a non-blocking stream;
// between timed calls a hipMemsetAsync of max(256 MiB, 4 x L2) evicts the L2.
// Decode is also captured into HIP graphs (global capture mode, the strictest,
// as engines use): one call, replays timed the same way; and many calls on
// rotating tensor copies, replays timed back to back without a flush.
// Host-only runtime API: compiled by the C++ compiler against libamdhip64.
#include <hip/hip_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "timer.hpp"

namespace dkb {
namespace {

std::string hip_text(hipError_t e) {
  return std::string(hipGetErrorName(e)) + ": " + hipGetErrorString(e);
}

// HIP packs versions as major * 10^7 + minor * 10^5 + patch.
std::string version_text(int v) {
  return std::to_string(v / 10000000) + "." + std::to_string(v / 100000 % 100) + "." +
         std::to_string(v % 100000);
}

class hip_timer final : public timer {
 public:
  explicit hip_timer(int device) : device_(device) {}

  ~hip_timer() override {
    (void)hipSetDevice(device_);
    for (hipEvent_t e : events_) (void)hipEventDestroy(e);
    if (flush_) (void)hipFree(flush_);
    if (stream_) (void)hipStreamDestroy(stream_);
  }

  bool init(std::string* why) {
    hipError_t e = hipSetDevice(device_);
    int l2 = 0;
    if (e == hipSuccess) e = hipDeviceGetAttribute(&l2, hipDeviceAttributeL2CacheSize, device_);
    if (e == hipSuccess) e = hipStreamCreateWithFlags(&stream_, hipStreamNonBlocking);
    l2_bytes_ = static_cast<std::size_t>(std::max(l2, 0));
    flush_bytes_ = std::max<std::size_t>(std::size_t(256) << 20, 4 * l2_bytes_);
    if (e == hipSuccess) e = hipMalloc(&flush_, flush_bytes_);
    if (e != hipSuccess) {
      *why = "HIP timer setup failed: " + hip_text(e);
      return false;
    }
    return true;
  }

  void* stream() const override { return stream_; }
  const char* method() const override { return "hipEvent"; }
  std::string toolkit() const override {
    int rt = 0, drv = 0;
    (void)hipRuntimeGetVersion(&rt);
    (void)hipDriverGetVersion(&drv);
    return "HIP runtime " + version_text(rt) + ", driver " + version_text(drv);
  }
  std::size_t flush_bytes() const override { return flush_bytes_; }
  std::size_t last_level_cache_bytes() const override { return l2_bytes_; }
  bool synchronous() const override { return false; }

  dk_status time_calls(const launch_fn& f, int warmup, int repeat, bool flush,
                       std::vector<double>* out_us) override {
    for (int i = 0; i < warmup; ++i)
      if (dk_status s = f(stream_); s != DK_STATUS_SUCCESS) return s;
    return timed(repeat, flush, out_us, [&] { return f(stream_); });
  }

  bool time_graph(const std::vector<launch_fn>& calls, int warmup, int repeat, bool flush,
                  std::vector<double>* out_us, std::string* why) override {
    hipGraph_t graph = nullptr;
    hipGraphExec_t exec = nullptr;
    hipError_t e = hipStreamBeginCapture(stream_, hipStreamCaptureModeGlobal);
    if (e != hipSuccess) return fail(why, "hipStreamBeginCapture", e);
    dk_status s = DK_STATUS_SUCCESS;
    for (std::size_t i = 0; i < calls.size() && s == DK_STATUS_SUCCESS; ++i) s = calls[i](stream_);
    const std::string dk_message = s != DK_STATUS_SUCCESS ? dk_last_error() : "";
    e = hipStreamEndCapture(stream_, &graph);
    if (s != DK_STATUS_SUCCESS) {
      if (graph) (void)hipGraphDestroy(graph);
      (void)hipGetLastError();
      *why = std::string("call failed during capture: ") + dk_status_string(s) + ": " + dk_message;
      return false;
    }
    if (e != hipSuccess) {
      (void)hipGetLastError();
      return fail(why, "hipStreamEndCapture", e);
    }
    e = hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0);
    (void)hipGraphDestroy(graph);
    if (e != hipSuccess) return fail(why, "hipGraphInstantiate", e);
    bool ok = true;
    for (int i = 0; i < warmup && ok; ++i) ok = hipGraphLaunch(exec, stream_) == hipSuccess;
    dk_status st = ok ? timed(repeat, flush, out_us,
                              [&] {
                                return hipGraphLaunch(exec, stream_) == hipSuccess
                                           ? DK_STATUS_SUCCESS
                                           : DK_STATUS_DEVICE_ERROR;
                              })
                      : DK_STATUS_DEVICE_ERROR;
    (void)hipGraphExecDestroy(exec);
    if (st != DK_STATUS_SUCCESS) return fail(why, "graph replay", hipGetLastError());
    return true;
  }

  dk_status host_time(const launch_fn& f, int n, double* out_us) override {
    if (hipStreamSynchronize(stream_) != hipSuccess) return DK_STATUS_DEVICE_ERROR;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i)
      if (dk_status s = f(stream_); s != DK_STATUS_SUCCESS) return s;
    const auto t1 = std::chrono::steady_clock::now();
    *out_us = std::chrono::duration<double, std::micro>(t1 - t0).count() / std::max(n, 1);
    return hipStreamSynchronize(stream_) == hipSuccess ? DK_STATUS_SUCCESS : DK_STATUS_DEVICE_ERROR;
  }

 private:
  static bool fail(std::string* why, const char* what, hipError_t e) {
    *why = std::string(what) + ": " + hip_text(e);
    return false;
  }

  // Enqueues `repeat` x [flush, event, call, event], then reads the pairs.
  template <class Call>
  dk_status timed(int repeat, bool flush, std::vector<double>* out_us, Call&& call) {
    while (events_.size() < 2 * static_cast<std::size_t>(repeat)) {
      hipEvent_t ev;
      if (hipEventCreate(&ev) != hipSuccess) return DK_STATUS_DEVICE_ERROR;
      events_.push_back(ev);
    }
    for (int i = 0; i < repeat; ++i) {
      if (flush && hipMemsetAsync(flush_, i & 0xff, flush_bytes_, stream_) != hipSuccess)
        return DK_STATUS_DEVICE_ERROR;
      if (hipEventRecord(events_[2 * i], stream_) != hipSuccess) return DK_STATUS_DEVICE_ERROR;
      if (dk_status s = call(); s != DK_STATUS_SUCCESS) return s;
      if (hipEventRecord(events_[2 * i + 1], stream_) != hipSuccess) return DK_STATUS_DEVICE_ERROR;
    }
    if (hipStreamSynchronize(stream_) != hipSuccess) return DK_STATUS_DEVICE_ERROR;
    for (int i = 0; i < repeat; ++i) {
      float ms = 0;
      if (hipEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]) != hipSuccess)
        return DK_STATUS_DEVICE_ERROR;
      out_us->push_back(1000.0 * ms);
    }
    return DK_STATUS_SUCCESS;
  }

  int device_;
  hipStream_t stream_ = nullptr;
  void* flush_ = nullptr;
  std::size_t flush_bytes_ = 0, l2_bytes_ = 0;
  std::vector<hipEvent_t> events_;
};

}  // namespace

std::unique_ptr<timer> make_hip_timer(dk_context*, int device_id, std::string* why) {
  auto t = std::make_unique<hip_timer>(device_id);
  if (!t->init(why)) return nullptr;
  return t;
}

}  // namespace dkb
