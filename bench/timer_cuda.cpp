// CUDA timing: a CUDA event pair around each call on a non-blocking stream;
// between timed calls an async memset of max(256 MiB, 4 x L2) evicts the L2.
// Decode is also captured into CUDA graphs (global capture mode, the strictest,
// as engines use): one call, replays timed the same way; and many calls on
// rotating tensor copies, replays timed back to back without a flush.
//
// Driver API only, loaded with dlopen: deltakit links the CUDA runtime
// statically (which itself loads libcuda at run time), so the process keeps a
// single runtime and dk_bench still starts on a machine without a driver.
// Runtime and driver handles are interchangeable (cudaStream_t is a
// CUstream), and both use the device's primary context.
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "timer.hpp"

namespace dkb {
namespace {

// The driver entry points used here. cuda.h maps some names to versioned
// symbols (cuMemAlloc -> cuMemAlloc_v2 ...); expanding the macro before
// stringizing looks up exactly the symbol a linked call would use.
// clang-format off
#define DKB_CU_FUNCS(X)                                                                     \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGet)       \
  X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)          \
  X(cuCtxSetCurrent) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)            \
  X(cuMemAlloc) X(cuMemFree) X(cuMemsetD8Async) X(cuEventCreate) X(cuEventDestroy)          \
  X(cuEventRecord) X(cuEventElapsedTime) X(cuStreamBeginCapture) X(cuStreamEndCapture)      \
  X(cuGraphInstantiate) X(cuGraphLaunch) X(cuGraphDestroy) X(cuGraphExecDestroy)
// Only for the bare launch (bare_launch): a driver without them still times calls.
#define DKB_CU_OPTIONAL_FUNCS(X) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuLaunchKernelEx)
// clang-format on
#define DKB_STR2(x) #x
#define DKB_STR(x) DKB_STR2(x)

struct driver_api {
#define DKB_MEMBER(fn) decltype(&::fn) fn = nullptr;
  DKB_CU_FUNCS(DKB_MEMBER)
  DKB_CU_OPTIONAL_FUNCS(DKB_MEMBER)
#undef DKB_MEMBER

  // Loads libcuda once; false with a reason when absent or incomplete.
  bool load(std::string* why) {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      *why = "cannot load the CUDA driver (libcuda.so.1): no NVIDIA driver on this machine";
      return false;
    }
#define DKB_LOAD(fn)                                            \
  fn = reinterpret_cast<decltype(fn)>(dlsym(lib, DKB_STR(fn))); \
  if (!fn) {                                                    \
    *why = std::string("the CUDA driver lacks ") + DKB_STR(fn); \
    return false;                                               \
  }
    DKB_CU_FUNCS(DKB_LOAD)
#undef DKB_LOAD
#define DKB_LOAD_OPTIONAL(fn) fn = reinterpret_cast<decltype(fn)>(dlsym(lib, DKB_STR(fn)));
    DKB_CU_OPTIONAL_FUNCS(DKB_LOAD_OPTIONAL)
#undef DKB_LOAD_OPTIONAL
    return true;  // the library stays loaded for the life of the process
  }
};

driver_api cu;

std::string cu_text(CUresult r) {
  const char *name = nullptr, *text = nullptr;
  cu.cuGetErrorName(r, &name);
  cu.cuGetErrorString(r, &text);
  return std::string(name ? name : "CUDA_ERROR_?") + ": " + (text ? text : "unknown");
}

// The bare launch's kernel (PTX, compiled by the driver for the device): every
// thread waits until `ns` (the first 8 bytes of its parameter block) have passed
// on the global timer. The block is as large as deltakit's decode kernel
// parameters (launch_params: 688 bytes; kernels/decode/decode.cu asserts it),
// which the driver copies with every launch.
#define DKB_BARE_PARAM_BYTES 688
constexpr int kBareParamBytes = DKB_BARE_PARAM_BYTES;
constexpr const char* kBarePtx = R"(
.version 6.0
.target sm_50
.address_size 64
.visible .entry dkb_wait(.param .align 8 .b8 dkb_params[)" DKB_STR(DKB_BARE_PARAM_BYTES) R"(])
{
  .reg .pred %p;
  .reg .b64 %ns, %t0, %t1, %d;
  ld.param.u64 %ns, [dkb_params];
  mov.u64 %t0, %globaltimer;
$Lwait:
  mov.u64 %t1, %globaltimer;
  sub.u64 %d, %t1, %t0;
  setp.lt.u64 %p, %d, %ns;
  @%p bra $Lwait;
  ret;
}
)";
constexpr unsigned kBareBlocks = 4096;  // one-warp blocks: a decode-sized grid, one wave on the H200

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

