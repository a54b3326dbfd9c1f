// Per-key gates (KDA) for the tn_mma body (decode_mode::tn_mma_per_key, and
// per chunk of 4 tokens in decode_mode::tn_mma_per_key_chunked, where t counts
// from the chunk's first token and S is the state the chunk starts from).
// A key's decay differs by key, so it cannot be a factor of a whole row: it
// goes into the mma's B operands and into the k.k and k.q sums instead.
// With a_t the decays of token t, D_t = a_0 .. a_t and P(j, t) = a_{j+1} .. a_t
// (per key, products: a key's D may underflow to 0, so nothing divides by it):
//   X = S^T [D_0 k_0 .. D_3 k_3, D_0 q_0 .. D_3 q_3],
//   (k_j . k_t) and (k_j . q_t) weighted by P(j, t) key by key,
//   the state after token t = S diag(D_t) + sum_{j<=t} rk_j u_j (P(j, t) k_j)^T.
// The warps of a block (one head, W warps along V) share this work: thread i
// finishes keys i, i + 32 W, ... of every token (their decays, their parts of
// the sums) and writes the B operands into the block's shared memory in the
// order the mma lanes read them; each warp reduce-scatters its sums, and the
// warps' parts meet behind one barrier. Shared memory of a block (floats),
// NJ = K / 8:
//   x    [NJ][32 lanes][2]  lane 4 g + c, n-tile j: vector g at keys (j, c, 0..1)
//   then per staged token t (one, or each with per-token slots):
//   u    [NJ][32 lanes]     lane 4 g + c: P(c, t) k_c at key (j, g / 2, g % 2) (0 past t)
//   d    [NJ][4][2]         quad lane c: D_t at keys (j, c, 0..1)
//   then the warps' sums [W][32]
// where key (j, c, e) = 4 P (j / HALF) + P c + 2 (j % HALF) + e (decode_tn_mma.cuh).
#pragma once

namespace dk::gpu::decode_detail {

// The keys a lane's runs hold in the tn_mma tile (P of decode_tn_mma.cuh):
// K-last a 16-byte vector of the state's; V-last those of the bf16 k and q.
constexpr int tn_mma_run_keys(bool k_last, int state_bytes) { return k_last ? 16 / state_bytes : 8; }

template <int K, int P, int W>
struct mma_key_stage {
  static constexpr int NJ = K / 8, HALF = P / 2;
  static constexpr int kThreads = kWarpSize * W;
  static constexpr int kKeys = K > kThreads ? K / kThreads : 1;  // keys a thread finishes
  static constexpr int kMaxT = 4;
  static constexpr int x_floats = NJ * 64, u_floats = NJ * 32, d_floats = NJ * 8;
  static constexpr int token_floats = u_floats + d_floats;
  // Sums: k_t.k_t (0..3), q_t.q_t (4..7), k_t.q_t (8..11), then for j < t the
  // weighted k_j.k_t (12 + pair) and k_j.q_t (18 + pair); 24..31 unused.
  static constexpr int pair(int j, int t) { return j * (7 - j) / 2 + t - j - 1; }
  static constexpr int kk_sum(int j, int t) { return j == t ? t : 12 + pair(j, t); }
  static constexpr int kq_sum(int j, int t) { return j == t ? 8 + t : 18 + pair(j, t); }
  static constexpr int qq_sum(int t) { return 4 + t; }
  static_assert(K == 64 || K == 128, "tn_mma per-key: K = 64 or 128");
  static_assert(K % kThreads == 0 || kThreads % K == 0, "tn_mma per-key: keys split evenly");

  // Floats of a block's shared memory, with `tokens_staged` u and d parts.
  DK_HOST_DEVICE static constexpr int block_floats(int tokens_staged) {
    return x_floats + tokens_staged * token_floats + W * kWarpSize;
  }

  // (n-tile, quad lane, element) of a key.
  DK_DEVICE static void place(int key, int& j, int& c, int& e) {
    const int r = key % (4 * P), m = r % P;
    j = HALF * (key / (4 * P)) + m / 2;
    c = r / P;
    e = m & 1;
  }

