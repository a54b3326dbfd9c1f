// dk_cuda_decode_check's timings of one benchmark case (eager calls and graph
// replays), and the device-to-device copy they are compared with.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "decode_check.hpp"

namespace dkc {

CUdeviceptr g_flush = 0;  // the L2 flush buffer (decode_check.hpp)

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

}  // namespace dkc
