// Drives the validation layer with random descriptors (SPEC §8). Data pointers
// point into PROT_NONE pages, so any read or write of tensor data by the
// validator crashes the test; every call must return a valid status, and a
// success must describe a problem that is consistent with the shapes given.
#include <doctest/doctest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "../../hal/src/validate.hpp"
#include "deltakit/deltakit.h"

namespace {

struct random_tensor {
  dk_tensor view{};
  int64_t shape[6]{};
  int64_t strides[6]{};
};

class fuzzer {
 public:
  explicit fuzzer(uint64_t seed) : rng_(seed) {
    guard_ = mmap(nullptr, kGuardBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(guard_ != MAP_FAILED);
  }
  ~fuzzer() { munmap(guard_, kGuardBytes); }

  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  bool coin(int one_in) { return pick(one_in) == 0; }
  // In a clean iteration descriptors are well formed, so deep rules and the
  // success path are reached; otherwise any field may be corrupted.
  void start_iteration() { clean_ = coin(3); }
  bool bad(int one_in) { return !clean_ && coin(one_in); }

  // Mostly plausible values (so deep rules get exercised), sometimes hostile ones.
  int64_t extent(int64_t plausible) {
    switch (pick(12)) {
      case 0: return -pick(3) - 1;
      case 1: return 0;
      case 2: return int64_t{1} << (pick(62) + 1);
      case 3: return pick(300);
      default: return plausible;
    }
  }

  // A descriptor of rank near `rank` whose dims are near `dims`, or nothing.
  // `present`: whether a well-formed call passes this operand; `type` its plausible dtype.
  const dk_tensor* tensor(random_tensor& t, int rank, const int64_t* dims, bool present,
                          dk_dtype type) {
    if (bad(8) ? coin(2) : !present) return nullptr;
    int ndim = bad(15) ? pick(6) : rank;
    t.view.ndim = ndim;
    for (int d = 0; d < ndim && d < 6; ++d) t.shape[d] = bad(8) ? extent(dims[d % 4]) : dims[d % 4];
    t.view.shape = bad(40) ? nullptr : t.shape;
    if (coin(3)) {  // explicit strides: compact inner dim, padded outer dims
      int64_t s = 1;
      for (int d = ndim - 1; d >= 0; --d) {
        t.strides[d] = bad(10) ? extent(s)
                     : d == ndim - 1 ? 1
                                     : static_cast<int64_t>(static_cast<uint64_t>(s) * (1 + pick(2)));
        // Hostile extents may overflow: wrap (unsigned) like a careless engine would.
        s = static_cast<int64_t>(static_cast<uint64_t>(t.strides[d]) *
                                 static_cast<uint64_t>(t.shape[d] > 0 ? t.shape[d] : 1));
      }
      t.view.strides = t.strides;
    } else {
      t.view.strides = nullptr;
    }
    static const dk_dtype kTypes[] = {{2, 32, 1}, {4, 16, 1}, {2, 16, 1}, {0, 32, 1},
                                      {0, 64, 1}, {1, 8, 1},  {2, 64, 1}, {2, 32, 4}};
    t.view.dtype = bad(10) ? kTypes[pick(8)] : type;
    t.view.device = bad(20) ? dk_device{DK_DEVICE_CUDA, 0} : dk_device{DK_DEVICE_CPU, 0};
    t.view.byte_offset = bad(10) ? static_cast<uint64_t>(pick(64)) : 0;
    t.view.data = bad(20) ? nullptr
                          : static_cast<char*>(guard_) + 256 * static_cast<size_t>(pick(64));
    return &t.view;
  }

  dk_config config() {
    dk_config c{};
    c.gate_kind = bad(10) ? pick(7) - 2 : pick(3);
    c.gate_form = bad(10) ? pick(5) - 2 : pick(2);
    c.beta_form = bad(10) ? pick(5) - 2 : pick(2);
    c.state_layout = bad(10) ? pick(5) - 2 : pick(2);
    c.qk_l2norm = pick(2);
    c.scale = bad(20) ? __builtin_nanf("") : coin(2) ? 0.0f : 0.125f;
    return c;
  }

 private:
  static constexpr size_t kGuardBytes = 1 << 16;
  std::mt19937_64 rng_;
  void* guard_;
  bool clean_ = false;
};

const dk_dtype kAct{DK_DTYPE_CODE_BFLOAT, 16, 1}, kF32{DK_DTYPE_CODE_FLOAT, 32, 1},
    kI32{DK_DTYPE_CODE_INT, 32, 1};

bool valid_status(dk_status s) {
  return s == DK_STATUS_SUCCESS || s == DK_STATUS_INVALID_ARGUMENT || s == DK_STATUS_UNSUPPORTED;
}

int iterations() {
  const char* env = std::getenv("DK_FUZZ_ITERATIONS");
  return env ? std::atoi(env) : 200000;
}

}  // namespace

TEST_CASE("fuzz: decode validation never crashes, reads data or accepts inconsistent shapes") {
  fuzzer f(0xdecade);
  const dk_device cpu{DK_DEVICE_CPU, 0};
  int accepted = 0;
  for (int it = 0; it < iterations(); ++it) {
    const int64_t B = 1 + f.pick(4), T = 1 + f.pick(4), HQ = 1 + f.pick(2), HV = HQ * (1 + f.pick(2));
    const int64_t K = 16 * (1 + f.pick(3)), V = 16 * (1 + f.pick(3)), P = 1 + f.pick(5);
    random_tensor q, k, v, out, g, beta, alog, dtb, pool, idx, oidx, tidx;
    const int64_t dq[4] = {B, T, HQ, K}, dvv[4] = {B, T, HV, V}, dg[4] = {B, T, HV, K};
    const int64_t dh[4] = {HV, K, 0, 0}, dp[4] = {P, HV, V, K}, db[4] = {B, T, 0, 0};
    f.start_iteration();
    dk_config cfg = f.config();
    const bool gated = cfg.gate_kind != 0, raw = gated && cfg.gate_form == 1;
    const bool out_slots = f.coin(3), token_slots = !out_slots && f.coin(3);
    dk_decode_args a{};
    a.q = f.tensor(q, 4, dq, true, kAct);
    a.k = f.tensor(k, 4, dq, true, kAct);
    a.v = f.tensor(v, 4, dvv, true, kAct);
    a.out = f.tensor(out, 4, dvv, true, kAct);
    a.g = f.tensor(g, cfg.gate_kind == 2 ? 4 : 3, dg, gated, kF32);
    a.beta = f.tensor(beta, 3, dg, true, kF32);
    a.A_log = f.tensor(alog, 1, dh, raw, kF32);
    a.dt_bias = f.tensor(dtb, cfg.gate_kind == 2 ? 2 : 1, dh, raw && f.coin(2), kF32);
    a.state_pool = f.tensor(pool, 4, dp, true, kF32);
    a.state_indices = f.tensor(idx, 1, db, true, kI32);
    a.state_out_indices = f.tensor(oidx, 1, db, out_slots, kI32);
    a.state_token_indices = f.tensor(tidx, 2, db, token_slots, kI32);
    dk::decode_problem p{};
    const bool need_data = f.coin(2);
    dk_status s = dk::validate_decode(cpu, f.bad(50) ? nullptr : &cfg, f.bad(50) ? nullptr : &a,
                                      need_data, &p);
    REQUIRE(valid_status(s));
    if (s != DK_STATUS_SUCCESS) continue;
    ++accepted;
    // Whatever was accepted must be a problem the kernels can run safely.
    REQUIRE(p.batch == a.q->shape[0]);
    REQUIRE((p.tokens >= 1 && p.tokens <= 16));
    REQUIRE((p.dk % 16 == 0 && p.dk <= 256 && p.dv % 16 == 0 && p.dv <= 256));
    REQUIRE(p.hv % p.hq == 0);
    REQUIRE(p.pool_slots == a.state_pool->shape[0]);
    REQUIRE(a.v->shape[2] == p.hv);
    REQUIRE(a.out->shape[3] == p.dv);
    if (need_data) REQUIRE((p.q.data && p.k.data && p.v.data && p.out.data && p.pool.data));
  }
  MESSAGE("accepted " << accepted << " of " << iterations() << " random decode calls");
  CHECK(accepted > 0);  // the generator must also reach the success path
}

TEST_CASE("fuzz: prefill validation never crashes, reads data or accepts inconsistent shapes") {
  fuzzer f(0xfeed);
  const dk_device cpu{DK_DEVICE_CPU, 0};
  int accepted = 0;
  for (int it = 0; it < iterations(); ++it) {
    const int64_t N = 1 + f.pick(3), Ntok = N * (1 + f.pick(8)), HQ = 1 + f.pick(2);
    const int64_t HV = HQ * (1 + f.pick(2)), K = 16 * (1 + f.pick(3)), V = 16 * (1 + f.pick(3));
    const int64_t P = 1 + f.pick(5);
    random_tensor q, k, v, out, g, beta, alog, dtb, cu, pool, ii, fi, fs;
    const int64_t dq[4] = {Ntok, HQ, K, 0}, dvv[4] = {Ntok, HV, V, 0}, dg[4] = {Ntok, HV, K, 0};
    const int64_t dh[4] = {HV, K, 0, 0}, dp[4] = {P, HV, V, K}, dn[4] = {N, 0, 0, 0};
    const int64_t dc[4] = {N + 1, 0, 0, 0}, dfs[4] = {N, HV, V, K};
    f.start_iteration();
    dk_config cfg = f.config();
    const bool gated = cfg.gate_kind != 0, raw = gated && cfg.gate_form == 1;
    const bool use_pool = f.coin(2), initial = use_pool && f.coin(2);
    const bool final_slots = use_pool && (!initial || f.coin(2));
    dk_prefill_args a{};
    a.q = f.tensor(q, 3, dq, true, kAct);
    a.k = f.tensor(k, 3, dq, true, kAct);
    a.v = f.tensor(v, 3, dvv, true, kAct);
    a.out = f.tensor(out, 3, dvv, true, kAct);
    a.g = f.tensor(g, cfg.gate_kind == 2 ? 3 : 2, dg, gated, kF32);
    a.beta = f.tensor(beta, 2, dg, true, kF32);
    a.A_log = f.tensor(alog, 1, dh, raw, kF32);
    a.dt_bias = f.tensor(dtb, cfg.gate_kind == 2 ? 2 : 1, dh, raw && f.coin(2), kF32);
    a.cu_seqlens = f.tensor(cu, 1, dc, true, kI32);
    a.state_pool = f.tensor(pool, 4, dp, use_pool, kF32);
    a.initial_state_indices = f.tensor(ii, 1, dn, initial, kI32);
    a.final_state_indices = f.tensor(fi, 1, dn, final_slots, kI32);
    a.final_state = f.tensor(fs, 4, dfs, f.coin(2), kF32);
    a.num_seqs = f.bad(10) ? f.extent(N) : N;
    a.num_tokens = f.bad(10) ? f.extent(Ntok) : Ntok;
    a.max_seqlen = f.bad(10) ? f.extent(Ntok) : (Ntok + N - 1) / N + f.pick(2);
    dk::prefill_problem p{};
    const bool need_data = f.coin(2);
    dk_status s = dk::validate_prefill(cpu, f.bad(50) ? nullptr : &cfg,
                                       f.bad(50) ? nullptr : &a, need_data, &p);
    REQUIRE(valid_status(s));
    if (s != DK_STATUS_SUCCESS) continue;
    ++accepted;
    REQUIRE(p.num_tokens == a.q->shape[0]);
    REQUIRE(p.num_seqs == a.cu_seqlens->shape[0] - 1);
    REQUIRE((p.max_seqlen >= 0 && p.max_seqlen <= p.num_tokens));
    REQUIRE((p.num_tokens == 0 || p.max_seqlen * p.num_seqs >= p.num_tokens));
    REQUIRE((p.dk % 16 == 0 && p.dk <= 256 && p.dv % 16 == 0 && p.dv <= 256));
    REQUIRE(p.hv % p.hq == 0);
    if (a.final_state) REQUIRE(a.final_state->shape[0] == p.num_seqs);
    if (a.initial_state_indices || a.final_state_indices) REQUIRE(a.state_pool != nullptr);
  }
  MESSAGE("accepted " << accepted << " of " << iterations() << " random prefill calls");
  CHECK(accepted > 0);
}
