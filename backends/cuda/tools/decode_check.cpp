// dk_cuda_decode_check: the CUDA decode through the public C API, checked
// against the fp64 reference (reference/), then timed on the standard decode
// workloads of SPEC §7.
//
//   dk_cuda_decode_check [--check] [--bench] [--small] [--only WORKLOAD]
//     --check  correctness matrix (default: both --check and --bench)
//     --bench  timings: median of event-timed calls, state slots rotated
//              through a pool larger than L2
//     --small  a short subset of the matrix (for compute-sanitizer)
//     --only   one timing workload, e.g. qwen3next/b128/t1/f32/klast/scalar
//              (for a profiler)
//
// Exit status: 0 all good, 1 a check failed, 77 no CUDA device.
//
// Events come from the driver API loaded with dlopen: the process keeps the one
// CUDA runtime linked into deltakit, and the tool starts without a driver.
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "deltakit/deltakit.h"
#include "dk_ref/reference.hpp"

namespace {

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
driver_api cu;

enum class elem { f32, bf16, f16 };
const char* elem_name(elem e) { return e == elem::f32 ? "f32" : e == elem::bf16 ? "bf16" : "f16"; }
size_t elem_size(elem e) { return e == elem::f32 ? 4 : 2; }
dk_dtype dtype_of(elem e) {
  if (e == elem::f32) return {DK_DTYPE_CODE_FLOAT, 32, 1};
  if (e == elem::bf16) return {DK_DTYPE_CODE_BFLOAT, 16, 1};
  return {DK_DTYPE_CODE_FLOAT, 16, 1};
}

// ---- host float <-> 16-bit conversions (round to nearest even) ----
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t to_bf16(float f) {
  uint32_t u = bits_of(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
float from_bf16(uint16_t h) { return float_of(uint32_t(h) << 16); }
uint16_t to_f16(float f) {
  const uint32_t x = bits_of(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7fffffffu;
  if (mag >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0u));
  if (mag >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to inf
  if (mag < 0x38800000u) {                                   // subnormal half
    const float r = float_of(mag) * 16777216.0f;             // * 2^24
    return uint16_t(sign | uint32_t(std::nearbyint(r)));
  }
  mag += 0xfffu + ((mag >> 13) & 1u);
  return uint16_t(sign | ((mag - 0x38000000u) >> 13));
}
float from_f16(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ffu;
  if (e == 0) return (sign ? -1.f : 1.f) * std::ldexp(float(m), -24);
  if (e == 31) return float_of(sign | 0x7f800000u | (m << 13));
  return float_of(sign | ((e + 112) << 23) | (m << 13));
}

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

// ---- C API helpers ----
dk_context* g_ctx = nullptr;
void* g_stream = nullptr;

bool ok(dk_status s, const char* what) {
  if (s == DK_STATUS_SUCCESS) return true;
  std::printf("  FAIL %s: %s: %s\n", what, dk_status_string(s), dk_last_error());
  return false;
}

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

// The kernel each correctness case takes on a 132-SM sm_90a device (H100 SXM, H200), as
// chosen by kernels/tuning/sm90.hpp: a tuning change that moves a case to another kernel
// family must change this table too (the case fails otherwise). Other devices: not checked.
struct kernel_choice {
  const char* case_name;
  const char* kernel;  // the implementation name after "cuda:sm90a:"
};
const kernel_choice kH200Kernels[] = {
    {"gdn raw T=1 bf16io f32state", "decode_kv128_t1"},
    {"gdn raw T=2 bf16io f32state", "decode_kv128_tnbf16"},
    {"gdn raw T=4 bf16io f32state", "decode_kv128_tnbf16"},
    {"gdn raw T=16 bf16io f32state", "decode_kv128_tnbf16"},
    {"gdn log fp32 K=V=128 T=4 pad", "decode_kv128"},
    {"gdn bf16 state T=2", "decode_kv128_tnbf16"},
    {"gdn fp16 state+io T=3 GVA4", "decode_kv128"},
    {"deltanet none K=V=64 fp32 idx64", "decode_kv64"},
    {"kda per-key raw K=V=128 T=4", "decode_kv128"},
    {"kda per-key log vlast T=2", "decode_kv128_vlast"},
    {"gdn vlast bf16 state T=4 out_slots", "decode_kv128_vlast"},
    {"gdn token_slots T=4 strided", "decode_kv128"},
    {"generic K=96 V=80 T=3", "decode_generic"},
    {"generic K=256 V=256 per-key T=16 bf16 state", "decode_generic"},
    {"generic K=16 V=32 vlast T=5", "decode_generic_vlast"},
    {"generic K=48 V=144 vlast f16 raw", "decode_generic_vlast"},
    {"K=64 V=128 vlast bf16 gates scale=0.3", "decode_kv64_vlast"},
    {"K=128 V=64 klast GVA2 T=16", "decode_kv128"},
    {"K=V=64 vlast bf16 state token_slots", "decode_kv64_vlast"},
    {"t1 klast bf16 state raw B=24 out_slots pad", "decode_kv128_t1bf16"},
    {"t1 klast f32 raw B=40 GVA4 strided", "decode_kv128_t1"},
    {"t1 klast f16 state none K=64 V=128", "decode_kv64_t1"},
    {"t1 klast f32 K=128 V=80 token_slots", "decode_kv128_t1"},
    {"t1 bf16io klast f32 raw B=40 GVA4 strided pad", "decode_kv128_t1bf16"},
    {"t1 small bf16 io klast f32 K=128 V=80 token_slots idx64", "decode_kv128_t1"},
    {"t1 bf16io klast f32 K=64 V=128 out_slots", "decode_kv64_t1bf16"},
    {"t1 bf16io klast f16 state K=128 none B=33", "decode_kv128_t1bf16"},
    {"t1 bf16io smem klast f32 raw B=20 GVA4 strided pad", "decode_kv128_t1bf16smem"},
    {"t1 bf16io smem klast f32 K=64 V=112 token_slots idx64", "decode_kv64_t1bf16smem"},
    {"t1 bf16io smem klast f32 raw B=72 out_slots pad", "decode_kv128_t1bf16smem"},
    {"t1 bf16io smem wide klast f32 raw B=72 idx64 strided pad", "decode_kv128_t1bf16smem"},
    {"t1 bf16io smem wide klast f32 K=64 B=80 token_slots idx64", "decode_kv64_t1bf16smem"},
    {"t1 small bf16 io klast f32 K=64 V=48 pad", "decode_kv64_t1"},
    {"t1 small bf16 io klast bf16 state raw K=128 V=80 pad", "decode_kv128_t1"},
    {"t1 small bf16 io klast f16 state K=64 GVA2 token_slots strided", "decode_kv64_t1"},
    {"t1 pipe klast bf16 state io f32 raw B=80 GVA4 strided pad", "decode_kv128_t1pipe"},
    {"t1 bf16io smem klast bf16 state B=72 out_slots pad", "decode_kv128_t1bf16smem"},
    {"t1 bf16io smem klast f16 state V=80 token_slots idx64 strided", "decode_kv128_t1bf16smem"},
    {"t1 pipe klast bf16 state io bf16 K=64 B=72 pad", "decode_kv64_t1pipe"},
    {"t1 pipe klast f16 state K=64 V=128 idx64 token_slots", "decode_kv64_t1pipe"},
    {"t1 pipe klast bf16 state K=128 V=80 none", "decode_kv128_t1pipe"},
    {"chunked pipe klast f16 state K=64 B=3168 pad", "decode_kv64_t1pipe"},
    {"t1 bf16io smem vlast bf16 state raw B=144 GVA4 pad", "decode_kv128_vlast_t1bf16smem"},
    {"t1 bf16io smem vlast bf16 state B=80 out_slots (6 heads per SM)", "decode_kv128_vlast_t1bf16smem"},
    {"t1 bf16io smem vlast f16 state K=64 V=48 B=272 token_slots strided", "decode_kv64_vlast_t1bf16smem"},
    {"t1 pipe vlast f16 state K=64 V=48 out_slots strided", "decode_kv64_vlast_t1pipe"},
    {"t1 pipe vlast bf16 state io f32 K=128 V=192 token_slots idx64", "decode_kv128_vlast_t1pipe"},
    {"t1 vlast f32 io f32 token_slots strided", "decode_kv128_vlast_t1"},
    {"t1 vlast bf16 state raw B=40 pad", "decode_kv128_vlast_t1"},
    {"t1 vlast bf16 state K=V=64 idx64 out_slots", "decode_kv64_vlast_t1"},
    {"t1 vlast f16 state K=128 V=48 none", "decode_kv128_vlast_t1"},
    {"t1 vlast f16 state K=64 V=48 B=40 out_slots", "decode_kv64_vlast_t1"},
    {"t1 vlast f32 K=64 V=256 raw bf16 gates", "decode_kv64_vlast_t1"},
    {"t1 bf16io vlast f32 raw B=40 GVA4 strided pad", "decode_kv128_vlast_t1bf16"},
    {"t1 bf16io vlast f32 K=64 V=48 out_slots idx64", "decode_kv64_vlast_t1bf16"},
    {"t1 bf16io vlast f32 K=128 idx64 pad", "decode_kv128_vlast_t1bf16"},
    {"t1 bf16io vlast f32 smem B=80 GVA4 strided pad", "decode_kv128_vlast_t1bf16smem"},
    {"t1 bf16io vlast f32 smem K=64 V=48 B=160 out_slots idx64", "decode_kv64_vlast_t1bf16smem"},
    {"t1 per-key (general kernel)", "decode_kv128"},
};
bool g_check_kernels = false;  // set for a 132-SM sm_90a device

// The kernel case `name` must take here, or nullptr when the table has none.
const char* expected_kernel(const std::string& name) {
  for (const kernel_choice& k : kH200Kernels)
    if (name == k.case_name) return k.kernel;
  return nullptr;
}

double tolerance(const case_desc& c) {
  if (c.state == elem::bf16) return 2e-2;  // SPEC: bf16 state 2e-2 (fp16 state 5e-3: the conformance harness's choice)
  if (c.state == elem::f16) return 5e-3;
  if (c.io != elem::f32 || c.gates != elem::f32) return 5e-3;
  return 1e-4;
}

struct sums {
  double diff = 0, norm = 0;
  void add(double x, double ref) {
    diff += (x - ref) * (x - ref);
    norm += ref * ref;
  }
  double rel() const { return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff); }
};

bool run_case(const case_desc& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto U = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  std::normal_distribution<double> N01(0.0, 1.0);
  const int B = c.B, T = c.T, HQ = c.HQ, HV = c.HV, K = c.K, V = c.V;
  const int gw = c.gate == DK_GATE_PER_KEY ? K : 1;
  const bool k_last = c.layout == DK_STATE_K_LAST;

  // Slots: sequence b reads slot 1 + b*(T+2); writes go to slots after it.
  const int64_t per = T + 2;
  const int64_t P = 1 + B * per + 1;
  std::vector<int64_t> idx(B), out_idx(B, -1), tok_idx(size_t(B) * T, -1);
  for (int b = 0; b < B; ++b) {
    idx[b] = 1 + b * per;
    // Padding: every third sequence -1 or out of range, and sequence 1 -1 (so that
    // small batches see both).
    if (c.padding && b % 3 == 2) idx[b] = (b % 2) ? -1 : P + 7;
    if (c.padding && b == 1) idx[b] = -1;
    if (c.out_slots) out_idx[b] = (b % 4 == 3) ? -1 : idx[b] + 1;
    if (c.token_slots)
      for (int t = 0; t < T; ++t) tok_idx[size_t(b) * T + t] = (t % 3 == 1) ? -1 : 1 + b * per + 1 + t;
  }

  // Strides (elements).
  const int64_t qrow = int64_t(HQ) * K + (c.strided ? 24 : 0);
  const int64_t vrow = int64_t(HV) * V + (c.strided ? 40 : 0);
  const int64_t d1 = k_last ? V : K, d2 = k_last ? K : V;
  const int64_t head_stride = d1 * d2 + (c.misaligned ? 4 : c.strided ? 64 : 0);
  const int64_t slot_stride = HV * head_stride + (c.strided ? 128 : 0);

  host_array q, k, v, out, g, beta, alog, dtb, pool;
  q.resize(c.io, size_t(B) * T * qrow);
  k.resize(c.io, size_t(B) * T * qrow);
  v.resize(c.io, size_t(B) * T * vrow);
  out.resize(c.io, size_t(B) * T * vrow);
  g.resize(c.gates, size_t(B) * T * HV * gw);
  beta.resize(c.gates, size_t(B) * T * HV);
  alog.resize(c.gates, HV);
  dtb.resize(c.gates, size_t(HV) * gw);
  pool.resize(c.state, size_t(P) * slot_stride);
  for (size_t i = 0; i < pool.size(); ++i) pool.set(i, U(-0.5, 0.5));
  for (size_t i = 0; i < q.size(); ++i) q.set(i, U(-1, 1));
  for (size_t i = 0; i < v.size(); ++i) v.set(i, U(-1, 1));
  for (size_t i = 0; i < k.size(); ++i) k.set(i, U(-1, 1));
  if (!c.l2norm) {  // keys of norm U(0.5, 1) keep the recurrence bounded, as normalised keys do
    for (int64_t r = 0; r < int64_t(B) * T * HQ; ++r) {
      const size_t base = size_t(r / HQ) * qrow + size_t(r % HQ) * K;
      double n2 = 0;
      for (int i = 0; i < K; ++i) n2 += k.get(base + i) * k.get(base + i);
      const double f = U(0.5, 1.0) / std::sqrt(n2);
      for (int i = 0; i < K; ++i) k.set(base + i, k.get(base + i) * f);
    }
  }
  for (size_t i = 0; i < g.size(); ++i) g.set(i, c.raw ? N01(rng) : U(-0.5, -0.01));
  for (size_t i = 0; i < beta.size(); ++i) beta.set(i, c.logit ? U(-4, 4) : U(0.02, 0.98));
  for (size_t i = 0; i < alog.size(); ++i) alog.set(i, U(-1, 1));
  for (size_t i = 0; i < dtb.size(); ++i) dtb.set(i, U(-1, 1));
  for (size_t i = 0; i < out.size(); ++i) out.set(i, NAN);  // poison

  // Device copies.
  device_buffer dq, dk_, dv, dout, dg, dbeta, dalog, ddtb, dpool, didx, doidx, dtidx;
  auto up = [&](device_buffer& d, const host_array& h) {
    return d.alloc(h.bytes.size()) && d.upload(h.bytes.data(), h.bytes.size());
  };
  auto up_idx = [&](device_buffer& d, const std::vector<int64_t>& x) {
    if (c.idx64) return d.alloc(x.size() * 8) && d.upload(x.data(), x.size() * 8);
    std::vector<int32_t> y(x.begin(), x.end());
    return d.alloc(y.size() * 4) && d.upload(y.data(), y.size() * 4);
  };
  if (!(up(dq, q) && up(dk_, k) && up(dv, v) && up(dout, out) && up(dg, g) && up(dbeta, beta) &&
        up(dalog, alog) && up(ddtb, dtb) && up(dpool, pool) && up_idx(didx, idx) &&
        up_idx(doidx, out_idx) && up_idx(dtidx, tok_idx)))
    return false;

  const dk_dtype io = dtype_of(c.io), gt = dtype_of(c.gates), st = dtype_of(c.state);
  const dk_dtype it = c.idx64 ? dk_dtype{DK_DTYPE_CODE_INT, 64, 1} : dk_dtype{DK_DTYPE_CODE_INT, 32, 1};
  view vq, vk, vv, vout, vg, vbeta, valog, vdtb, vpool, vidx, voidx, vtidx;
  vq.set(dq.ptr, io, {B, T, HQ, K}, {T * qrow, qrow, K, 1});
  vk.set(dk_.ptr, io, {B, T, HQ, K}, {T * qrow, qrow, K, 1});
  vv.set(dv.ptr, io, {B, T, HV, V}, {T * vrow, vrow, V, 1});
  vout.set(dout.ptr, io, {B, T, HV, V}, {T * vrow, vrow, V, 1});
  if (gw == 1) vg.set(dg.ptr, gt, {B, T, HV}, {int64_t(T) * HV, HV, 1});
  else vg.set(dg.ptr, gt, {B, T, HV, K}, {int64_t(T) * HV * K, int64_t(HV) * K, K, 1});
  vbeta.set(dbeta.ptr, gt, {B, T, HV}, {int64_t(T) * HV, HV, 1});
  valog.set(dalog.ptr, gt, {HV}, {1});
  if (gw == 1) vdtb.set(ddtb.ptr, gt, {HV}, {1});
  else vdtb.set(ddtb.ptr, gt, {HV, K}, {K, 1});
  vpool.set(dpool.ptr, st, {P, HV, d1, d2}, {slot_stride, head_stride, d2, 1});
  vidx.set(didx.ptr, it, {B}, {1});
  voidx.set(doidx.ptr, it, {B}, {1});
  vtidx.set(dtidx.ptr, it, {B, T}, {T, 1});

  dk_config cfg{};
  cfg.gate_kind = c.gate;
  cfg.gate_form = c.raw ? DK_GATE_RAW : DK_GATE_LOG;
  cfg.beta_form = c.logit ? DK_BETA_LOGIT : DK_BETA_PROB;
  cfg.state_layout = c.layout;
  cfg.qk_l2norm = c.l2norm;
  cfg.scale = c.scale;
  dk_decode_args a{};
  a.q = &vq.t;
  a.k = &vk.t;
  a.v = &vv.t;
  a.g = c.gate == DK_GATE_NONE ? nullptr : &vg.t;
  a.beta = &vbeta.t;
  a.A_log = c.raw ? &valog.t : nullptr;
  a.dt_bias = c.raw ? &vdtb.t : nullptr;
  a.state_pool = &vpool.t;
  a.state_indices = &vidx.t;
  a.state_out_indices = c.out_slots ? &voidx.t : nullptr;
  a.state_token_indices = c.token_slots ? &vtidx.t : nullptr;
  a.out = &vout.t;

  const char* impl = nullptr;
  dk_status s = dk_decode_query(g_ctx, &cfg, &a, &impl);
  if (c.misaligned) {  // head stride not a multiple of 16 bytes: both calls must refuse it
    const dk_status r = dk_decode_run(g_ctx, &cfg, &a, g_stream);
    if (s != DK_STATUS_INVALID_ARGUMENT || r != DK_STATUS_INVALID_ARGUMENT) {
      std::printf("  FAIL %-44s misaligned pool: query %s, run %s (want INVALID_ARGUMENT)\n", c.name.c_str(),
                  dk_status_string(s), dk_status_string(r));
      return false;
    }
    std::printf("  ok   %-44s rejected by validation: %s\n", c.name.c_str(), dk_last_error());
    return true;
  }
  if (s == DK_STATUS_UNSUPPORTED) {  // every case is a shape SPEC requires: not a skip
    std::printf("  FAIL %-44s unsupported: %s\n", c.name.c_str(), dk_last_error());
    return false;
  }
  if (!ok(s, "dk_decode_query")) return false;
  if (g_check_kernels) {
    const char* want = expected_kernel(c.name);
    if (!want) {
      std::printf("  FAIL %-44s took %s; kH200Kernels has no entry for this case\n", c.name.c_str(), impl);
      return false;
    }
    if (std::string(impl) != std::string("cuda:sm90a:") + want) {
      std::printf("  FAIL %-44s took %s, kH200Kernels says cuda:sm90a:%s\n", c.name.c_str(), impl, want);
      return false;
    }
  }
  if (!ok(dk_decode_run(g_ctx, &cfg, &a, g_stream), "dk_decode_run")) return false;
  if (!ok(dk_stream_synchronize(g_ctx, g_stream), "dk_stream_synchronize")) return false;
  host_array got_out = out, got_pool = pool;
  if (!dout.download(got_out.bytes.data(), got_out.bytes.size())) return false;
  if (!dpool.download(got_pool.bytes.data(), got_pool.bytes.size())) return false;

  // Reference, sequence by sequence, token by token.
  dk_ref::config rc;
  rc.gate = c.gate == DK_GATE_NONE ? dk_ref::gate_kind::none
            : c.gate == DK_GATE_SCALAR ? dk_ref::gate_kind::scalar
                                       : dk_ref::gate_kind::per_key;
  rc.gate_raw = c.raw;
  rc.beta_logit = c.logit;
  rc.qk_l2norm = c.l2norm;
  rc.scale = c.scale;
  const dk_ref::dims dims{HQ, HV, K, V};
  std::vector<bool> written(P, false);
  std::vector<std::vector<double>> expect_slot(P);
  sums out_err, state_err;
  bool zero_ok = true, finite = true;
  auto state_at = [&](const host_array& h, int64_t slot, int hh, int i, int j) {  // S[i key][j value]
    const size_t at = size_t(slot * slot_stride + hh * head_stride) +
                      (k_last ? size_t(j) * K + i : size_t(i) * V + j);
    return h.get(at);
  };
  for (int b = 0; b < B; ++b) {
    const bool pad = idx[b] < 0 || idx[b] >= P;
    if (pad) {
      for (int t = 0; t < T; ++t)
        for (int hh = 0; hh < HV; ++hh)
          for (int j = 0; j < V; ++j)
            if (got_out.get(size_t(b) * T * vrow + size_t(t) * vrow + size_t(hh) * V + j) != 0.0)
              zero_ok = false;
      continue;
    }
    std::vector<double> S(size_t(HV) * K * V);
    for (int hh = 0; hh < HV; ++hh)
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < V; ++j) S[(size_t(hh) * K + i) * V + j] = state_at(pool, idx[b], hh, i, j);
    std::vector<double> qd(size_t(HQ) * K), kd(size_t(HQ) * K), vd(size_t(HV) * V),
        gd(size_t(HV) * gw), bd(HV), ad(HV), dd(size_t(HV) * gw), od(size_t(HV) * V);
    for (int hh = 0; hh < HV; ++hh) ad[hh] = alog.get(hh);
    for (size_t i = 0; i < dd.size(); ++i) dd[i] = dtb.get(i);
    for (int t = 0; t < T; ++t) {
      const size_t qbase = size_t(b) * T * qrow + size_t(t) * qrow;
      const size_t vbase = size_t(b) * T * vrow + size_t(t) * vrow;
      for (size_t i = 0; i < qd.size(); ++i) qd[i] = q.get(qbase + i), kd[i] = k.get(qbase + i);
      for (size_t i = 0; i < vd.size(); ++i) vd[i] = v.get(vbase + i);
      for (size_t i = 0; i < gd.size(); ++i) gd[i] = g.get((size_t(b) * T + t) * HV * gw + i);
      for (int hh = 0; hh < HV; ++hh) bd[hh] = beta.get((size_t(b) * T + t) * HV + hh);
      const dk_ref::sequence seq{1, qd.data(), kd.data(), vd.data(), gd.data(), bd.data(), ad.data(), dd.data()};
      dk_ref::recurrent(rc, dims, seq, S.data(), od.data());
      for (int hh = 0; hh < HV; ++hh)
        for (int j = 0; j < V; ++j) {
          const double x = got_out.get(vbase + size_t(hh) * V + j);
          if (!std::isfinite(x)) finite = false;
          out_err.add(x, od[size_t(hh) * V + j]);
        }
      if (c.token_slots) {
        const int64_t ts = tok_idx[size_t(b) * T + t];
        if (ts >= 0) written[ts] = true, expect_slot[ts] = S;
      }
    }
    if (!c.token_slots) {
      const int64_t os = c.out_slots ? out_idx[b] : idx[b];
      if (os >= 0 && os < P) written[os] = true, expect_slot[os] = S;
    }
  }
  bool untouched = true;
  for (int64_t sl = 0; sl < P; ++sl) {
    if (!written[sl]) {
      const size_t lo = size_t(sl * slot_stride) * elem_size(c.state);
      const size_t hi = std::min(got_pool.bytes.size(), size_t((sl + 1) * slot_stride) * elem_size(c.state));
      if (std::memcmp(&got_pool.bytes[lo], &pool.bytes[lo], hi - lo) != 0) untouched = false;
      continue;
    }
    for (int hh = 0; hh < HV; ++hh)
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < V; ++j) {
          const double x = state_at(got_pool, sl, hh, i, j);
          if (!std::isfinite(x)) finite = false;
          state_err.add(x, expect_slot[sl][(size_t(hh) * K + i) * V + j]);
        }
  }
  // Gaps between heads/slots (strided pools) must stay untouched as well.
  if (c.strided || c.misaligned) {
    for (int64_t sl = 0; sl < P; ++sl)
      for (int hh = 0; hh <= HV; ++hh) {
        const int64_t lo = sl * slot_stride + (hh < HV ? hh * head_stride + d1 * d2 : HV * head_stride);
        const int64_t hi = hh < HV ? sl * slot_stride + (hh + 1) * head_stride : (sl + 1) * slot_stride;
        for (int64_t e = lo; e < hi && e < int64_t(pool.size()); ++e)
          if (std::memcmp(&got_pool.bytes[size_t(e) * elem_size(c.state)],
                          &pool.bytes[size_t(e) * elem_size(c.state)], elem_size(c.state)) != 0)
            untouched = false;
      }
  }
  const double tol = tolerance(c);
  const bool pass = finite && zero_ok && untouched && out_err.rel() < tol && state_err.rel() < tol;
  std::printf("  %s %-44s %-28s out %.2e state %.2e (tol %.0e)%s%s%s\n", pass ? "ok  " : "FAIL",
              c.name.c_str(), impl ? impl : "?", out_err.rel(), state_err.rel(), tol,
              finite ? "" : " NON-FINITE", zero_ok ? "" : " PADDING-OUTPUT-NONZERO",
              untouched ? "" : " UNWRITTEN-SLOT-CHANGED");
  return pass;
}

std::vector<case_desc> check_cases(bool small) {
  std::vector<case_desc> cs;
  auto add = [&](case_desc c) { cs.push_back(c); };
  // Qwen3-Next shaped, raw gates, beta logit, l2norm, bf16 io: the engine's call.
  for (int T : {1, 2, 4, 16}) {
    case_desc c{"gdn raw T=" + std::to_string(T) + " bf16io f32state", 5, T, 4, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"gdn log fp32 K=V=128 T=4 pad", 7, 4, 2, 4, 128, 128};
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"gdn bf16 state T=2", 4, 2, 2, 4, 128, 128};
    c.state = elem::bf16;
    c.io = elem::bf16;
    add(c);
  }
  {
    case_desc c{"gdn fp16 state+io T=3 GVA4", 3, 3, 1, 4, 128, 128};
    c.state = elem::f16;
    c.io = elem::f16;
    add(c);
  }
  {
    case_desc c{"deltanet none K=V=64 fp32 idx64", 6, 2, 2, 2, 64, 64};
    c.gate = DK_GATE_NONE;
    c.idx64 = true;
    add(c);
  }
  {
    case_desc c{"kda per-key raw K=V=128 T=4", 3, 4, 2, 2, 128, 128};
    c.gate = DK_GATE_PER_KEY;
    c.raw = c.logit = c.l2norm = true;
    add(c);
  }
  {
    case_desc c{"kda per-key log vlast T=2", 3, 2, 2, 4, 128, 128};
    c.gate = DK_GATE_PER_KEY;
    c.layout = DK_STATE_V_LAST;
    add(c);
  }
  {
    case_desc c{"gdn vlast bf16 state T=4 out_slots", 5, 4, 2, 4, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.state = elem::bf16;
    c.out_slots = true;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"gdn token_slots T=4 strided", 4, 4, 2, 4, 128, 128};
    c.token_slots = true;
    c.strided = true;
    c.raw = true;
    add(c);
  }
  {
    case_desc c{"gdn misaligned bf16 pool T=2", 3, 2, 2, 2, 128, 128};
    c.state = elem::bf16;
    c.misaligned = true;
    add(c);
  }
  {
    case_desc c{"generic K=96 V=80 T=3", 3, 3, 1, 2, 96, 80};
    c.l2norm = true;
    add(c);
  }
  {
    case_desc c{"generic K=256 V=256 per-key T=16 bf16 state", 2, 16, 1, 2, 256, 256};
    c.gate = DK_GATE_PER_KEY;
    c.state = elem::bf16;
    add(c);
  }
  {
    case_desc c{"generic K=16 V=32 vlast T=5", 3, 5, 1, 1, 16, 32};
    c.layout = DK_STATE_V_LAST;
    add(c);
  }
  {
    case_desc c{"generic K=48 V=144 vlast f16 raw", 2, 2, 2, 2, 48, 144};
    c.layout = DK_STATE_V_LAST;
    c.state = elem::f16;
    c.raw = true;
    add(c);
  }
  {
    case_desc c{"K=64 V=128 vlast bf16 gates scale=0.3", 4, 2, 2, 4, 64, 128};
    c.layout = DK_STATE_V_LAST;
    c.gates = elem::bf16;
    c.scale = 0.3f;
    add(c);
  }
  {
    case_desc c{"K=128 V=64 klast GVA2 T=16", 3, 16, 2, 4, 128, 64};
    c.logit = true;
    add(c);
  }
  {
    case_desc c{"K=V=64 vlast bf16 state token_slots", 3, 3, 1, 2, 64, 64};
    c.layout = DK_STATE_V_LAST;
    c.state = elem::bf16;
    c.token_slots = true;
    add(c);
  }
  // T = 1 (the t1 kernels): both layouts and grid sizes (t1_small below
  // t1_small_heads_per_sm * SMs heads, t1 above), every state dtype, K = 64/128.
  {
    case_desc c{"t1 klast bf16 state raw B=24 out_slots pad", 24, 1, 4, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.out_slots = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 klast f32 raw B=40 GVA4 strided", 40, 1, 2, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.strided = true;
    add(c);
  }
  {
    case_desc c{"t1 klast f16 state none K=64 V=128", 5, 1, 2, 4, 64, 128};
    c.gate = DK_GATE_NONE;
    c.io = c.state = elem::f16;
    c.l2norm = true;
    add(c);
  }
  {
    case_desc c{"t1 klast f32 K=128 V=80 token_slots", 6, 1, 2, 4, 128, 80};
    c.token_slots = true;
    c.logit = true;
    c.scale = 0.3f;
    add(c);
  }
  // t1_bf16io (K-last, bf16 q/k/v/out, from 132 heads on 132 SMs; below, t1_small
  // with bf16 I/O): fp32 and fp16 state, K = 64/128, partial tiles.
  {
    case_desc c{"t1 bf16io klast f32 raw B=40 GVA4 strided pad", 40, 1, 2, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = elem::bf16;
    c.strided = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 small bf16 io klast f32 K=128 V=80 token_slots idx64", 6, 1, 2, 4, 128, 80};
    c.io = c.gates = elem::bf16;
    c.token_slots = c.idx64 = true;
    c.logit = true;
    c.scale = 0.3f;
    add(c);
  }
  {
    case_desc c{"t1 bf16io klast f32 K=64 V=128 out_slots", 40, 1, 4, 8, 64, 128};
    c.raw = c.l2norm = true;
    c.io = elem::bf16;
    c.out_slots = true;
    add(c);
  }
  // t1_bf16io_smem (K-last fp32 state, 132 to 263 heads on 132 SMs, or from
  // 528 on as t1_bf16io_smem_wide, the same name): the state through shared
  // memory, padding, strides, per-token slots, separate output slots; the wide
  // instance's slot words with int32 (B=72 out_slots) and int64 indices, -1
  // padding included.
  {
    case_desc c{"t1 bf16io smem klast f32 raw B=20 GVA4 strided pad", 20, 1, 2, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = elem::bf16;
    c.strided = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io smem klast f32 raw B=72 out_slots pad", 72, 1, 2, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = elem::bf16;
    c.out_slots = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io smem wide klast f32 raw B=72 idx64 strided pad", 72, 1, 2, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = elem::bf16;
    c.idx64 = c.strided = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io smem wide klast f32 K=64 B=80 token_slots idx64", 80, 1, 4, 8, 64, 128};
    c.l2norm = true;
    c.io = elem::bf16;
    c.token_slots = c.idx64 = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io smem klast f32 K=64 V=112 token_slots idx64", 24, 1, 4, 8, 64, 112};
    c.l2norm = true;
    c.io = elem::bf16;
    c.token_slots = c.idx64 = true;
    c.scale = 0.3f;
    add(c);
  }
  {
    case_desc c{"t1 bf16io klast f16 state K=128 none B=33", 33, 1, 1, 8, 128, 128};
    c.gate = DK_GATE_NONE;
    c.io = elem::bf16;
    c.state = elem::f16;
    c.l2norm = true;
    add(c);
  }
  {
    case_desc c{"t1 small bf16 io klast f32 K=64 V=48 pad", 3, 1, 1, 2, 64, 48};
    c.raw = c.logit = c.l2norm = true;
    c.io = elem::bf16;
    c.padding = true;
    add(c);
  }
  // t1_small_bf16io (small grids, bf16 I/O, K-last 16-bit state).
  {
    case_desc c{"t1 small bf16 io klast bf16 state raw K=128 V=80 pad", 3, 1, 2, 4, 128, 80};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 small bf16 io klast f16 state K=64 GVA2 token_slots strided", 2, 1, 2, 4, 64, 128};
    c.io = elem::bf16;
    c.state = elem::f16;
    c.token_slots = c.strided = true;
    c.l2norm = true;
    add(c);
  }
  // t1_bf16io_smem with 16-bit state (bf16 I/O, K = 128, from 528 heads on
  // 132 SMs): padding, separate output slots, per-token slots, strides, V = 80
  // (5 of the 16-row tiles per head).
  {
    case_desc c{"t1 bf16io smem klast bf16 state B=72 out_slots pad", 72, 1, 4, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.out_slots = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io smem klast f16 state V=80 token_slots idx64 strided", 68, 1, 2, 8, 128, 80};
    c.l2norm = c.logit = true;
    c.io = elem::bf16;
    c.state = elem::f16;
    c.token_slots = c.idx64 = c.strided = true;
    c.scale = 0.3f;
    add(c);
  }
  // t1_pipe (K-last 16-bit state, at least t1_pipe_b16_min_heads_per_sm * SMs
  // heads: 528 on 132 SMs; with bf16 I/O only where the bf16-I/O tile does not
  // fit, K = 64).
  {
    case_desc c{"t1 pipe klast bf16 state io bf16 K=64 B=72 pad", 72, 1, 2, 8, 64, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.state = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 pipe klast bf16 state io f32 raw B=80 GVA4 strided pad", 80, 1, 2, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.state = elem::bf16;
    c.strided = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 pipe klast f16 state K=64 V=128 idx64 token_slots", 160, 1, 2, 4, 64, 128};
    c.io = c.state = elem::f16;
    c.idx64 = c.token_slots = true;
    c.l2norm = true;
    add(c);
  }
  {
    case_desc c{"t1 pipe klast bf16 state K=128 V=80 none", 136, 1, 1, 4, 128, 80};
    c.gate = DK_GATE_NONE;
    c.state = elem::bf16;
    c.scale = 0.3f;
    add(c);
  }
  {  // >= t1_pipe_chunk_min_tiles_per_warp tiles per warp: chunks dealt round-robin
    case_desc c{"chunked pipe klast f16 state K=64 B=3168 pad", 3168, 1, 2, 8, 64, 128};
    c.state = elem::f16;
    c.padding = c.l2norm = true;
    add(c);
  }
  // t1_bf16io_smem V-last (16-bit state, bf16 I/O, >= 528 heads on 132 SMs;
  // V = 48: a partial tile).
  {
    case_desc c{"t1 bf16io smem vlast bf16 state raw B=144 GVA4 pad", 144, 1, 2, 8, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io smem vlast bf16 state B=80 out_slots (6 heads per SM)", 80, 1, 2, 10, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.out_slots = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io smem vlast f16 state K=64 V=48 B=272 token_slots strided", 272, 1, 2, 4, 64, 48};
    c.layout = DK_STATE_V_LAST;
    c.logit = c.l2norm = true;
    c.io = elem::bf16;
    c.state = elem::f16;
    c.token_slots = c.strided = true;
    c.scale = 0.3f;
    add(c);
  }
  // t1_pipe V-last (16-bit state with other activation dtypes, >= 1056 heads on
  // 132 SMs; V = 48: a partial tile).
  {
    case_desc c{"t1 pipe vlast f16 state K=64 V=48 out_slots strided", 272, 1, 2, 4, 64, 48};
    c.layout = DK_STATE_V_LAST;
    c.state = elem::f16;
    c.out_slots = c.strided = c.l2norm = true;
    add(c);
  }
  {
    case_desc c{"t1 pipe vlast bf16 state io f32 K=128 V=192 token_slots idx64", 132, 1, 1, 8, 128, 192};
    c.layout = DK_STATE_V_LAST;
    c.state = elem::bf16;
    c.token_slots = c.idx64 = true;
    c.scale = 0.3f;
    add(c);
  }
  {
    case_desc c{"t1 vlast f32 io f32 token_slots strided", 5, 1, 2, 4, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.token_slots = c.strided = true;
    add(c);
  }
  {
    case_desc c{"t1 vlast bf16 state raw B=40 pad", 40, 1, 4, 8, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 vlast bf16 state K=V=64 idx64 out_slots", 7, 1, 1, 4, 64, 64};
    c.layout = DK_STATE_V_LAST;
    c.state = elem::bf16;
    c.idx64 = c.out_slots = true;
    add(c);
  }
  {
    case_desc c{"t1 vlast f16 state K=128 V=48 none", 3, 1, 1, 2, 128, 48};
    c.layout = DK_STATE_V_LAST;
    c.gate = DK_GATE_NONE;
    c.io = c.state = elem::f16;
    add(c);
  }
  {  // the t1 grid (>= 132 heads): lanes along V first; V = 48: a partial tile
    case_desc c{"t1 vlast f16 state K=64 V=48 B=40 out_slots", 40, 1, 1, 4, 64, 48};
    c.layout = DK_STATE_V_LAST;
    c.logit = c.l2norm = true;
    c.state = elem::f16;
    c.out_slots = true;
    add(c);
  }
  {
    case_desc c{"t1 vlast f32 K=64 V=256 raw bf16 gates", 4, 1, 2, 2, 64, 256};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.gates = elem::bf16;
    add(c);
  }
  // fp32 state V-last with bf16 activations on the t1 grid (>= 132 heads):
  // decode_mode::t1_bf16io runs the t1 body with compile-time dtypes.
  {
    case_desc c{"t1 bf16io vlast f32 raw B=40 GVA4 strided pad", 40, 1, 2, 8, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.strided = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io vlast f32 K=64 V=48 out_slots idx64", 40, 1, 1, 4, 64, 48};
    c.layout = DK_STATE_V_LAST;
    c.l2norm = true;
    c.io = elem::bf16;
    c.out_slots = c.idx64 = true;
    add(c);
  }
  {
    // The slot as two 32-bit words (load_index_words): int64, -1 and out of range.
    case_desc c{"t1 bf16io vlast f32 K=128 idx64 pad", 40, 1, 2, 8, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = elem::bf16;
    c.idx64 = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io vlast f32 smem B=80 GVA4 strided pad", 80, 1, 2, 8, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.strided = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io vlast f32 smem K=64 V=48 B=160 out_slots idx64", 160, 1, 1, 4, 64, 48};
    c.layout = DK_STATE_V_LAST;
    c.l2norm = true;
    c.io = elem::bf16;
    c.out_slots = c.idx64 = true;
    add(c);
  }
  {
    case_desc c{"t1 per-key (general kernel)", 4, 1, 2, 4, 128, 128};
    c.gate = DK_GATE_PER_KEY;
    c.raw = c.l2norm = true;
    add(c);
  }
  if (small) {  // the sanitizer subset: one of each kernel family, small shapes
    std::vector<case_desc> sub;
    for (size_t i : {size_t(1), size_t(4), size_t(7), size_t(9), size_t(10), size_t(11), size_t(12),
                     size_t(13), size_t(15), size_t(17), size_t(19)})
      if (i < cs.size()) sub.push_back(cs[i]);
    for (auto& c : sub) c.B = std::min(c.B, 3);
    for (const case_desc& c : cs)  // the T = 1 kernels, both grid sizes (B = 24, 40 stay)
      if (c.name.rfind("t1 ", 0) == 0) sub.push_back(c);
    return sub;
  }
  return cs;
}

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
CUdeviceptr g_flush = 0;
const size_t kFlushBytes = size_t(256) << 20;

// "qwen3next/b128/t1/f32/klast/scalar": the name --only selects.
std::string label_of(const bench_case& c) {
  return std::string(c.workload) + "/b" + std::to_string(c.B) + "/t" + std::to_string(c.T) + "/" +
         elem_name(c.state) + (c.layout == DK_STATE_K_LAST ? "/klast/" : "/vlast/") +
         (c.gate == DK_GATE_PER_KEY ? "per-key" : "scalar") + (c.pad ? "/pad" : "");
}

double measure_copy_gbps() {
  const size_t bytes = size_t(1) << 30;
  CUdeviceptr a = 0, b = 0;
  if (cu.cuMemAlloc(&a, bytes) != CUDA_SUCCESS) return 0;
  if (cu.cuMemAlloc(&b, bytes) != CUDA_SUCCESS) {
    cu.cuMemFree(a);
    return 0;
  }
  CUevent e0, e1;
  cu.cuEventCreate(&e0, 0);
  cu.cuEventCreate(&e1, 0);
  std::vector<float> ms;
  for (int i = 0; i < 12; ++i) {
    cu.cuEventRecord(e0, CUstream(g_stream));
    cu.cuMemcpyDtoDAsync(b, a, bytes, CUstream(g_stream));
    cu.cuEventRecord(e1, CUstream(g_stream));
    cu.cuEventSynchronize(e1);
    float t = 0;
    cu.cuEventElapsedTime(&t, e0, e1);
    if (i >= 2) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  cu.cuEventDestroy(e0);
  cu.cuEventDestroy(e1);
  cu.cuMemFree(a);
  cu.cuMemFree(b);
  return 2.0 * bytes / (ms[ms.size() / 2] * 1e-3) / 1e9;
}

// ---- reference timings: what the graph-replay timer costs by itself ----

// The 4 KB tile of a one-warp block in the reference kernels: 8 loads of 16 bytes
// per lane from %rd9 + 512 i into %r10..%r41, or the 8 stores back.
std::string tile_access(bool store, int rows = 8) {
  std::string out;
  for (int i = 0; i < rows; ++i) {
    const std::string regs = "{%r" + std::to_string(10 + 4 * i) + ", %r" + std::to_string(11 + 4 * i) +
                             ", %r" + std::to_string(12 + 4 * i) + ", %r" + std::to_string(13 + 4 * i) + "}";
    const std::string at = "[%rd9+" + std::to_string(512 * i) + "]";
    out += store ? "  st.global.v4.u32 " + at + ", " + regs + ";\n" : "  ld.global.v4.u32 " + regs + ", " + at + ";\n";
  }
  return out;
}

// The reference kernels over 2 MB sequences reached through a slot table
// (below). `programmatic`: each block first waits for the previous kernel
// (griddepcontrol, sm_90+) and lets the next one launch, as the decode
// kernels do under programmatic launch.
std::string programmatic_wait(bool programmatic) {
  return programmatic ? "  griddepcontrol.wait;\n  griddepcontrol.launch_dependents;\n" : "";
}
// Tiles updated in place: blocks of `warps` warps, each warp `rows`
// consecutive 512-byte rows (one 16-byte vector per lane per row), so a block
// covers warps * rows * 512 contiguous bytes; 1 x 8 is the 4 KB tile of the t1
// decode's one-warp blocks.
std::string tile_slots_ptx(const std::string& name, bool programmatic, int rows = 8, int warps = 1) {
  const int block_bytes = rows * warps * 512;
  int shift = 0;  // log2(blocks per 2 MB sequence)
  while (block_bytes << shift < 2097152) ++shift;
  return ".visible .entry " + name + R"((.param .u64 base, .param .u64 slots) {
  .reg .u64 %rd<12>; .reg .u32 %r<48>;
  ld.param.u64 %rd1, [base]; ld.param.u64 %rd2, [slots];
)" + programmatic_wait(programmatic) +
         "  mov.u32 %r2, %ctaid.x; mov.u32 %r3, %tid.x;\n"
         "  shr.u32 %r4, %r2, " + std::to_string(shift) + ";\n"
         "  and.b32 %r5, %r2, " + std::to_string((1 << shift) - 1) + ";\n" +
         R"(  mul.wide.u32 %rd5, %r4, 4;
  add.u64 %rd6, %rd2, %rd5;
  ld.global.u32 %r6, [%rd6];
  mul.wide.u32 %rd7, %r6, 2097152;
)" + "  mul.wide.u32 %rd3, %r5, " + std::to_string(block_bytes) + ";\n" +
         R"(  add.u64 %rd4, %rd1, %rd7;
  add.u64 %rd4, %rd4, %rd3;
  shr.u32 %r7, %r3, 5;
  and.b32 %r8, %r3, 31;
)" + "  mul.wide.u32 %rd10, %r7, " + std::to_string(rows * 512) + ";\n" +
         R"(  add.u64 %rd4, %rd4, %rd10;
  mul.wide.u32 %rd8, %r8, 16;
  add.u64 %rd9, %rd4, %rd8;
)" + tile_access(false, rows) +
         "  add.u32 %r10, %r10, 1;\n" + tile_access(true, rows) + "  ret;\n}\n";
}
// The plain 16-byte stream (one vector per thread) updated in place.
std::string stream_slots_ptx(const std::string& name, bool programmatic) {
  return ".visible .entry " + name + R"((.param .u64 base, .param .u64 slots, .param .u64 n16) {
  .reg .u64 %rd<12>; .reg .u32 %r<10>; .reg .pred %p;
  ld.param.u64 %rd1, [base]; ld.param.u64 %rd2, [slots]; ld.param.u64 %rd3, [n16];
)" + programmatic_wait(programmatic) +
         R"(  mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %tid.x;
  mad.wide.u32 %rd4, %r1, %r2, 0; cvt.u64.u32 %rd5, %r3; add.u64 %rd4, %rd4, %rd5;
  setp.ge.u64 %p, %rd4, %rd3; @%p ret;
  shr.u64 %rd5, %rd4, 17;
  and.b64 %rd6, %rd4, 131071;
  shl.b64 %rd5, %rd5, 2; add.u64 %rd7, %rd2, %rd5;
  ld.global.u32 %r8, [%rd7];
  mul.wide.u32 %rd8, %r8, 2097152;
  shl.b64 %rd6, %rd6, 4;
  add.u64 %rd9, %rd1, %rd8; add.u64 %rd9, %rd9, %rd6;
  ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd9];
  add.u32 %r4, %r4, 1;
  st.global.v4.u32 [%rd9], {%r4, %r5, %r6, %r7};
  ret;
}
)";
}

// Kernels JIT-compiled from PTX (no CUDA runtime here): an empty one; one that
// loads a word and stores it (one dependent trip to memory, like a padded
// decode); one that loads an index, then a word at that index, then stores
// (two dependent trips: the least any T = 1 decode does); and a plain
// streaming kernel, 16 bytes per thread, run out of place (a kernel copy) and
// in place (read, modify, write back: the access pattern of a decode's state);
// and one-warp blocks that each update a 4 KB tile in place like the t1 decode
// (8 loads, then 8 stores), optionally after a dependent index load and/or a
// dependent spin of N steps between the loads' arrival and the stores; and
// the same tiles, or the plain stream, reached through a slot index per 2 MB
// sequence (in order, or shuffled as dk_bench's slots are).
const std::string kRefPtx = std::string(R"(
.version 7.0
.target sm_80
.address_size 64
.visible .entry dk_empty() { ret; }
.visible .entry dk_chain1(.param .u64 idx, .param .u64 out) {
  .reg .u64 %rd<4>; .reg .u32 %r<2>;
  ld.param.u64 %rd1, [idx]; ld.param.u64 %rd2, [out];
  ld.global.u32 %r1, [%rd1];
  st.global.u32 [%rd2], %r1;
  ret;
}
.visible .entry dk_chain2(.param .u64 idx, .param .u64 base, .param .u64 out) {
  .reg .u64 %rd<8>; .reg .u32 %r<3>;
  ld.param.u64 %rd1, [idx]; ld.param.u64 %rd2, [base]; ld.param.u64 %rd3, [out];
  ld.global.u32 %r1, [%rd1];
  mul.wide.u32 %rd4, %r1, 4;
  add.u64 %rd5, %rd2, %rd4;
  ld.global.u32 %r2, [%rd5];
  st.global.u32 [%rd3], %r2;
  ret;
}
.visible .entry dk_tile(.param .u64 base, .param .u64 idx, .param .u32 spin) {
  .reg .u64 %rd<12>; .reg .u32 %r<48>; .reg .pred %p;
  ld.param.u64 %rd1, [base]; ld.param.u64 %rd2, [idx]; ld.param.u32 %r1, [spin];
  mov.u32 %r2, %ctaid.x; mov.u32 %r3, %tid.x;
  mul.wide.u32 %rd3, %r2, 4096;
  add.u64 %rd4, %rd1, %rd3;
  setp.eq.u64 %p, %rd2, 0;
  @%p bra NOIDX;
  shr.u32 %r4, %r2, 9;
  and.b32 %r4, %r4, 255;
  mul.wide.u32 %rd5, %r4, 4;
  add.u64 %rd6, %rd2, %rd5;
  ld.global.u32 %r5, [%rd6];
  cvt.u64.u32 %rd7, %r5;
  add.u64 %rd4, %rd4, %rd7;
NOIDX:
  mul.wide.u32 %rd8, %r3, 16;
  add.u64 %rd9, %rd4, %rd8;
)")
    + tile_access(false)
    + R"(  mov.u32 %r7, %r10;
  mov.u32 %r6, 0;
LOOP:
  setp.ge.u32 %p, %r6, %r1;
  @%p bra STORE;
  mad.lo.u32 %r7, %r7, 3, 1;
  add.u32 %r6, %r6, 1;
  bra LOOP;
STORE:
  add.u32 %r10, %r10, %r7;
)"
    + tile_access(true)
    + R"(  ret;
}
)"
    + tile_slots_ptx("dk_tile_slots", false) + stream_slots_ptx("dk_stream_slots", false) + R"(.visible .entry dk_stream(.param .u64 src, .param .u64 dst, .param .u64 n16) {
  .reg .u64 %rd<8>; .reg .u32 %r<8>; .reg .pred %p;
  ld.param.u64 %rd1, [src]; ld.param.u64 %rd2, [dst]; ld.param.u64 %rd3, [n16];
  mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %tid.x;
  mad.wide.u32 %rd4, %r1, %r2, 0; cvt.u64.u32 %rd5, %r3; add.u64 %rd4, %rd4, %rd5;
  setp.ge.u64 %p, %rd4, %rd3; @%p ret;
  shl.b64 %rd4, %rd4, 4; add.u64 %rd6, %rd1, %rd4; add.u64 %rd7, %rd2, %rd4;
  ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd6];
  add.u32 %r4, %r4, 1;
  st.global.v4.u32 [%rd7], {%r4, %r5, %r6, %r7};
  ret;
}
)";