class cuda_timer final : public timer {
 public:
  explicit cuda_timer(int ordinal) : ordinal_(ordinal) {}

  ~cuda_timer() override {
    if (!context_) return;
    cu.cuCtxSetCurrent(context_);
    for (CUevent e : events_) cu.cuEventDestroy(e);
    if (bare_module_) cu.cuModuleUnload(bare_module_);
    if (flush_) cu.cuMemFree(flush_);
    if (stream_) cu.cuStreamDestroy(stream_);
    cu.cuDevicePrimaryCtxRelease(device_);
  }

  bool init(std::string* why) {
    if (!cu.cuInit && !cu.load(why)) return false;
    CUresult r = cu.cuInit(0);
    if (r == CUDA_SUCCESS) r = cu.cuDeviceGet(&device_, ordinal_);
    if (r == CUDA_SUCCESS) r = cu.cuDevicePrimaryCtxRetain(&context_, device_);
    if (r == CUDA_SUCCESS) r = cu.cuCtxSetCurrent(context_);
    int l2 = 0;
    if (r == CUDA_SUCCESS)
      r = cu.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device_);
    if (r == CUDA_SUCCESS) r = cu.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING);
    l2_bytes_ = static_cast<std::size_t>(std::max(l2, 0));
    flush_bytes_ = std::max<std::size_t>(std::size_t(256) << 20, 4 * l2_bytes_);
    if (r == CUDA_SUCCESS) r = cu.cuMemAlloc(&flush_, flush_bytes_);
    if (r != CUDA_SUCCESS) {
      *why = "CUDA timer setup failed: " + cu_text(r);
      return false;
    }
    return true;
  }

  void* stream() const override { return stream_; }
  const char* method() const override { return "cudaEvent"; }
  std::string toolkit() const override {
    int driver = 0;
    cu.cuDriverGetVersion(&driver);
    return "CUDA " + version_text(CUDA_VERSION) + " (build), driver " + version_text(driver);
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
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    CUresult r = cu.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL);
    if (r != CUDA_SUCCESS) return fail(why, "cuStreamBeginCapture", r);
    dk_status s = DK_STATUS_SUCCESS;
    for (std::size_t i = 0; i < calls.size() && s == DK_STATUS_SUCCESS; ++i) s = calls[i](stream_);
    const std::string dk_message = s != DK_STATUS_SUCCESS ? dk_last_error() : "";
    r = cu.cuStreamEndCapture(stream_, &graph);
    if (s != DK_STATUS_SUCCESS) {
      if (graph) cu.cuGraphDestroy(graph);
      *why = std::string("call failed during capture: ") + dk_status_string(s) + ": " + dk_message;
      return false;
    }
    if (r != CUDA_SUCCESS) return fail(why, "cuStreamEndCapture", r);
    r = cu.cuGraphInstantiate(&exec, graph, 0);
    cu.cuGraphDestroy(graph);
    if (r != CUDA_SUCCESS) return fail(why, "cuGraphInstantiate", r);
    for (int i = 0; i < warmup && r == CUDA_SUCCESS; ++i) r = cu.cuGraphLaunch(exec, stream_);
    dk_status st = r == CUDA_SUCCESS ? timed(repeat, flush, out_us,
                                             [&] {
                                               r = cu.cuGraphLaunch(exec, stream_);
                                               return r == CUDA_SUCCESS ? DK_STATUS_SUCCESS
                                                                        : DK_STATUS_DEVICE_ERROR;
                                             })
                                     : DK_STATUS_DEVICE_ERROR;
    cu.cuGraphExecDestroy(exec);
    if (st != DK_STATUS_SUCCESS && r != CUDA_SUCCESS) return fail(why, "graph replay", r);
    if (st != DK_STATUS_SUCCESS) {  // the replays launched: the flush, an event or the sync failed
      *why = "graph replay timing failed (flush, event record or synchronisation)";
      return false;
    }
    return true;
  }

  dk_status host_time(const launch_fn& f, int n, double* out_us) override {
    if (cu.cuStreamSynchronize(stream_) != CUDA_SUCCESS) return DK_STATUS_DEVICE_ERROR;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i)
      if (dk_status s = f(stream_); s != DK_STATUS_SUCCESS) return s;
    const auto t1 = std::chrono::steady_clock::now();
    *out_us = std::chrono::duration<double, std::micro>(t1 - t0).count() / std::max(n, 1);
    return cu.cuStreamSynchronize(stream_) == CUDA_SUCCESS ? DK_STATUS_SUCCESS
                                                           : DK_STATUS_DEVICE_ERROR;
  }

  launch_fn bare_launch(double device_us, bool programmatic, std::string* why) override {
    if (!cu.cuModuleLoadData || !cu.cuModuleGetFunction || !cu.cuLaunchKernelEx) {
      *why = "the CUDA driver lacks cuModuleLoadData, cuModuleGetFunction or cuLaunchKernelEx";
      return {};
    }
    if (!bare_kernel_) {
      CUresult r = cu.cuModuleLoadData(&bare_module_, kBarePtx);
      if (r == CUDA_SUCCESS) r = cu.cuModuleGetFunction(&bare_kernel_, bare_module_, "dkb_wait");
      if (r != CUDA_SUCCESS) {
        *why = "loading the bare launch's kernel failed: " + cu_text(r);
        if (bare_module_) cu.cuModuleUnload(bare_module_);
        bare_module_ = nullptr, bare_kernel_ = nullptr;
        return {};
      }
    }
    struct alignas(8) param_block {
      uint64_t ns;
      unsigned char rest[kBareParamBytes - 8];
    };
    static_assert(sizeof(param_block) == kBareParamBytes, "one parameter of the decode kernels' size");
    auto params = std::make_shared<param_block>();
    params->ns = static_cast<uint64_t>(std::max(device_us, 0.0) * 1000.0);
    CUfunction kernel = bare_kernel_;
    return [params, kernel, programmatic](void* stream) {
      CUlaunchAttribute attribute = {};
      attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attribute.value.programmaticStreamSerializationAllowed = 1;
      CUlaunchConfig config = {};
      config.gridDimX = kBareBlocks, config.gridDimY = 1, config.gridDimZ = 1;
      config.blockDimX = 32, config.blockDimY = 1, config.blockDimZ = 1;
      config.hStream = static_cast<CUstream>(stream);
      config.attrs = &attribute;
      config.numAttrs = programmatic ? 1 : 0;
      void* args[] = {params.get()};
      return cu.cuLaunchKernelEx(&config, kernel, args, nullptr) == CUDA_SUCCESS ? DK_STATUS_SUCCESS
                                                                                   : DK_STATUS_DEVICE_ERROR;
    };
  }

 private:
  static bool fail(std::string* why, const char* what, CUresult r) {
    *why = std::string(what) + ": " + cu_text(r);
    return false;
  }

  // Enqueues `repeat` x [flush, event, call, event], then reads the pairs.
  template <class Call>
  dk_status timed(int repeat, bool flush, std::vector<double>* out_us, Call&& call) {
    while (events_.size() < 2 * static_cast<std::size_t>(repeat)) {
      CUevent ev;
      if (cu.cuEventCreate(&ev, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return DK_STATUS_DEVICE_ERROR;
      events_.push_back(ev);
    }
    for (int i = 0; i < repeat; ++i) {
      if (flush && cu.cuMemsetD8Async(flush_, static_cast<unsigned char>(i), flush_bytes_,
                                      stream_) != CUDA_SUCCESS)
        return DK_STATUS_DEVICE_ERROR;
      if (cu.cuEventRecord(events_[2 * i], stream_) != CUDA_SUCCESS) return DK_STATUS_DEVICE_ERROR;
      if (dk_status s = call(); s != DK_STATUS_SUCCESS) return s;
      if (cu.cuEventRecord(events_[2 * i + 1], stream_) != CUDA_SUCCESS)
        return DK_STATUS_DEVICE_ERROR;
    }
    if (cu.cuStreamSynchronize(stream_) != CUDA_SUCCESS) return DK_STATUS_DEVICE_ERROR;
    for (int i = 0; i < repeat; ++i) {
      float ms = 0;
      if (cu.cuEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]) != CUDA_SUCCESS)
        return DK_STATUS_DEVICE_ERROR;
      out_us->push_back(1000.0 * ms);
    }
    return DK_STATUS_SUCCESS;
  }

  int ordinal_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUdeviceptr flush_ = 0;
  std::size_t flush_bytes_ = 0, l2_bytes_ = 0;
  std::vector<CUevent> events_;
  CUmodule bare_module_ = nullptr;  // bare_launch's kernel, loaded on first use
  CUfunction bare_kernel_ = nullptr;
};

}  // namespace

std::unique_ptr<timer> make_cuda_timer(dk_context*, int device_id, std::string* why) {
  auto t = std::make_unique<cuda_timer>(device_id);
  if (!t->init(why)) return nullptr;
  return t;
}

}  // namespace dkb