  // This thread's keys of the tokens t0 .. t0 + 3 (k, q, gate; zero past T)
  // and dt_bias, A_log: issue() starts the loads (before the tile's: they need
  // no slot), finish() the rest (or write(), a barrier, sum_of()).
  // tn_mma_per_key_chunked issues and writes every chunk's before the first runs.
  uint16_t kw[kKeys][kMaxT], qw[kKeys][kMaxT];
  uint32_t gw[kKeys][kMaxT], bw[kKeys], alw = 0u;
  DK_DEVICE void issue(const decode_problem& p, int64_t b, int h, int qk_head, int T, int t0 = 0) {
    const int tid = int(threadIdx.x);
    const bool raw = p.r.gate_raw, has_bias = raw && p.dt_bias.data != nullptr;
    const bool active = tid < K;  // K = 64 on 4 warps: half the threads
    const token_rows r = rows_of(p, b, h, qk_head, t0);
#pragma unroll
    for (int i = 0; i < kKeys; ++i) {
      const int key = tid + i * kThreads;
#pragma unroll
      for (int t = 0; t < kMaxT; ++t) {
        const bool on = active && t0 + t < T;
        kw[i][t] = on ? r.k[t * p.k.stride[1] + key] : uint16_t(0);
        qw[i][t] = on ? r.q[t * p.q.stride[1] + key] : uint16_t(0);
        gw[i][t] = on ? load_bits(p.g, r.g + t * p.g.stride[1] + key) : 0u;
      }
      bw[i] = has_bias && active ? load_bits(p.dt_bias, h * p.dt_bias.stride[0] + key) : 0u;
    }
    alw = raw ? load_bits(p.a_log, h * p.a_log.stride[0]) : 0u;
  }

  // The lines issue(.., t0) will read, into L1 (while the chunks before are staged).
  DK_DEVICE void prefetch(const decode_problem& p, int64_t b, int h, int qk_head, int T, int t0) const {
    const int tid = int(threadIdx.x);
    if (tid >= K) return;
    const token_rows r = rows_of(p, b, h, qk_head, t0);
    const char* const g_data = static_cast<const char*>(p.g.data);
#pragma unroll
    for (int t = 0; t < kMaxT; ++t) {
      if (t0 + t >= T) break;
      prefetch_l1(r.k + t * p.k.stride[1] + tid);
      prefetch_l1(r.q + t * p.q.stride[1] + tid);
      prefetch_l1(g_data + (r.g + t * p.g.stride[1] + tid) * dtype_size(p.g.type));
    }
  }