// The slot kernels under programmatic launch (PTX 7.8 for griddepcontrol;
// loaded only on sm_90 and newer).
const std::string kRefPtxProgrammatic = ".version 7.8\n.target sm_90\n.address_size 64\n" +
                                        tile_slots_ptx("dk_tile_slots_pdl", true) +
                                        tile_slots_ptx("dk_tile2x4_slots_pdl", true, 4, 2) +
                                        tile_slots_ptx("dk_tile4x2_slots_pdl", true, 2, 4) +
                                        tile_slots_ptx("dk_tile8x1_slots_pdl", true, 1, 8) +
                                        stream_slots_ptx("dk_stream_slots_pdl", true);

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

// Median us of `n` replays of `exec` after `warm` untimed ones, each after the
// L2 flush when `flush`; destroys `exec`.
double replay_median_us(CUgraphExec exec, bool flush, int n, int warm) {
  CUevent e0, e1;
  cu.cuEventCreate(&e0, 0);
  cu.cuEventCreate(&e1, 0);
  std::vector<float> ms;
  for (int i = 0; i < n + warm; ++i) {
    if (flush) cu.cuMemsetD8Async(g_flush, static_cast<unsigned char>(i), kFlushBytes, CUstream(g_stream));
    cu.cuEventRecord(e0, CUstream(g_stream));
    cu.cuGraphLaunch(exec, CUstream(g_stream));
    cu.cuEventRecord(e1, CUstream(g_stream));
    cu.cuEventSynchronize(e1);
    float t = 0;
    cu.cuEventElapsedTime(&t, e0, e1);
    if (i >= warm) ms.push_back(t);
  }
  cu.cuEventDestroy(e0);
  cu.cuEventDestroy(e1);
  cu.cuGraphExecDestroy(exec);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] * 1e3;
}

