// What the sources of dk_cuda_decode_check share (its usage is in main.cpp):
// the driver entry points, host arrays, device buffers and tensor views, the
// correctness case and the benchmark case, and the graph-replay timer.
#pragma once

#include <cuda.h>
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "deltakit/deltakit.h"

namespace dkc {

// The driver entry points used for timing (cuda.h maps some names to
// versioned symbols; stringizing the expanded macro finds the right one).
#define DK_CU_FUNCS(X)                                                                   \
  X(cuInit) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) \
  X(cuMemAlloc) X(cuMemFree) X(cuMemcpyDtoDAsync) X(cuEventCreate) X(cuEventDestroy)    \
  X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuMemsetD8Async)       \
  X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiate) X(cuGraphLaunch)  \
  X(cuGraphDestroy) X(cuGraphExecDestroy) X(cuStreamSynchronize) X(cuModuleLoadData)    \
  X(cuModuleGetFunction) X(cuModuleUnload) X(cuLaunchKernel)
// Optional: the programmatic reference rows are left out without it (drivers and
// headers before CUDA 12).
#if CUDA_VERSION >= 12000
#define DK_CU_OPTIONAL_FUNCS(X) X(cuLaunchKernelEx)
#else
#define DK_CU_OPTIONAL_FUNCS(X)
#endif
#define DK_STR2(x) #x
#define DK_STR(x) DK_STR2(x)
struct driver_api {
#define DK_MEMBER(fn) decltype(&::fn) fn = nullptr;
  DK_CU_FUNCS(DK_MEMBER)
  DK_CU_OPTIONAL_FUNCS(DK_MEMBER)
#undef DK_MEMBER
  bool load() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
#define DK_LOAD(fn)                                               \
  fn = reinterpret_cast<decltype(fn)>(dlsym(lib, DK_STR(fn)));    \
  if (!fn) return false;
    DK_CU_FUNCS(DK_LOAD)
#undef DK_LOAD
#define DK_LOAD_OPTIONAL(fn) fn = reinterpret_cast<decltype(fn)>(dlsym(lib, DK_STR(fn)));
    DK_CU_OPTIONAL_FUNCS(DK_LOAD_OPTIONAL)
#undef DK_LOAD_OPTIONAL
    return true;
  }
};
extern driver_api cu;

enum class elem { f32, bf16, f16 };
const char* elem_name(elem e);
size_t elem_size(elem e);
dk_dtype dtype_of(elem e);

// Host float <-> 16-bit conversions, round to nearest even (common.cpp).
uint16_t to_bf16(float f);
float from_bf16(uint16_t h);
uint16_t to_f16(float f);
float from_f16(uint16_t h);

// A host array in one storage dtype, plus read/write as double.
struct host_array {
  elem type = elem::f32;
  std::vector<uint8_t> bytes;
  void resize(elem t, size_t n) {
    type = t;
    bytes.assign(n * elem_size(t), 0);
  }
  size_t size() const { return bytes.size() / elem_size(type); }
  void set(size_t i, double x) {  // stores the value rounded to the dtype
    if (type == elem::f32) {
      const float f = float(x);
      std::memcpy(&bytes[4 * i], &f, 4);
    } else {
      const uint16_t h = type == elem::bf16 ? to_bf16(float(x)) : to_f16(float(x));
      std::memcpy(&bytes[2 * i], &h, 2);
    }
  }
  double get(size_t i) const {
    if (type == elem::f32) {
      float f;
      std::memcpy(&f, &bytes[4 * i], 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, &bytes[2 * i], 2);
    return type == elem::bf16 ? from_bf16(h) : from_f16(h);
  }
};

// ---- C API helpers (common.cpp) ----
extern dk_context* g_ctx;
extern void* g_stream;
bool ok(dk_status s, const char* what);

struct device_buffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  device_buffer() = default;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() {
    if (ptr) dk_free(g_ctx, ptr);
  }
  bool alloc(size_t n) {
    bytes = n;
    return ok(dk_malloc(g_ctx, n ? n : 1, &ptr), "dk_malloc");
  }
  bool upload(const void* src, size_t n) {
    return ok(dk_memcpy(g_ctx, ptr, src, n, DK_COPY_HOST_TO_DEVICE, g_stream), "upload");
  }
  bool download(void* dst, size_t n) {
    return ok(dk_memcpy(g_ctx, dst, ptr, n, DK_COPY_DEVICE_TO_HOST, g_stream), "download");
  }
};