  // Every thread of the block, after issue(): finishes the decays, writes the
  // stage (the u and d parts of the tokens first_staged .. T - 1, the i-th at
  // x_floats + i token_floats) and returns, after the block's barrier, sum
  // `lane` over all K keys. Tokens count from issue()'s t0; T is the chunk's
  // (at most 4).
  DK_DEVICE float finish(const decode_problem& p, int T, int first_staged, float* stage) const {
    write(p, T, first_staged, stage);
    __syncthreads();
    return sum_of(T, first_staged, stage);
  }
  // finish() up to the barrier: the stage and this warp's sums written.
  DK_DEVICE void write(const decode_problem& p, int T, int first_staged, float* stage) const {
    const int tid = int(threadIdx.x), lane = tid % kWarpSize, warp = tid / kWarpSize;
    const bool raw = p.r.gate_raw, active = tid < K;
    const float al = bits_to_f(alw, p.a_log.type);

    float sums[32];
#pragma unroll
    for (int s = 0; s < 32; ++s) sums[s] = 0.f;
    float* const tok_part = stage + x_floats;
#pragma unroll
    for (int i = 0; i < kKeys; ++i) {
      float kf[kMaxT], qf[kMaxT], a[kMaxT], d[kMaxT];
      const float bias = bits_to_f(bw[i], p.dt_bias.type);
#pragma unroll
      for (int t = 0; t < kMaxT; ++t) {
        kf[t] = bf16_bits_to_float(kw[i][t]);
        qf[t] = bf16_bits_to_float(qw[i][t]);
        a[t] = t < T ? decay_of<true>(bits_to_f(gw[i][t], p.g.type), bias, al, raw) : 1.f;
        d[t] = (t ? d[t - 1] : 1.f) * a[t];
        sums[kk_sum(t, t)] = fmaf(kf[t], kf[t], sums[kk_sum(t, t)]);
        sums[qq_sum(t)] = fmaf(qf[t], qf[t], sums[qq_sum(t)]);
        sums[kq_sum(t, t)] = fmaf(kf[t], qf[t], sums[kq_sum(t, t)]);
      }
#pragma unroll
      for (int j = 0; j < kMaxT - 1; ++j) {
        float w = kf[j];  // P(j, t) k_j
#pragma unroll
        for (int t = j + 1; t < kMaxT; ++t) {
          w *= a[t];
          sums[kk_sum(j, t)] = fmaf(w, kf[t], sums[kk_sum(j, t)]);
          sums[kq_sum(j, t)] = fmaf(w, qf[t], sums[kq_sum(j, t)]);
        }
      }
      if (!active) continue;
      int j, c, e;
      place(tid + i * kThreads, j, c, e);
      // x: vector n, for lane 4 n + c.
#pragma unroll
      for (int n = 0; n < 2 * kMaxT; ++n)
        stage[(j * 32 + 4 * n + c) * 2 + e] = (n < kMaxT ? kf[n & 3] : qf[n & 3]) * d[n & 3];
      // u and d of each staged token te: lane 4 (2 c + e) + jj holds P(jj, te) k_jj.
      for (int te = first_staged; te < T; ++te) {
        float* const u_part = tok_part + (te - first_staged) * token_floats;
        float u4[kMaxT];
#pragma unroll
        for (int jj = 0; jj < kMaxT; ++jj) {
          float w = kf[jj];
#pragma unroll
          for (int t = jj + 1; t < kMaxT; ++t) w = t <= te ? w * a[t] : w;
          u4[jj] = jj <= te ? w : 0.f;
        }
        *reinterpret_cast<float4*>(u_part + j * 32 + 4 * (2 * c + e)) = make_float4(u4[0], u4[1], u4[2], u4[3]);
        float dt = d[0];
#pragma unroll
        for (int t = 1; t < kMaxT; ++t) dt = t == te ? d[t] : dt;
        u_part[u_floats + (j * 4 + c) * 2 + e] = dt;
      }
    }
    // Reduce-scatter over the warp (lane l ends with the warp's sum l), then
    // the warps' sums meet in shared memory.
    scatter_stage<16>(sums, lane);
    scatter_stage<8>(sums, lane);
    scatter_stage<4>(sums, lane);
    scatter_stage<2>(sums, lane);
    scatter_stage<1>(sums, lane);
    stage[warp_sums_at(T, first_staged) + warp * kWarpSize + lane] = sums[0];
  }
  // finish() after the barrier: sum `lane` over all K keys, from the warps' parts.
  DK_DEVICE float sum_of(int T, int first_staged, const float* stage) const {
    const int lane = int(threadIdx.x) % kWarpSize;
    const float* const warp_sums = stage + warp_sums_at(T, first_staged);
    float total = 0.f;
#pragma unroll
    for (int w = 0; w < W; ++w) total += warp_sums[w * kWarpSize + lane];
    return total;
  }

 private:
  // Where write() puts the warps' sums in a stage (floats).
  DK_DEVICE static int warp_sums_at(int T, int first_staged) { return x_floats + (T - first_staged) * token_floats; }
  // Where the tokens from t0 of (b, h) start: the k and q rows (bf16) and the
  // gate row's element index; issue() loads from them, prefetch() their lines.
  struct token_rows {
    const uint16_t* k;
    const uint16_t* q;
    int64_t g;
  };
  DK_DEVICE static token_rows rows_of(const decode_problem& p, int64_t b, int h, int qk_head, int t0) {
    return {static_cast<const uint16_t*>(p.k.data) + (b * p.k.stride[0] + t0 * p.k.stride[1] + qk_head * p.k.stride[2]),
            static_cast<const uint16_t*>(p.q.data) + (b * p.q.stride[0] + t0 * p.q.stride[1] + qk_head * p.q.stride[2]),
            b * p.g.stride[0] + t0 * p.g.stride[1] + int64_t(h) * p.g.stride[2]};
  }

  // One stage of scatter_stages (decode_t1_bf16io.cuh), its width a template
  // argument: that loop over 32 sums left them in a 128-192-byte stack frame
  // here (ptxas, sm_90a). A lane keeps the half of its sums that its lane bit OFF picks.
  template <int OFF>
  DK_DEVICE static void scatter_stage(float (&sums)[32], int lane) {
    const bool upper = lane & OFF;
#pragma unroll
    for (int i = 0; i < OFF; ++i) {
      const float give = upper ? sums[i] : sums[i + OFF];
      const float keep = upper ? sums[i + OFF] : sums[i];
      sums[i] = keep + shfl_xor(give, OFF);
    }
  }
};

}  // namespace dk::gpu::decode_detail