// Median of `n` graph replays of what `enqueue` puts on the stream, each after
// the L2 flush; 0 when capture fails.
template <class Enqueue>
double graph_median_us(Enqueue&& enqueue, int n = 60, int warm = 10) {
  if (!g_flush) return 0;
  const CUgraphExec exec = capture_graph(enqueue);
  return exec ? replay_median_us(exec, true, n, warm) : 0;
}

// dk_bench's "in graph" timer for a reference kernel: one graph of `calls`
// launches (enqueue_call(i) launches call i, on its own copy of the bytes, the
// copies spanning more than the flush so that each call finds its bytes cold),
// replayed back to back without a flush; per-call us, 0 when capture fails.
template <class EnqueueCall>
double chain_median_us(int calls, EnqueueCall&& enqueue_call, int n = 20, int warm = 3) {
  const CUgraphExec exec = capture_graph([&] {
    bool queued = true;
    for (int i = 0; i < calls && queued; ++i) queued = enqueue_call(i);
    return queued;
  });
  return exec ? replay_median_us(exec, false, n, warm) / calls : 0;
}

void print_ref_row(const char* what, int B, double mb, double g_us, double copy_gbps,
                   const char* timer = "(graph, L2 flushed)") {
  const double gbps = g_us > 0 ? mb * 1e6 / (g_us * 1e-6) / 1e9 : 0.0;
  std::printf("| %-9s | %4d |  1 | f32  | klast | %-8s | %-33s | %9s | %8.1f | %8.1f | %5s  | %6s | %9.2f | %5.1f%% |\n",
              what, B, "ref", timer, "-", mb, gbps, "-", "-", g_us,
              copy_gbps > 0 ? 100.0 * gbps / copy_gbps : 0.0);
}

