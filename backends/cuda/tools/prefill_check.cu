// Standalone check of the GPU prefill kernels (kernels/prefill) against an fp64
// token-by-token recurrence (SPEC §1), plus the timing of the standard long prefill.
// Drives dk::gpu::prefill_* directly with hand-filled dk::prefill_problem, so it needs
// neither the C API nor the CUDA backend.
//
// Built as dk_cuda_prefill_check (sm_90a only) by the CUDA presets that include 90a;
// scripts/gpu-check runs it with --no-perf.
// Run: dk_cuda_prefill_check [--no-long] [--no-perf] [--only SUBSTRING] [--time-only] [--perf-first]
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "launch.hpp"
#include "prefill/prefill_impl.hpp"
#include "dk/hal.hpp"

// The library's dk::set_error lives in hal/src; this tool links without it.
namespace dk {
static thread_local char g_err[512];
dk_status set_error(dk_status status, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  vsnprintf(g_err, sizeof g_err, format, ap);
  va_end(ap);
  return status;
}
}  // namespace dk

#define CK(x)                                                                         \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(2);                                                                        \
    }                                                                                 \
  } while (0)

using dk::dtype;

// ------------------------------------------------------------------ host dtype helpers
static uint16_t f2bf(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
static float bf2f(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint16_t f2h(float f) { return __half_as_ushort(__float2half_rn(f)); }
static float h2f(uint16_t h) { return __half2float(__ushort_as_half(h)); }
static float round_to(dtype t, float x) {
  return t == dtype::bf16 ? bf2f(f2bf(x)) : t == dtype::f16 ? h2f(f2h(x)) : x;
}
static void put(std::vector<unsigned char>& buf, dtype t, size_t i, float x) {
  if (t == dtype::f32) memcpy(&buf[i * 4], &x, 4);
  else {
    uint16_t b = t == dtype::bf16 ? f2bf(x) : f2h(x);
    memcpy(&buf[i * 2], &b, 2);
  }
}
static float get(const std::vector<unsigned char>& buf, dtype t, size_t i) {
  if (t == dtype::f32) {
    float x;
    memcpy(&x, &buf[i * 4], 4);
    return x;
  }
  uint16_t b;
  memcpy(&b, &buf[i * 2], 2);
  return t == dtype::bf16 ? bf2f(b) : h2f(b);
}

// ------------------------------------------------------------------ case description
struct Case {
  std::string name;
  dtype io = dtype::bf16, st = dtype::f32, gt = dtype::f32;  // q/k/v/out, state, gates/beta
  dk::gate_kind gate = dk::gate_kind::scalar;
  bool raw = false, logit = true, l2 = true, vlast = false, strided = false;
  bool dt_bias = true, pool = true, dense = true;
  int hq = 2, hv = 4, K = 128, V = 128;
  std::vector<int> lens{64};
  float gmin = -0.2f, gmax = 0.f;  // log-gate range (when not raw)
  int force_path = -1;
  double tol = 5e-3;
  bool time = false;
  bool check = true;
  bool graph = true;  // also replay the call from a captured CUDA graph: bitwise-equal results
};

static double tol_for(dtype io, dtype st) {
  if (st != dtype::f32) return 2e-2;
  return io == dtype::f32 ? 1e-4 : 5e-3;
}

struct Result {
  double out_err = 0, st_err = 0;
  bool nan = false, untouched_ok = true, ran = false, graph_ok = true;
  double ms = 0, prep_ms = 0;
  const char* impl = "";
};

// ------------------------------------------------------------------ fp64 reference
struct HostData {
  int N, T, hq, hv, K, V;
  std::vector<int> cu;
  std::vector<float> q, k, v, g, beta, alog, dtb;  // rounded values, dense
  std::vector<double> s0;                          // initial states [N][HV][K][V]
};

static void reference_one(const Case& c, const HostData& d, int n, int h, double* S,
                          std::vector<double>& out) {
  const int K = d.K, V = d.V, hk = h / (d.hv / d.hq);
  const double scale = 1.0 / std::sqrt(double(K));
  std::vector<double> q(K), k(K), sk(V), u(V), gam(K);
  for (int t = d.cu[n]; t < d.cu[n + 1]; ++t) {
    double nq = 0, nk = 0;
    for (int i = 0; i < K; ++i) {
      q[i] = d.q[(size_t(t) * d.hq + hk) * K + i];
      k[i] = d.k[(size_t(t) * d.hq + hk) * K + i];
      nq += q[i] * q[i];
      nk += k[i] * k[i];
    }
    if (c.l2) {
      const double rq = 1.0 / std::sqrt(nq + 1e-6), rk = 1.0 / std::sqrt(nk + 1e-6);
      for (int i = 0; i < K; ++i) q[i] *= rq, k[i] *= rk;
    }
    for (int i = 0; i < K; ++i) {
      double x = 0;
      if (c.gate == dk::gate_kind::scalar) x = d.g[size_t(t) * d.hv + h];
      else if (c.gate == dk::gate_kind::per_key) x = d.g[(size_t(t) * d.hv + h) * K + i];
      if (c.gate != dk::gate_kind::none && c.raw) {
        const double b = c.dt_bias ? (c.gate == dk::gate_kind::per_key ? d.dtb[size_t(h) * K + i] : d.dtb[h]) : 0.0;
        const double z = x + b;
        const double sp = z > 20 ? z : std::log1p(std::exp(z));
        x = -std::exp(double(d.alog[h])) * sp;
      }
      gam[i] = x;
    }
    double beta = d.beta[size_t(t) * d.hv + h];
    if (c.logit) beta = 1.0 / (1.0 + std::exp(-beta));
    for (int i = 0; i < K; ++i) {
      const double e = std::exp(gam[i]);
      for (int j = 0; j < V; ++j) S[i * V + j] *= e;
    }
    std::fill(sk.begin(), sk.end(), 0.0);
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < V; ++j) sk[j] += S[i * V + j] * k[i];
    const float* vv = &d.v[(size_t(t) * d.hv + h) * V];
    for (int j = 0; j < V; ++j) u[j] = beta * (vv[j] - sk[j]);
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < V; ++j) S[i * V + j] += k[i] * u[j];
    double* o = &out[(size_t(t) * d.hv + h) * V];
    for (int j = 0; j < V; ++j) o[j] = 0;
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < V; ++j) o[j] += S[i * V + j] * q[i];
    for (int j = 0; j < V; ++j) o[j] *= scale;
  }
}