// A tensor view whose shape/strides live inside it (do not copy after use).
struct view {
  int64_t shape[4] = {0, 0, 0, 0};
  int64_t strides[4] = {0, 0, 0, 0};
  dk_tensor t{};
  void set(void* data, dk_dtype dt, std::initializer_list<int64_t> shp,
           std::initializer_list<int64_t> str, uint64_t byte_offset = 0) {
    int n = 0;
    for (int64_t s : shp) shape[n++] = s;
    int m = 0;
    for (int64_t s : str) strides[m++] = s;
    t.data = data;
    t.device = {DK_DEVICE_CUDA, 0};
    t.ndim = n;
    t.dtype = dt;
    t.shape = shape;
    t.strides = strides;
    t.byte_offset = byte_offset;
  }
};

// ---- one correctness case ----
struct case_desc {
  std::string name;
  int B, T, HQ, HV, K, V;
  dk_gate_kind gate = DK_GATE_SCALAR;
  bool raw = false, logit = false, l2norm = false;
  dk_state_layout layout = DK_STATE_K_LAST;
  elem io = elem::f32, state = elem::f32, gates = elem::f32;
  bool idx64 = false;
  bool padding = false;      // some sequences -1 / out of range
  bool out_slots = false;    // separate write slots
  bool token_slots = false;  // per-token write slots
  bool strided = false;      // padded token strides and pool strides
  bool misaligned = false;   // pool head stride breaks 16-byte alignment
  float scale = 0.f;
};
extern bool g_check_kernels;  // set for a 132-SM sm_90a device (check.cpp)
bool run_case(const case_desc& c, uint64_t seed);  // check.cpp
std::vector<case_desc> check_cases(bool small);    // check_cases.cpp

// ---- benchmark ----
struct bench_case {
  const char* workload;
  int B, T, HQ, HV, K, V;
  elem state;
  dk_state_layout layout = DK_STATE_K_LAST;
  dk_gate_kind gate = DK_GATE_SCALAR;
  bool pad = false;  // every index -1: launch + index load + zero output (the latency floor)
  bool scatter = false;  // slots drawn through a random permutation of the pool (as dk_bench)
};

// L2 flush for the graph timings: a 256 MiB memset before each replay (> 4 x the H200's 60 MB L2).
extern CUdeviceptr g_flush;  // bench.cpp
const size_t kFlushBytes = size_t(256) << 20;

// bench.cpp
std::string label_of(const bench_case& c);
double measure_copy_gbps();
bool run_bench(const bench_case& c, double copy_gbps);

// ---- the graph-replay timer (replay_median_us, run_reference: reference.cpp) ----

// The executable graph of what `enqueue` puts on the stream (nullptr when capture fails).
template <class Enqueue>
CUgraphExec capture_graph(Enqueue&& enqueue) {
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  if (cu.cuStreamBeginCapture(CUstream(g_stream), CU_STREAM_CAPTURE_MODE_GLOBAL) != CUDA_SUCCESS) return nullptr;
  const bool queued = enqueue();
  const bool ok_capture = cu.cuStreamEndCapture(CUstream(g_stream), &graph) == CUDA_SUCCESS && queued &&
                          cu.cuGraphInstantiate(&exec, graph, 0) == CUDA_SUCCESS;
  if (graph) cu.cuGraphDestroy(graph);
  return ok_capture ? exec : nullptr;
}

double replay_median_us(CUgraphExec exec, bool flush, int n, int warm);

// Median of `n` graph replays of what `enqueue` puts on the stream, each after
// the L2 flush; 0 when capture fails.
template <class Enqueue>
double graph_median_us(Enqueue&& enqueue, int n = 60, int warm = 10) {
  if (!g_flush) return 0;
  const CUgraphExec exec = capture_graph(enqueue);
  return exec ? replay_median_us(exec, true, n, warm) : 0;
}

void run_reference(double copy_gbps);

}  // namespace dkc