// Slot tables for the reference tile kernel over B slots (see run_reference).
std::vector<int32_t> slot_order(const std::string& name, int B) {
  std::vector<int32_t> order(static_cast<size_t>(B));
  std::iota(order.begin(), order.end(), 0);
  if (name == "ref-tile-scatter") {
    std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
  } else if (name == "ref-tile-scatter8") {
    std::mt19937_64 rng(7);
    for (size_t i = 0; i < order.size(); i += 8)
      std::shuffle(order.begin() + i, order.begin() + std::min(order.size(), i + 8), rng);
  } else if (name == "ref-tile-reverse") {
    std::reverse(order.begin(), order.end());
  } else if (name == "ref-tile-stride8" || name == "ref-tile-stride64") {
    // In order, but consecutive sequences `stride` slots (16 or 128 MB) apart:
    // passes over slots 0, s, 2s, ..., then 1, 1 + s, ... (when s divides B; else in order).
    const int stride = name == "ref-tile-stride8" ? 8 : 64;
    if (B % stride == 0)
      for (int i = 0; i < B; ++i) order[size_t(i)] = (i % (B / stride)) * stride + i / (B / stride);
  }
  return order;
}
bool upload_slots(CUdeviceptr slots, const std::vector<int32_t>& order) {
  return ok(dk_memcpy(g_ctx, reinterpret_cast<void*>(slots), order.data(), order.size() * 4,
                      DK_COPY_HOST_TO_DEVICE, g_stream), "slot upload") &&
         ok(dk_stream_synchronize(g_ctx, g_stream), "slot upload");
}