static void reference(const Case& c, const HostData& d, std::vector<double>& out,
                      std::vector<double>& fin) {
  out.assign(size_t(d.T) * d.hv * d.V, 0.0);
  fin = d.s0;
  const int jobs = d.N * d.hv;
  const int nth = std::max(1u, std::min(64u, std::thread::hardware_concurrency()));
  std::vector<std::thread> th;
  for (int w = 0; w < nth; ++w)
    th.emplace_back([&, w] {
      for (int j = w; j < jobs; j += nth) {
        const int n = j / d.hv, h = j % d.hv;
        reference_one(c, d, n, h, &fin[(size_t(n) * d.hv + h) * d.K * d.V], out);
      }
    });
  for (auto& t : th) t.join();
}

// Fills x with rounded N(0, sd^2) values, in parallel (deterministic per seed).
static void par_normal(std::vector<float>& x, uint64_t seed, float sd, dtype t) {
  const size_t n = x.size(), nth = 16, per = (n + nth - 1) / nth;
  std::vector<std::thread> th;
  for (size_t w = 0; w < nth; ++w)
    th.emplace_back([&, w] {
      std::mt19937_64 r(seed * 1000003 + w);
      std::normal_distribution<float> nd(0.f, 1.f);
      for (size_t i = w * per; i < std::min(n, (w + 1) * per); ++i) x[i] = round_to(t, nd(r) * sd);
    });
  for (auto& t_ : th) t_.join();
}

// ------------------------------------------------------------------ one case
static dk::operand opnd(const void* p, dtype t, std::initializer_list<int64_t> s) {
  dk::operand o{};
  o.data = p;
  o.type = t;
  int i = 0;
  for (int64_t x : s) o.stride[i++] = x;
  return o;
}

