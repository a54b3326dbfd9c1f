// How one backend times an op call. One small implementation per backend:
//   timer_cpu.cpp   steady_clock around each (synchronous) call
//   timer_cuda.cpp  cudaEvent pairs around each call, CUDA graph replay  (DK_WITH_CUDA)
//   timer_hip.cpp   hipEvent pairs around each call, HIP graph replay    (DK_WITH_HIP)
// Each timed call is preceded by a cache flush (GPUs: a memset of, CPU: a read
// of a buffer larger than twice the last-level cache), so that inputs and state come from memory
// the way they do in an engine (where the other layers run in between).
// The in-graph ("stream") decode time instead replays one graph of many calls,
// each on its own copy of the tensors, so the rotation itself evicts the cache.
#pragma once
#include <deltakit/deltakit.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dkb {

// One call of the op under test, enqueued on `stream`.
using launch_fn = std::function<dk_status(void* stream)>;

class timer {
 public:
  virtual ~timer() = default;

  // The stream every call is enqueued on (nullptr on the CPU).
  virtual void* stream() const = 0;
  // "steady_clock", "cudaEvent" ...: recorded in the JSON.
  virtual const char* method() const = 0;
  // Toolkit and driver versions, e.g. "CUDA 13.0 (build), driver 13.0".
  virtual std::string toolkit() const = 0;
  // Size of the buffer that flushes the caches between timed calls (GPUs write
  // it with a memset, the CPU reads it).
  virtual std::size_t flush_bytes() const = 0;
  // Size of the last-level cache (the L2 on GPUs); 0 when unknown.
  virtual std::size_t last_level_cache_bytes() const = 0;
  // True when a call returns only after its work is done (host time == wall time).
  virtual bool synchronous() const = 0;

  // `warmup` untimed calls, then `repeat` calls timed one by one (each after a
  // cache flush when `flush`). Appends per-call times in microseconds.
  virtual dk_status time_calls(const launch_fn& f, int warmup, int repeat, bool flush,
                               std::vector<double>* out_us) = 0;
  // Captures `calls`, in order, into one graph, replays it `warmup` times, then
  // times `repeat` replays the same way (one time per replay of all the calls).
  // Returns false with a reason when graphs are not available here.
  virtual bool time_graph(const std::vector<launch_fn>& calls, int warmup, int repeat, bool flush,
                          std::vector<double>* out_us, std::string* why) = 0;
  // Host wall time per call of `n` back-to-back calls, without synchronising
  // between them (the launch overhead an engine pays per eager call).
  virtual dk_status host_time(const launch_fn& f, int n, double* out_us) = 0;
  // A reference for host_time: a launch of the timer's own kernel that does
  // nothing but wait `device_us` on the GPU, with a parameter block the size of
  // deltakit's decode kernels' (so a batch of them keeps the GPU as busy as the
  // calls do), through the driver, with programmatic stream serialization when
  // `programmatic`. What host_time measures above it is the library's own cost
  // and the difference of the two launches (grid, shared memory).
  // Empty (with a reason) where the timer has no such kernel.
  virtual launch_fn bare_launch(double device_us, bool programmatic, std::string* why) {
    (void)device_us, (void)programmatic;
    *why = "no bare launch on this backend";
    return {};
  }
};

// Each returns nullptr with a reason when the timer cannot be made.
std::unique_ptr<timer> make_cpu_timer(dk_context* ctx, std::string* why);
#if DKB_WITH_CUDA
std::unique_ptr<timer> make_cuda_timer(dk_context* ctx, int device_id, std::string* why);
#endif
#if DKB_WITH_HIP
std::unique_ptr<timer> make_hip_timer(dk_context* ctx, int device_id, std::string* why);
#endif

}  // namespace dkb