// The reference rows: launch floor, one and two dependent memory trips, a
// device copy of the bytes a Qwen3-Next fp32 decode of batch B moves, the
// kernels above over those bytes, and (ref-*-chain) the same kernels under
// dk_bench's in-graph timer: what plain kernels over the same bytes reach there.
void run_reference(double copy_gbps) {
  CUmodule mod = nullptr;
  CUfunction f_empty = nullptr, f_chain1 = nullptr, f_chain2 = nullptr, f_stream = nullptr,
             f_tile = nullptr, f_tile_slots = nullptr, f_stream_slots = nullptr;
  if (cu.cuModuleLoadData(&mod, kRefPtx.c_str()) != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_empty, mod, "dk_empty") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_chain1, mod, "dk_chain1") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_chain2, mod, "dk_chain2") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_stream, mod, "dk_stream") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_tile, mod, "dk_tile") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_tile_slots, mod, "dk_tile_slots") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_stream_slots, mod, "dk_stream_slots") != CUDA_SUCCESS) {
    std::printf("  (reference kernels: PTX JIT failed)\n");
    if (mod) cu.cuModuleUnload(mod);
    return;
  }
  // The programmatic variants: sm_90 and newer only (the module does not load
  // before), with CUDA 12's driver and headers (cuLaunchKernelEx).
  CUmodule mod_pdl = nullptr;
  // The 4 KB blocks split over 2, 4 and 8 warps (4, 2 and 1 rows each).
  CUfunction f_tile_pdl = nullptr, f_stream_pdl = nullptr, f_tile_warps_pdl[3] = {};