static double rel(double num, double den) { return den > 0 ? std::sqrt(num / den) : std::sqrt(num); }

static Result run_case(const Case& c, const dk::gpu::target& tgt, uint64_t seed) {
  fflush(stdout);
  Result r;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::uniform_real_distribution<float> ud(0.f, 1.f);
  HostData d;
  d.N = int(c.lens.size());
  d.hq = c.hq, d.hv = c.hv, d.K = c.K, d.V = c.V;
  d.cu.assign(d.N + 1, 0);
  int maxlen = 0;
  for (int n = 0; n < d.N; ++n) d.cu[n + 1] = d.cu[n] + c.lens[n], maxlen = std::max(maxlen, c.lens[n]);
  d.T = d.cu[d.N];
  const int T = d.T, K = c.K, V = c.V, HQ = c.hq, HV = c.hv, N = d.N;
  const bool pk = c.gate == dk::gate_kind::per_key;

  // inputs, rounded to their storage dtype
  const float ks = c.l2 ? 1.f : 1.f / std::sqrt(float(K));
  d.q.resize(size_t(T) * HQ * K);
  d.k.resize(d.q.size());
  d.v.resize(size_t(T) * HV * V);
  par_normal(d.q, seed * 3 + 0, ks, c.io);
  par_normal(d.k, seed * 3 + 1, ks, c.io);
  par_normal(d.v, seed * 3 + 2, 1.f, c.io);
  const size_t gw = pk ? size_t(K) : 1;
  d.g.resize(size_t(T) * HV * gw);
  for (auto& x : d.g) x = round_to(c.gt, c.raw ? nd(rng) : c.gmin + (c.gmax - c.gmin) * ud(rng));
  d.beta.resize(size_t(T) * HV);
  for (auto& x : d.beta) x = round_to(c.gt, c.logit ? nd(rng) : ud(rng));
  d.alog.resize(HV);
  for (auto& x : d.alog) x = round_to(c.gt, std::log(1.f + 15.f * ud(rng)));
  d.dtb.resize(size_t(HV) * gw);
  for (auto& x : d.dtb) {
    const float dt = std::exp(std::log(0.001f) + (std::log(0.1f) - std::log(0.001f)) * ud(rng));
    x = round_to(c.gt, std::log(std::expm1(dt)));
  }

  // device q/k/v: either separate dense tensors or slices of one fused row per token
  const int es = dk::dtype_size(c.io);
  const int64_t fused = c.strided ? int64_t(2 * HQ * K + HV * V + 8) : 0;
  std::vector<unsigned char> hq_(size_t(T) * HQ * K * es), hk_(hq_.size()), hv_(size_t(T) * HV * V * es);
  std::vector<unsigned char> hf(c.strided ? size_t(T) * fused * es : 0);
  for (int t = 0; t < T; ++t) {
    for (int i = 0; i < HQ * K; ++i) {
      const size_t src = size_t(t) * HQ * K + i;
      if (c.strided) {
        put(hf, c.io, size_t(t) * fused + i, d.q[src]);
        put(hf, c.io, size_t(t) * fused + HQ * K + i, d.k[src]);
      } else {
        put(hq_, c.io, src, d.q[src]);
        put(hk_, c.io, src, d.k[src]);
      }
    }
    for (int i = 0; i < HV * V; ++i) {
      const size_t src = size_t(t) * HV * V + i;
      if (c.strided) put(hf, c.io, size_t(t) * fused + 2 * HQ * K + i, d.v[src]);
      else put(hv_, c.io, src, d.v[src]);
    }
  }
  std::vector<unsigned char> hg(d.g.size() * dk::dtype_size(c.gt)), hb(d.beta.size() * dk::dtype_size(c.gt));
  std::vector<unsigned char> ha(HV * dk::dtype_size(c.gt)), hd(d.dtb.size() * dk::dtype_size(c.gt));
  for (size_t i = 0; i < d.g.size(); ++i) put(hg, c.gt, i, d.g[i]);
  for (size_t i = 0; i < d.beta.size(); ++i) put(hb, c.gt, i, d.beta[i]);
  for (int i = 0; i < HV; ++i) put(ha, c.gt, i, d.alog[i]);
  for (size_t i = 0; i < d.dtb.size(); ++i) put(hd, c.gt, i, d.dtb[i]);

  // pool: N + 3 slots with random states; sequence n reads slot init[n] (every third is -1)
  // and writes slot fin[n] (in place for even n, a spare slot for odd n, -1 for n % 5 == 4)
  const int P = N + 3;
  const size_t SS = size_t(HV) * K * V;  // one state
  std::vector<unsigned char> hpool(size_t(P) * SS * dk::dtype_size(c.st));
  for (size_t i = 0; i < size_t(P) * SS; ++i) put(hpool, c.st, i, 0.3f * nd(rng));
  std::vector<int64_t> init(N), fin(N);
  std::vector<int> perm(N);
  for (int n = 0; n < N; ++n) perm[n] = n;
  std::shuffle(perm.begin(), perm.end(), rng);
  for (int n = 0; n < N; ++n) {
    init[n] = (n % 3 == 2) ? -1 : perm[n];
    fin[n] = (n % 5 == 4) ? -1 : (n % 2 == 0 ? perm[n] : -2);
  }
  // odd n without an in-place slot write to distinct spare slots beyond N, or their own
  int spare = N;
  for (int n = 0; n < N; ++n)
    if (fin[n] == -2) fin[n] = spare < P ? spare++ : perm[n];
  // initial states as the reference sees them (state[d][v] in [K][V] order)
  d.s0.assign(size_t(N) * SS, 0.0);
  auto sidx = [&](int h, int kk, int vv) {
    return c.vlast ? (size_t(h) * K + kk) * V + vv : (size_t(h) * V + vv) * K + kk;
  };
  if (c.pool)
    for (int n = 0; n < N; ++n)
      if (init[n] >= 0)
        for (int h = 0; h < HV; ++h)
          for (int kk = 0; kk < K; ++kk)
            for (int vv = 0; vv < V; ++vv)
              d.s0[(size_t(n) * HV + h) * K * V + size_t(kk) * V + vv] =
                  get(hpool, c.st, size_t(init[n]) * SS + sidx(h, kk, vv));

  // device buffers
  auto dalloc = [](size_t b) { void* p = nullptr; CK(cudaMalloc(&p, std::max<size_t>(b, 16))); return p; };
  auto up = [&](const std::vector<unsigned char>& h) { void* p = dalloc(h.size()); if (!h.empty()) CK(cudaMemcpy(p, h.data(), h.size(), cudaMemcpyHostToDevice)); return p; };
  void *dq, *dk_, *dv;
  void* dfused = nullptr;
  if (c.strided) {
    dfused = up(hf);
    dq = dfused;
    dk_ = static_cast<char*>(dfused) + size_t(HQ) * K * es;
    dv = static_cast<char*>(dfused) + size_t(2 * HQ) * K * es;
  } else {
    dq = up(hq_), dk_ = up(hk_), dv = up(hv_);
  }
  void *dg = up(hg), *db = up(hb), *da = up(ha), *dd = up(hd);
  std::vector<int32_t> cu32(d.cu.begin(), d.cu.end());
  std::vector<int64_t> init64(init), fin64(fin);
  void* dcu = dalloc(cu32.size() * 4);
  CK(cudaMemcpy(dcu, cu32.data(), cu32.size() * 4, cudaMemcpyHostToDevice));
  void* dinit = dalloc(N * 8);
  void* dfin = dalloc(N * 8);
  CK(cudaMemcpy(dinit, init64.data(), N * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dfin, fin64.data(), N * 8, cudaMemcpyHostToDevice));
  void* dpool = up(hpool);
  const size_t out_bytes = size_t(T) * HV * V * es;
  void* dout = dalloc(out_bytes);
  const size_t fs_bytes = size_t(N) * SS * dk::dtype_size(c.st);
  void* dfs = dalloc(fs_bytes);

  dk::prefill_problem p{};
  p.r.gate = c.gate;
  p.r.gate_raw = c.raw;
  p.r.beta_logit = c.logit;
  p.r.qk_l2norm = c.l2;
  p.r.layout = c.vlast ? dk::state_layout::v_last : dk::state_layout::k_last;
  p.r.scale = 1.f / std::sqrt(float(K));
  p.hq = HQ, p.hv = HV, p.dk = K, p.dv = V;
  p.num_seqs = N, p.num_tokens = T, p.max_seqlen = maxlen;
  p.pool_slots = P;
  const int64_t qs0 = c.strided ? fused : int64_t(HQ) * K;
  const int64_t vs0 = c.strided ? fused : int64_t(HV) * V;
  p.q = opnd(dq, c.io, {qs0, K, 1});
  p.k = opnd(dk_, c.io, {qs0, K, 1});
  p.v = opnd(dv, c.io, {vs0, V, 1});
  p.out = opnd(dout, c.io, {int64_t(HV) * V, V, 1});
  p.g = c.gate == dk::gate_kind::none ? opnd(nullptr, c.gt, {})
        : pk ? opnd(dg, c.gt, {int64_t(HV) * K, K, 1}) : opnd(dg, c.gt, {HV, 1});
  p.beta = opnd(db, c.gt, {HV, 1});
  p.a_log = c.raw ? opnd(da, c.gt, {1}) : opnd(nullptr, c.gt, {});
  p.dt_bias = (c.raw && c.dt_bias) ? (pk ? opnd(dd, c.gt, {K, 1}) : opnd(dd, c.gt, {1})) : opnd(nullptr, c.gt, {});
  p.cu_seqlens = opnd(dcu, dtype::i32, {1});
  const int64_t a = c.vlast ? V : K;  // innermost extent
  p.pool = c.pool ? opnd(dpool, c.st, {int64_t(HV) * K * V, K * V, a, 1}) : opnd(nullptr, c.st, {});
  p.initial_indices = c.pool ? opnd(dinit, dtype::i64, {1}) : opnd(nullptr, dtype::i64, {});
  p.final_indices = c.pool ? opnd(dfin, dtype::i64, {1}) : opnd(nullptr, dtype::i64, {});
  p.final_state = c.dense ? opnd(dfs, c.st, {int64_t(HV) * K * V, K * V, a, 1}) : opnd(nullptr, c.st, {});

  dk::prefill::overrides().force_path = c.force_path;
  const char* impl = nullptr;
  if (dk::gpu::prefill_query(tgt, p, &impl) != DK_STATUS_SUCCESS) {
    printf("  query failed: %s\n", dk::g_err);
    r.impl = "(unsupported)";
    return r;
  }
  r.impl = impl;
  size_t wsb = 0;
  if (dk::gpu::prefill_workspace_bytes(tgt, p, &wsb) != DK_STATUS_SUCCESS) {
    printf("  workspace query failed: %s\n", dk::g_err);
    exit(1);
  }
  void* ws = wsb ? dalloc(wsb) : nullptr;
  CK(cudaMemset(dout, 0xff, out_bytes));
  CK(cudaMemset(dfs, 0xff, fs_bytes));
  dk_status s = dk::gpu::prefill_launch(tgt, p, ws, wsb, nullptr);
  if (s != DK_STATUS_SUCCESS) {
    printf("  launch failed: %s\n", dk::g_err);
    exit(1);
  }
  CK(cudaDeviceSynchronize());
  CK(cudaGetLastError());
  r.ran = true;

  std::vector<unsigned char> gout(out_bytes), gfs(fs_bytes), gpool(hpool.size());
  CK(cudaMemcpy(gout.data(), dout, out_bytes, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(gfs.data(), dfs, fs_bytes, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(gpool.data(), dpool, gpool.size(), cudaMemcpyDeviceToHost));

  if (c.graph && !c.time) {
    // the same call captured into a graph (no host synchronisation inside), replayed on a
    // fresh copy of the pool: results must be bitwise identical (determinism)
    CK(cudaMemcpy(dpool, hpool.data(), hpool.size(), cudaMemcpyHostToDevice));
    CK(cudaMemset(dout, 0xff, out_bytes));
    CK(cudaMemset(dfs, 0xff, fs_bytes));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaGraph_t graph;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    const dk_status gs = dk::gpu::prefill_launch(tgt, p, ws, wsb, st);
    CK(cudaStreamEndCapture(st, &graph));
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, graph, 0));
    CK(cudaGraphLaunch(exec, st));
    CK(cudaStreamSynchronize(st));
    std::vector<unsigned char> o2(out_bytes), f2(fs_bytes), p2(hpool.size());
    CK(cudaMemcpy(o2.data(), dout, out_bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(f2.data(), dfs, fs_bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(p2.data(), dpool, p2.size(), cudaMemcpyDeviceToHost));
    r.graph_ok = gs == DK_STATUS_SUCCESS && o2 == gout && f2 == gfs && p2 == gpool;
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaStreamDestroy(st));
  }

  if (c.time) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    // Median ms of `runs` launches after 3 untimed ones.
    auto median_ms = [&](int runs) {
      std::vector<float> ts;
      for (int it = 0; it < runs + 3; ++it) {
        CK(cudaEventRecord(e0));
        dk::gpu::prefill_launch(tgt, p, ws, wsb, nullptr);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (it >= 3) ts.push_back(ms);
      }
      std::sort(ts.begin(), ts.end());
      return ts[ts.size() / 2];
    };
    r.ms = median_ms(20);
    if (std::string(r.impl).find("mma") != std::string::npos) {  // parallel stages alone
      dk::prefill::overrides().skip_seq = true;
      r.prep_ms = median_ms(10);
      dk::prefill::overrides().skip_seq = false;
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    // the timing runs updated the pool in place again; restore the checked copy is not needed
  }

  if (c.check) {
    std::vector<double> ro, rf;
    reference(c, d, ro, rf);
    double num = 0, den = 0;
    for (size_t i = 0; i < ro.size(); ++i) {
      const double x = get(gout, c.io, i);
      if (!std::isfinite(x)) r.nan = true;
      num += (x - ro[i]) * (x - ro[i]);
      den += ro[i] * ro[i];
    }
    r.out_err = rel(num, den);
    num = den = 0;
    std::vector<char> written(P, 0);
    for (int n = 0; n < N; ++n) {
      for (int h = 0; h < HV; ++h)
        for (int kk = 0; kk < K; ++kk)
          for (int vv = 0; vv < V; ++vv) {
            const double ref = rf[(size_t(n) * HV + h) * K * V + size_t(kk) * V + vv];
            if (c.dense) {
              const double x = get(gfs, c.st, size_t(n) * SS + sidx(h, kk, vv));
              if (!std::isfinite(x)) r.nan = true;
              num += (x - ref) * (x - ref);
              den += ref * ref;
            }
            if (c.pool && fin[n] >= 0) {
              const double x = get(gpool, c.st, size_t(fin[n]) * SS + sidx(h, kk, vv));
              if (!std::isfinite(x)) r.nan = true;
              num += (x - ref) * (x - ref);
              den += ref * ref;
            }
          }
      if (c.pool && fin[n] >= 0) written[fin[n]] = 1;
    }
    r.st_err = rel(num, den);
    // slots nobody writes must be bit-for-bit unchanged
    if (c.pool && !c.time)
      for (int sl = 0; sl < P; ++sl)
        if (!written[sl] &&
            memcmp(&gpool[size_t(sl) * SS * dk::dtype_size(c.st)], &hpool[size_t(sl) * SS * dk::dtype_size(c.st)],
                   SS * dk::dtype_size(c.st)) != 0)
          r.untouched_ok = false;
  }

  for (void* x : {dfused ? dfused : dq, dg, db, da, dd, dcu, dinit, dfin, dpool, dout, dfs}) cudaFree(x);
  if (!c.strided) cudaFree(dk_), cudaFree(dv);
  if (ws) cudaFree(ws);
  return r;
}

// ------------------------------------------------------------------ case list
static std::vector<Case> cases(bool with_long) {
  std::vector<Case> cs;
  auto add = [&](Case c) {
    if (c.tol == 5e-3) c.tol = tol_for(c.io, c.st);
    cs.push_back(c);
  };
  for (int len : {1, 63, 64, 65, 1000}) {
    Case c;
    c.name = "gdn bf16 len" + std::to_string(len);
    c.lens = {len};
    add(c);
  }
  const std::vector<int> mix{0, 1, 63, 64, 65, 300, 1000, 17, 128, 129};
  for (int path : {-1, 0}) {
    const std::string sfx = path == 0 ? " [generic]" : "";
    Case c;
    c.name = "gdn bf16 varlen raw" + sfx;
    c.lens = mix, c.raw = true, c.force_path = path;
    add(c);
    c = Case{};
    c.name = "deltanet f32 varlen" + sfx;
    c.io = dtype::f32, c.gate = dk::gate_kind::none, c.lens = mix, c.force_path = path;
    add(c);
    c = Case{};
    c.name = "gdn f32 raw vlast varlen" + sfx;
    c.io = dtype::f32, c.raw = true, c.vlast = true, c.lens = mix, c.force_path = path;
    add(c);
    c = Case{};
    c.name = "gdn f16 no-l2 prob vlast bf16-state" + sfx;
    c.io = dtype::f16, c.st = dtype::bf16, c.gt = dtype::bf16, c.l2 = false, c.logit = false,
    c.vlast = true, c.lens = mix, c.force_path = path, c.raw = true;
    add(c);
  }
  {
    Case c;
    c.name = "gdn f16 f16-state k64 gva4";
    c.io = dtype::f16, c.st = dtype::f16, c.hq = 1, c.hv = 4, c.K = 64, c.V = 64, c.lens = mix;
    add(c);
    c = Case{};
    c.name = "gdn bf16 k64 v128 gva1 strided";
    c.hq = 3, c.hv = 3, c.K = 64, c.V = 128, c.strided = true, c.lens = {200, 77, 64};
    add(c);
    c = Case{};
    c.name = "gdn bf16 k128 v64 strided no-dense";
    c.V = 64, c.strided = true, c.dense = false, c.lens = {333, 5};
    add(c);
    c = Case{};
    c.name = "gdn bf16 k128 v192";
    c.V = 192, c.lens = {500, 64, 3};
    add(c);
    c = Case{};
    c.name = "gdn bf16 no-pool";
    c.pool = false, c.lens = {100, 200};
    add(c);
    c = Case{};
    c.name = "gdn bf16 strong gates";
    c.gmin = -4.f, c.lens = {300, 65};
    add(c);
    c = Case{};
    c.name = "kda bf16 per-key log";
    c.gate = dk::gate_kind::per_key, c.lens = mix, c.gmin = -0.3f;
    add(c);
    c = Case{};
    c.name = "kda f32 per-key raw vlast";
    c.io = dtype::f32, c.gate = dk::gate_kind::per_key, c.raw = true, c.vlast = true, c.lens = mix;
    add(c);
    c = Case{};
    c.name = "kda f32 per-key strong gates k256";
    c.io = dtype::f32, c.gate = dk::gate_kind::per_key, c.K = 256, c.V = 32, c.gmin = -5.f,
    c.lens = {100, 40};
    add(c);
    c = Case{};
    c.name = "odd dims f32 k80 v48";
    c.io = dtype::f32, c.K = 80, c.V = 48, c.lens = {150, 64, 1};
    add(c);
    c = Case{};
    c.name = "odd dims bf16 k208 v144 gva2";
    c.K = 208, c.V = 144, c.lens = {90};
    add(c);
  }
  if (with_long) {
    Case c;
    c.name = "deltanet f32 long 65536";
    c.io = dtype::f32, c.gate = dk::gate_kind::none, c.hq = 1, c.hv = 2, c.lens = {65536};
    add(c);
    c = Case{};
    c.name = "gdn bf16 long 16384 x4 varlen";
    c.raw = true, c.lens = {16384, 1000, 9000, 6000};
    add(c);
  }
  return cs;
}

int main(int argc, char** argv) {
  bool with_long = true, time_only = false, perf_first = false, no_perf = false;
  const char* only = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--no-long")) with_long = false;
    if (!strcmp(argv[i], "--time-only")) time_only = true;
    if (!strcmp(argv[i], "--perf-first")) time_only = perf_first = true;  // for profilers
    if (!strcmp(argv[i], "--no-perf")) no_perf = true;                     // for sanitizers
    if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];     // cases named so
  }
  int dev = 0;
  CK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  int smem_optin = 0;
  CK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  dk::gpu::target tgt{prop.major * 10 + prop.minor, prop.multiProcessorCount, smem_optin, dev};
  printf("device %s sm_%d%d, %d SMs, %d B smem/block\n", prop.name, prop.major, prop.minor,
         prop.multiProcessorCount, smem_optin);

  int fails = 0;
  if (!time_only) {
    printf("%-44s %-34s %10s %10s %8s  %s\n", "case", "impl", "out_err", "state_err", "tol", "verdict");
    uint64_t seed = 1;
    for (const Case& c : cases(with_long)) {
      if (only && c.name.find(only) == std::string::npos) continue;
      const Result r = run_case(c, tgt, seed++);
      const bool ok = r.ran && !r.nan && r.untouched_ok && r.graph_ok && r.out_err <= c.tol &&
                      r.st_err <= c.tol;
      fails += !ok;
      printf("%-44s %-34s %10.3e %10.3e %8.0e  %s%s%s%s\n", c.name.c_str(), r.impl, r.out_err, r.st_err,
             c.tol, ok ? "PASS" : "FAIL", r.nan ? " (NaN)" : "", r.untouched_ok ? "" : " (pool slot touched)",
             r.graph_ok ? "" : " (graph replay differs)");
      fflush(stdout);
    }
  }

  // the standard prefill workloads (SPEC section 7); the first one is also checked
  struct Perf {
    const char* name;
    int hq, hv;
    std::vector<int> lens;
    int path;
  };
  std::vector<Perf> perf{
      {"qwen3next T=65536", 16, 32, {65536}, -1},
      {"qwen3next T=65536 (again)", 16, 32, {65536}, -1},
      {"qwen3next T=16384", 16, 32, {16384}, -1},
      {"qwen3next T=4096", 16, 32, {4096}, -1},
      {"qwen3next varlen 8 = 32768", 16, 32, {1000, 7000, 3000, 5500, 2268, 6000, 4000, 4000}, -1},
      {"tp8 HQ=2 HV=8 T=65536", 2, 8, {65536}, -1},
      {"qwen3next T=16384 generic", 16, 32, {16384}, 0},
  };
  if (no_perf) perf.clear();
  else printf("\nprefill timings: K=V=128 bf16, fp32 state, raw gates, l2norm (median of 20)\n");
  for (size_t i = 0; i < (perf_first ? 1 : perf.size()); ++i) {
    Case c;
    c.hq = perf[i].hq, c.hv = perf[i].hv, c.lens = perf[i].lens, c.raw = true, c.time = true;
    c.force_path = perf[i].path;
    c.check = i == 0 && !time_only;
    const Result r = run_case(c, tgt, 1000 + i);
    int64_t ntok = 0;
    for (int l : c.lens) ntok += l;
    const double tflops = 4.0 * ntok * c.hv * 128 * 128 / (r.ms * 1e-3) / 1e12;
    printf("  %-30s %-34s %8.3f ms (prep %6.3f)  %6.1f 'TFLOP/s'", perf[i].name, r.impl, r.ms,
           r.prep_ms, tflops);
    if (c.check) {
      const bool ok = !r.nan && r.out_err <= c.tol && r.st_err <= c.tol;
      fails += !ok;
      printf("  out_err %.3e state_err %.3e %s", r.out_err, r.st_err, ok ? "PASS" : "FAIL");
    }
    printf("\n");
    fflush(stdout);
  }
  printf("\n%s: %d failing case(s)\n", fails ? "FAIL" : "OK", fails);
  return fails ? 1 : 0;
}