#if CUDA_VERSION >= 12000
  if (!cu.cuLaunchKernelEx || cu.cuModuleLoadData(&mod_pdl, kRefPtxProgrammatic.c_str()) != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_tile_pdl, mod_pdl, "dk_tile_slots_pdl") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_tile_warps_pdl[0], mod_pdl, "dk_tile2x4_slots_pdl") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_tile_warps_pdl[1], mod_pdl, "dk_tile4x2_slots_pdl") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_tile_warps_pdl[2], mod_pdl, "dk_tile8x1_slots_pdl") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_stream_pdl, mod_pdl, "dk_stream_slots_pdl") != CUDA_SUCCESS) {
    std::printf("  (programmatic reference rows: not on this device or driver)\n");
    f_tile_pdl = f_stream_pdl = nullptr;
  }
  auto launch_programmatic = [&](CUfunction f, unsigned blocks, unsigned threads, void** args) {
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg{};
    cfg.gridDimX = blocks, cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = threads, cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = CUstream(g_stream);
    cfg.attrs = &attr, cfg.numAttrs = 1;
    return cu.cuLaunchKernelEx(&cfg, f, args, nullptr) == CUDA_SUCCESS;
  };
#else
  std::printf("  (programmatic reference rows: built without CUDA 12 headers)\n");
  auto launch_programmatic = [](CUfunction, unsigned, unsigned, void**) { return false; };
#endif
  const size_t slot_bytes = size_t(32) * 128 * 128 * 4;  // Qwen3-Next fp32 state of one sequence
  const size_t max_bytes = 512 * slot_bytes;
  CUdeviceptr src = 0, dst = 0, words = 0;
  if (cu.cuMemAlloc(&src, max_bytes) != CUDA_SUCCESS || cu.cuMemAlloc(&dst, max_bytes) != CUDA_SUCCESS ||
      cu.cuMemAlloc(&words, 4096) != CUDA_SUCCESS) {
    std::printf("  (reference rows: allocation failed)\n");
  } else {
    cu.cuMemsetD8Async(words, 0, 4096, CUstream(g_stream));
    cu.cuMemsetD8Async(src, 1, max_bytes, CUstream(g_stream));
    CUdeviceptr idx = words, out = words + 1024, base = src;
    void* a0[] = {nullptr};
    void* a1[] = {&idx, &out};
    void* a2[] = {&idx, &base, &out};
    auto launch = [&](CUfunction f, void** args) {
      return [=]() {
        return cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, CUstream(g_stream), args, nullptr) == CUDA_SUCCESS;
      };
    };
    print_ref_row("ref-empty", 1, 0.0, graph_median_us(launch(f_empty, a0)), copy_gbps);
    print_ref_row("ref-trip1", 1, 0.0, graph_median_us(launch(f_chain1, a1)), copy_gbps);
    print_ref_row("ref-trip2", 1, 0.0, graph_median_us(launch(f_chain2, a2)), copy_gbps);
    for (int B : {1, 8, 32, 128, 512}) {
      const size_t n = size_t(B) * slot_bytes;
      const double us = graph_median_us([&] {
        return cu.cuMemcpyDtoDAsync(dst, src, n, CUstream(g_stream)) == CUDA_SUCCESS;
      });
      print_ref_row("ref-copy", B, 2.0 * n / 1e6, us, copy_gbps);
    }
    for (int B : {32, 128, 512}) {
      unsigned long long n16 = size_t(B) * slot_bytes / 16;
      const unsigned blocks = unsigned((n16 + 255) / 256);
      for (bool in_place : {false, true}) {
        CUdeviceptr to = in_place ? src : dst;
        void* args[] = {&base, &to, &n16};
        const double us = graph_median_us([&] {
          return cu.cuLaunchKernel(f_stream, blocks, 1, 1, 256, 1, 1, 0, CUstream(g_stream), args, nullptr) ==
                 CUDA_SUCCESS;
        });
        print_ref_row(in_place ? "ref-rmw" : "ref-kcopy", B, 2.0 * n16 * 16 / 1e6, us, copy_gbps);
      }
      // words[0..255] stay zero (the index is taken mod 256): it adds nothing, but its
      // load is a dependent trip.
      // ref-tile-25: 8 KB of (unused) shared memory per block caps it at 25 blocks
      // per SM, the t1 decode's occupancy (80 registers).
      for (auto [name, with_index, spin, smem] :
           {std::tuple{"ref-tile", false, 0u, 0u}, std::tuple{"ref-tile-idx", true, 0u, 0u},
            std::tuple{"ref-tile-s64", false, 64u, 0u}, std::tuple{"ref-tile-s256", false, 256u, 0u},
            std::tuple{"ref-tile-25", false, 0u, 8192u}}) {
        CUdeviceptr index = with_index ? words : 0;
        unsigned steps = spin;
        void* args[] = {&base, &index, &steps};
        const unsigned tiles = unsigned(size_t(B) * slot_bytes / 4096);
        const double us = graph_median_us([&] {
          return cu.cuLaunchKernel(f_tile, tiles, 1, 1, 32, 1, 1, smem, CUstream(g_stream), args, nullptr) ==
                 CUDA_SUCCESS;
        });
        print_ref_row(name, B, 2.0 * double(tiles) * 4096 / 1e6, us, copy_gbps);
      }
      // The same tiles through a slot table: in order, shuffled as dk_bench's slots,
      // shuffled only within runs of 8 consecutive slots (about the slots a wave
      // covers), in descending order, and in order but 8 or 64 slots apart:
      // which property of shuffled slots costs.
      for (const char* name : {"ref-tile-slots", "ref-tile-scatter", "ref-tile-scatter8", "ref-tile-reverse",
                               "ref-tile-stride8", "ref-tile-stride64"}) {
        const std::vector<int32_t> order = slot_order(name, B);
        CUdeviceptr slots = words + 2048;  // bytes 2048..4095 of `words`
        if (!upload_slots(slots, order)) continue;
        void* args[] = {&base, &slots};
        const unsigned tiles = unsigned(size_t(B) * slot_bytes / 4096);
        const double us = graph_median_us([&] {
          return cu.cuLaunchKernel(f_tile_slots, tiles, 1, 1, 32, 1, 1, 0, CUstream(g_stream), args,
                                   nullptr) == CUDA_SUCCESS;
        });
        print_ref_row(name, B, 2.0 * double(tiles) * 4096 / 1e6, us, copy_gbps);
      }
    }
    // The in-graph ceilings of dk_bench's "in graph" rows: the same chain of calls
    // on cold copies, each call one reference kernel over B's state bytes in
    // place (one-warp 4 KB tiles like the t1 decode, or the plain 16-byte stream).
    for (int B : {8, 32, 128}) {
      const size_t bytes = size_t(B) * slot_bytes;
      const int calls = std::max<int>(2, int((kFlushBytes + bytes - 1) / bytes));
      CUdeviceptr chain = 0;
      if (cu.cuMemAlloc(&chain, bytes * size_t(calls)) != CUDA_SUCCESS) {
        std::printf("  (chain reference rows, B=%d: allocation failed)\n", B);
        continue;
      }
      cu.cuMemsetD8Async(chain, 1, bytes * size_t(calls), CUstream(g_stream));
      char timer[40];
      std::snprintf(timer, sizeof timer, "(graph of %d calls)", calls);
      CUdeviceptr no_index = 0;
      unsigned no_spin = 0;
      const unsigned tiles = unsigned(bytes / 4096);
      const double tile_us = chain_median_us(calls, [&](int i) {
        CUdeviceptr at = chain + size_t(i) * bytes;
        void* args[] = {&at, &no_index, &no_spin};
        return cu.cuLaunchKernel(f_tile, tiles, 1, 1, 32, 1, 1, 0, CUstream(g_stream), args, nullptr) ==
               CUDA_SUCCESS;
      });
      print_ref_row("ref-tile-chain", B, 2.0 * double(bytes) / 1e6, tile_us, copy_gbps, timer);
      unsigned long long n16 = bytes / 16;
      const double rmw_us = chain_median_us(calls, [&](int i) {
        CUdeviceptr at = chain + size_t(i) * bytes;
        void* args[] = {&at, &at, &n16};
        return cu.cuLaunchKernel(f_stream, unsigned((n16 + 255) / 256), 1, 1, 256, 1, 1, 0, CUstream(g_stream),
                                 args, nullptr) == CUDA_SUCCESS;
      });
      print_ref_row("ref-rmw-chain", B, 2.0 * double(bytes) / 1e6, rmw_us, copy_gbps, timer);
      // The tile chain through dk_bench-like shuffled slots (one permutation for every call).
      CUdeviceptr slots = words + 2048;
      if (upload_slots(slots, slot_order("ref-tile-scatter", B))) {
        // The slot kernels take (base, slots) and the stream's also n16: the
        // tile kernels ignore the extra argument.
        auto slots_chain = [&](CUfunction f, unsigned blocks, unsigned threads) {
          return chain_median_us(calls, [&](int i) {
            CUdeviceptr at = chain + size_t(i) * bytes;
            void* args[] = {&at, &slots, &n16};
            return cu.cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, CUstream(g_stream), args, nullptr) ==
                   CUDA_SUCCESS;
          });
        };
        const unsigned stream_blocks = unsigned((n16 + 255) / 256);
        print_ref_row("ref-tile-scatter-chain", B, 2.0 * double(bytes) / 1e6, slots_chain(f_tile_slots, tiles, 32),
                      copy_gbps, timer);
        // The plain 16-byte stream (256-thread blocks) through the same slots.
        print_ref_row("ref-rmw-scatter-chain", B, 2.0 * double(bytes) / 1e6,
                      slots_chain(f_stream_slots, stream_blocks, 256), copy_gbps, timer);
        // The same two under programmatic launch (dk_bench's "PDL" column): what
        // plain kernels over these bytes reach where the decode's PDL rows are timed.
        auto pdl_chain = [&](CUfunction f, unsigned blocks, unsigned threads) {
          return chain_median_us(calls, [&](int i) {
            CUdeviceptr at = chain + size_t(i) * bytes;
            void* args[] = {&at, &slots, &n16};
            return launch_programmatic(f, blocks, threads, args);
          });
        };
        if (f_tile_pdl) {
          print_ref_row("ref-tile-scatter-chain-pdl", B, 2.0 * double(bytes) / 1e6,
                        pdl_chain(f_tile_pdl, tiles, 32), copy_gbps, timer);
          print_ref_row("ref-rmw-scatter-chain-pdl", B, 2.0 * double(bytes) / 1e6,
                        pdl_chain(f_stream_pdl, stream_blocks, 256), copy_gbps, timer);
          // The same 4 KB blocks over 2, 4 and 8 warps (one-warp blocks of less
          // than 4 KB are held back by the rate at which blocks launch).
          for (int r = 0; r < 3; ++r) {
            const int warps = 2 << r;
            const std::string name = "ref-tile" + std::to_string(warps) + "w-scatter-chain-pdl";
            print_ref_row(name.c_str(), B, 2.0 * double(bytes) / 1e6,
                          pdl_chain(f_tile_warps_pdl[r], tiles, 32 * unsigned(warps)), copy_gbps, timer);
          }
        }
        // The tiles through slots in order, and (where it loads) under programmatic launch.
        if (upload_slots(slots, slot_order("ref-tile-slots", B))) {
          print_ref_row("ref-tile-slots-chain", B, 2.0 * double(bytes) / 1e6, slots_chain(f_tile_slots, tiles, 32),
                        copy_gbps, timer);
          if (f_tile_pdl)
            print_ref_row("ref-tile-slots-chain-pdl", B, 2.0 * double(bytes) / 1e6,
                          pdl_chain(f_tile_pdl, tiles, 32), copy_gbps, timer);
        }
      }
      cu.cuStreamSynchronize(CUstream(g_stream));
      cu.cuMemFree(chain);
    }
  }
  cu.cuStreamSynchronize(CUstream(g_stream));
  if (words) cu.cuMemFree(words);
  if (dst) cu.cuMemFree(dst);
  if (src) cu.cuMemFree(src);
  cu.cuModuleUnload(mod);
  if (mod_pdl) cu.cuModuleUnload(mod_pdl);
}

bool run_bench(const bench_case& c, double copy_gbps) {
  const int B = c.B, T = c.T, HQ = c.HQ, HV = c.HV, K = c.K, V = c.V;
  const bool k_last = c.layout == DK_STATE_K_LAST;
  const size_t slot_elems = size_t(HV) * K * V;
  const size_t slot_bytes = slot_elems * elem_size(c.state);
  // Enough slots that consecutive calls touch different memory (pool >> 60 MB L2).
  const int64_t P = std::max<int64_t>(B, int64_t((size_t(1) << 30) / slot_bytes));
  const int iters = 60, warm = 10;
  const int gw = c.gate == DK_GATE_PER_KEY ? K : 1;
  std::mt19937_64 rng(42);
  auto fill = [&](elem t, size_t n, double lo, double hi) {
    host_array h;
    h.resize(t, n);
    std::uniform_real_distribution<double> u(lo, hi);
    for (size_t i = 0; i < n; ++i) h.set(i, u(rng));
    return h;
  };
  const elem io = elem::bf16;
  host_array q = fill(io, size_t(B) * T * HQ * K, -1, 1), k = fill(io, size_t(B) * T * HQ * K, -1, 1),
             v = fill(io, size_t(B) * T * HV * V, -1, 1), g = fill(elem::f32, size_t(B) * T * HV * gw, -2, 2),
             beta = fill(elem::f32, size_t(B) * T * HV, -3, 3), alog = fill(elem::f32, HV, -1, 1),
             dtb = fill(elem::f32, size_t(HV) * gw, -1, 1);
  device_buffer dq, dk_, dv, dout, dg, dbeta, dalog, ddtb, dpool, didx;
  auto up = [&](device_buffer& d, const host_array& h) {
    return d.alloc(h.bytes.size()) && d.upload(h.bytes.data(), h.bytes.size());
  };
  if (!(up(dq, q) && up(dk_, k) && up(dv, v) && up(dg, g) && up(dbeta, beta) && up(dalog, alog) &&
        up(ddtb, dtb) && dout.alloc(size_t(B) * T * HV * V * 2) && dpool.alloc(size_t(P) * slot_bytes)))
    return false;
  {  // random state: a bounded pattern is enough for timing (not zeros)
    host_array chunk = fill(c.state, std::min<size_t>(size_t(P) * slot_elems, size_t(1) << 24), -0.5, 0.5);
    for (size_t off = 0; off < size_t(P) * slot_bytes; off += chunk.bytes.size()) {
      const size_t n = std::min(chunk.bytes.size(), size_t(P) * slot_bytes - off);
      if (!ok(dk_memcpy(g_ctx, static_cast<char*>(dpool.ptr) + off, chunk.bytes.data(), n,
                        DK_COPY_HOST_TO_DEVICE, g_stream), "pool fill"))
        return false;
    }
  }
  std::vector<int32_t> idx(size_t(iters + warm) * B);
  for (int i = 0; i < iters + warm; ++i)
    for (int b = 0; b < B; ++b) idx[size_t(i) * B + b] = c.pad ? -1 : int32_t((int64_t(i) * B + b) % P);
  if (c.scatter) {  // the same slots, each call's in a shuffled order
    std::vector<int32_t> perm(static_cast<size_t>(P));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (int32_t& i : idx) i = perm[size_t(i)];
  }
  if (!(didx.alloc(idx.size() * 4) && didx.upload(idx.data(), idx.size() * 4))) return false;

  const dk_dtype bt = dtype_of(io), ft = dtype_of(elem::f32);
  view vq, vk, vv, vout, vg, vbeta, valog, vdtb, vpool, vidx;
  vq.set(dq.ptr, bt, {B, T, HQ, K}, {int64_t(T) * HQ * K, int64_t(HQ) * K, K, 1});
  vk.set(dk_.ptr, bt, {B, T, HQ, K}, {int64_t(T) * HQ * K, int64_t(HQ) * K, K, 1});
  vv.set(dv.ptr, bt, {B, T, HV, V}, {int64_t(T) * HV * V, int64_t(HV) * V, V, 1});
  vout.set(dout.ptr, bt, {B, T, HV, V}, {int64_t(T) * HV * V, int64_t(HV) * V, V, 1});
  if (gw == 1) vg.set(dg.ptr, ft, {B, T, HV}, {int64_t(T) * HV, HV, 1});
  else vg.set(dg.ptr, ft, {B, T, HV, K}, {int64_t(T) * HV * K, int64_t(HV) * K, K, 1});
  vbeta.set(dbeta.ptr, ft, {B, T, HV}, {int64_t(T) * HV, HV, 1});
  valog.set(dalog.ptr, ft, {HV}, {1});
  if (gw == 1) vdtb.set(ddtb.ptr, ft, {HV}, {1});
  else vdtb.set(ddtb.ptr, ft, {HV, K}, {K, 1});
  const int64_t d1 = k_last ? V : K, d2 = k_last ? K : V;
  vpool.set(dpool.ptr, dtype_of(c.state), {P, HV, d1, d2}, {int64_t(slot_elems), d1 * d2, d2, 1});
  dk_config cfg{};
  cfg.gate_kind = c.gate;
  cfg.gate_form = DK_GATE_RAW;
  cfg.beta_form = DK_BETA_LOGIT;
  cfg.state_layout = c.layout;
  cfg.qk_l2norm = 1;
  dk_decode_args a{};
  a.q = &vq.t;
  a.k = &vk.t;
  a.v = &vv.t;
  a.g = &vg.t;
  a.beta = &vbeta.t;
  a.A_log = &valog.t;
  a.dt_bias = &vdtb.t;
  a.state_pool = &vpool.t;
  a.state_indices = &vidx.t;
  a.out = &vout.t;
  vidx.set(didx.ptr, {DK_DTYPE_CODE_INT, 32, 1}, {B}, {1});
  const char* impl = nullptr;
  if (!ok(dk_decode_query(g_ctx, &cfg, &a, &impl), "bench query")) return false;

  CUevent e0, e1;
  cu.cuEventCreate(&e0, 0);
  cu.cuEventCreate(&e1, 0);
  std::vector<float> ms;
  std::vector<double> host_us;
  for (int i = 0; i < iters + warm; ++i) {
    vidx.set(didx.ptr, {DK_DTYPE_CODE_INT, 32, 1}, {B}, {1}, uint64_t(i) * B * 4);
    cu.cuEventRecord(e0, CUstream(g_stream));
    const auto h0 = std::chrono::steady_clock::now();
    const dk_status s = dk_decode_run(g_ctx, &cfg, &a, g_stream);
    const auto h1 = std::chrono::steady_clock::now();
    cu.cuEventRecord(e1, CUstream(g_stream));
    if (!ok(s, "bench run")) return false;
    cu.cuEventSynchronize(e1);
    float t = 0;
    cu.cuEventElapsedTime(&t, e0, e1);
    if (i >= warm) {
      ms.push_back(t);
      host_us.push_back(std::chrono::duration<double, std::micro>(h1 - h0).count());
    }
  }
  // Graph replays with the L2 flushed before each (as dk_bench times them): one
  // captured call, its slots fixed (the flush keeps them out of L2).
  double g_us = 0.0;
  if (g_flush) {
    g_us = graph_median_us([&] { return dk_decode_run(g_ctx, &cfg, &a, g_stream) == DK_STATUS_SUCCESS; }, iters,
                           warm);
    if (g_us == 0.0) std::printf("  (graph capture failed for %s)\n", label_of(c).c_str());
  }
  cu.cuEventDestroy(e0);
  cu.cuEventDestroy(e1);
  std::sort(ms.begin(), ms.end());
  std::sort(host_us.begin(), host_us.end());
  const double t_us = ms[ms.size() / 2] * 1e3;
  const double bytes = (c.pad ? 0.0 : 2.0 * B * slot_bytes) + 2.0 * B * T * HQ * K * 2 +
                       2.0 * B * T * HV * V * 2 + double(B) * T * HV * (gw + 1) * 4;
  const double gbps = bytes / (t_us * 1e-6) / 1e9;
  const double g_gbps = g_us > 0 ? bytes / (g_us * 1e-6) / 1e9 : 0.0;
  std::printf("| %-9s | %4d | %2d | %-4s | %-5s | %-8s | %-33s | %9.2f | %8.1f | %8.1f | %5.1f%% | %6.2f | %9.2f | %5.1f%% |\n",
              c.workload, B, T, elem_name(c.state), k_last ? "klast" : "vlast",
              c.pad ? "pad" : c.gate == DK_GATE_PER_KEY ? "per-key" : "scalar", impl, t_us, bytes / 1e6, gbps,
              copy_gbps > 0 ? 100.0 * gbps / copy_gbps : 0.0, host_us[host_us.size() / 2], g_us,
              copy_gbps > 0 ? 100.0 * g_gbps / copy_gbps : 0.0);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bool check = false, bench = false, small = false;
  const char* only = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--check")) check = true;
    else if (!std::strcmp(argv[i], "--bench")) bench = true;
    else if (!std::strcmp(argv[i], "--small")) small = check = true;
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i], bench = true;
    else {
      std::fprintf(stderr, "usage: %s [--check] [--bench] [--small] [--only WORKLOAD]\n", argv[0]);
      return 2;
    }
  }
  if (!check && !bench) check = bench = true;

  int32_t n = 0;
  if (dk_device_count(DK_BACKEND_CUDA, &n) != DK_STATUS_SUCCESS || n == 0) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  if (!ok(dk_context_create(DK_BACKEND_CUDA, 0, &g_ctx), "dk_context_create")) return 1;
  dk_device_info info;
  dk_context_device_info(g_ctx, &info);
  std::printf("device: %s | %s | arch %s | compiled %s | %d SMs | %.1f GiB | peak %.0f GB/s\n",
              info.vendor, info.name, info.arch, info.compiled_archs, info.compute_units,
              info.memory_bytes / 1073741824.0, info.peak_bandwidth_gbps);
  if (!ok(dk_stream_create(g_ctx, &g_stream), "dk_stream_create")) return 1;
  g_check_kernels = std::string(info.arch) == "sm_90a" && info.compute_units == 132;
  std::printf("kernel choice per case: %s\n", g_check_kernels ? "checked (132-SM sm_90a table)"
                                                              : "not checked (no table for this device)");

  int failed = 0, total = 0;
  if (check) {
    std::printf("== decode correctness vs fp64 reference\n");
    uint64_t seed = 1;
    for (const case_desc& c : check_cases(small)) {
      ++total;
      if (!run_case(c, seed++)) ++failed;
    }
    std::printf("== %d/%d cases passed\n", total - failed, total);
  }
  CUcontext primary = nullptr;
  if (bench && !cu.load()) {
    std::printf("no CUDA driver library: timings skipped\n");
  } else if (bench && cu.cuInit(0) == CUDA_SUCCESS && cu.cuDevicePrimaryCtxRetain(&primary, 0) == CUDA_SUCCESS &&
      cu.cuCtxSetCurrent(primary) == CUDA_SUCCESS) {
    const double copy = measure_copy_gbps();
    if (cu.cuMemAlloc(&g_flush, kFlushBytes) != CUDA_SUCCESS) g_flush = 0;
    std::printf("== decode timings (bf16 q/k/v/out, raw gates, beta logit, l2norm; median of 60 "
                "event-timed calls; time: eager, slots rotate through a >= 1 GiB pool; graph: "
                "CUDA-graph replays, %zu MiB L2 flush before each)\n", kFlushBytes >> 20);
    std::printf("device-to-device copy: %.0f GB/s (read + write)\n", copy);
    std::printf("| workload  |    B |  T | S    | pool  | gate     | implementation                    |   time us |  MB moved |     GB/s |  %%copy | host us |  graph us | g%%copy |\n");
    std::printf("|-----------|------|----|------|-------|----------|-----------------------------------|-----------|----------|----------|--------|---------|-----------|--------|\n");
    const bench_case cases[] = {
        {"floor", 1, 1, 16, 32, 128, 128, elem::f32, DK_STATE_K_LAST, DK_GATE_SCALAR, true},
        {"contest", 1, 1, 4, 8, 128, 128, elem::f32},
        {"contest", 1, 1, 4, 8, 128, 128, elem::bf16},
        {"qwen3next", 1, 1, 16, 32, 128, 128, elem::f32},
        {"qwen3next", 8, 1, 16, 32, 128, 128, elem::f32},
        {"qwen3next", 32, 1, 16, 32, 128, 128, elem::f32},
        {"qwen3next", 128, 1, 16, 32, 128, 128, elem::f32},
        {"qwen3next", 512, 1, 16, 32, 128, 128, elem::f32},
        {"qwen3next", 1, 1, 16, 32, 128, 128, elem::bf16},
        {"qwen3next", 8, 1, 16, 32, 128, 128, elem::bf16},
        {"qwen3next", 32, 1, 16, 32, 128, 128, elem::bf16},
        {"qwen3next", 128, 1, 16, 32, 128, 128, elem::bf16},
        {"qwen3next", 512, 1, 16, 32, 128, 128, elem::bf16},
        {"mtp", 32, 4, 16, 32, 128, 128, elem::f32},
        {"mtp", 32, 4, 16, 32, 128, 128, elem::bf16},
        {"mtp16", 32, 16, 16, 32, 128, 128, elem::f32},
        {"vlast", 32, 1, 16, 32, 128, 128, elem::f32, DK_STATE_V_LAST},
        {"vlast", 128, 1, 16, 32, 128, 128, elem::f32, DK_STATE_V_LAST},
        {"vlast", 512, 1, 16, 32, 128, 128, elem::f32, DK_STATE_V_LAST},
        {"vlast", 32, 1, 16, 32, 128, 128, elem::bf16, DK_STATE_V_LAST},
        {"vlast", 128, 1, 16, 32, 128, 128, elem::bf16, DK_STATE_V_LAST},
        {"vlast", 512, 1, 16, 32, 128, 128, elem::bf16, DK_STATE_V_LAST},
        {"vlast-mtp", 32, 4, 16, 32, 128, 128, elem::f32, DK_STATE_V_LAST},
        {"kda", 128, 1, 16, 32, 128, 128, elem::f32, DK_STATE_K_LAST, DK_GATE_PER_KEY},
        {"kv64", 128, 1, 16, 32, 64, 64, elem::f32},
        // dk_bench's slot order: scattered over the pool
        {"scatter", 32, 1, 16, 32, 128, 128, elem::f32, DK_STATE_K_LAST, DK_GATE_SCALAR, false, true},
        {"scatter", 128, 1, 16, 32, 128, 128, elem::f32, DK_STATE_K_LAST, DK_GATE_SCALAR, false, true},
        {"scatter", 512, 1, 16, 32, 128, 128, elem::f32, DK_STATE_K_LAST, DK_GATE_SCALAR, false, true},
        {"scatter", 512, 1, 16, 32, 128, 128, elem::f32, DK_STATE_V_LAST, DK_GATE_SCALAR, false, true},
        {"scatter", 512, 1, 16, 32, 128, 128, elem::bf16, DK_STATE_K_LAST, DK_GATE_SCALAR, false, true},
    };
    if (!only) run_reference(copy);
    for (const bench_case& c : cases) {
      if (only && label_of(c) != only) continue;
      if (!run_bench(c, copy)) ++failed;
    }
  }
  if (g_flush) cu.cuMemFree(g_flush);
  if (primary) cu.cuDevicePrimaryCtxRelease(0);
  dk_stream_destroy(g_ctx, g_stream);
  dk_context_destroy(g_ctx);
  return failed ? 1 : 0;
}
