// Tensor-core chunked (WY) prefill, chunk C = 64, K in {64, 128}, V % 64 == 0, gates
// none/scalar. Two kernels after the chunk-offset scan:
//
//  prep  grid (chunk, value head), 4 warps (warp w: chunk rows 16w .. 16w+15). Loads q, k,
//        computes k k^T and q k^T with mma, gates -> in-chunk cumulative G,
//        A = beta_i rk_i rk_j e^(G_i-G_j) (k_i.k_j), T = (I + A)^-1 (blocked forward
//        substitution, fp32), and writes to the workspace
//          W = T diag(beta rk e^G) k                       [64][K]   bf16 hi/lo
//          U = T diag(beta) v                              [64][V]   fp32, row-major
//          P = scale rq_i rk_j e^(G_i-G_j) (q_i.k_j), j<=i [64][64]  bf16 hi/lo
//          so = scale rq e^G, sk = rk e^(G_last - G), gl = e^G_last
//        and (first value head of each key head) the raw q, k as bf16 (hi, and lo unless the
//        io dtype is bf16). rq, rk are the l2norm factors (1 without l2norm): q and k stay
//        raw so that bf16 inputs enter the mma exactly.
//        q, k, W, P are stored as "B fragments": for each (k-step, pair of n8 tiles) the four
//        32-bit registers every lane feeds to mma.sync, lane-contiguous (16 bytes per lane).
//        The sequential kernel copies them to shared memory verbatim (TMA bulk copies) and
//        reads one LDS.128 per two fragments: no swizzle, no ldmatrix, no address math.
//  seq   grid (sequence, value head, V tile of 32), 4 warps: warp (slab s, half h) owns
//        S^T[16 s .. 16 s + 15][h K/2 .. (h+1) K/2 - 1] of the tile in mma accumulator
//        registers (fp32) for the whole sequence and walks the chunks (double-buffered stages):
//          u^T = U^T - S^T W^T           (the two halves exchange partial sums)
//          o^T = (S^T q^T) diag(so) + u^T P^T   (each half finishes 32 of the 64 tokens)
//          S^T = gl S^T + (u diag(sk))^T k      (each half updates its own K/2 rows)
//        S^T accumulators double as A fragments (hi/lo split), so the chain touches shared
//        memory only for the one exchange.
// Every product of two non-exact operands uses three bf16 mma terms (hi*hi + lo*hi + hi*lo):
// ~2^-16 relative error, fp32-level for this recurrence.
#pragma once
#include <type_traits>

#include "prefill_tc_ops.cuh"

// Register cap for several resident blocks (CUDA's meaning of the second argument; these
// kernels are NVIDIA-only, the HIP pass never instantiates them).
#if DK_VENDOR_CUDA
#define DK_TC_BOUNDS(threads, blocks) __launch_bounds__(threads, blocks)
#else
#define DK_TC_BOUNDS(threads, blocks) __launch_bounds__(threads)
#endif

namespace dk::prefill::tc {

inline constexpr int kC = 64;            // chunk length
inline constexpr int kPrepThreads = 128;
inline constexpr int kLdT = 68;          // fp32 row stride of A / T in shared memory

// Bytes of one bf16 plane of B fragments of a [64][KD] (q, k, W) or [64][64] (P) operand.
DK_HOST_DEVICE constexpr int frag_plane_bytes(int cols) { return kC * cols * 2; }

// Workspace carve-up (identical on host and device).
struct ws_layout {
  int64_t chunks;      // upper bound of chunks (max_chunks)
  int nqk;             // q/k planes: 1 (bf16 io) or 2 (hi + lo)
  int64_t qk_bytes;    // per (chunk, key head): q planes then k planes
  int64_t off_cu, off_qk, off_w, off_p, off_u, off_s, total;
};
inline int64_t align256(int64_t x) { return (x + 255) & ~int64_t(255); }
inline ws_layout make_ws_layout(const prefill_problem& p) {
  ws_layout l{};
  l.chunks = max_chunks(p, kC);
  l.nqk = p.q.type == dtype::bf16 ? 1 : 2;
  l.qk_bytes = 2LL * l.nqk * frag_plane_bytes(p.dk);
  const int64_t nc = l.chunks;
  int64_t o = 0;
  l.off_cu = o; o = align256(o + (p.num_seqs + 1) * 4);
  l.off_qk = o; o = align256(o + nc * p.hq * l.qk_bytes);
  l.off_w = o;  o = align256(o + nc * p.hv * 2 * frag_plane_bytes(p.dk));
  l.off_p = o;  o = align256(o + nc * p.hv * 2 * frag_plane_bytes(kC));
  l.off_u = o;  o = align256(o + nc * p.hv * kC * int64_t(p.dv) * 4);
  l.off_s = o;  o = align256(o + nc * p.hv * 3 * kC * 4);
  l.total = o;
  return l;
}

struct ws_ptrs {
  const int32_t* cu;    // [N+1] chunk offsets
  unsigned char* qk;    // [chunk][HQ][q planes, k planes]   B fragments
  unsigned char* w;     // [chunk][HV][hi, lo]               B fragments
  unsigned char* pm;    // [chunk][HV][hi, lo]               B fragments
  float* u;             // [chunk][HV][64][V]                row-major
  float* sc;            // [chunk][HV][so 64, sk 64, gl 64]
  int64_t qk_bytes;
};

// B-fragment index (in 16-byte units) of (k-step a, n-tile pair b) in a plane with nb pairs
// per k-step. q, W: (k-step over K, token pair); P: (source-token k-step, output-token pair);
// k: (token k-step, key pair).
DK_HOST_DEVICE int frag_at(int a, int b, int nb, int lane) { return (a * nb + b) * 32 + lane; }

template <dtype IO, int KD>
struct prep_cfg {
  static constexpr int kNP = IO == dtype::bf16 ? 1 : 2;  // planes of q, k, v
  static constexpr int kPlane = kC * KD * 2;              // bytes of one [64][KD] bf16 plane
  static constexpr int kOffQ = 0;                         // q planes; later the v pieces
  static constexpr int kOffK = kOffQ + kNP * kPlane;
  static constexpr int kOffA = kOffK + kNP * kPlane;
  static constexpr int kOffT = kOffA + kC * kLdT * 4;
  static constexpr int kOffX = kOffT + kC * kLdT * 4;
  static constexpr int kOffVec = kOffX + 3 * 256 * 4;
  static constexpr int kBytes = kOffVec + 8 * kC * 4;
  static constexpr int kVPiece = kNP * kC * 64 * 2;       // one 64-column piece of v
  static constexpr int kVGroup = kNP * kPlane / kVPiece;  // pieces that fit the q region
};

template <dtype IO, int KD>
struct seq_cfg {
  static constexpr int kWarps = 4;                       // 2 column slabs x 2 key halves
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kVT = 32;                         // value columns per block
  static constexpr int kDH = KD / 2;                     // key rows per warp
  static constexpr int kNQK = IO == dtype::bf16 ? 1 : 2;
  static constexpr int kLdU = kVT + 4;
  static constexpr int kOffQ = 0;
  static constexpr int kOffK = kOffQ + kNQK * frag_plane_bytes(KD);
  static constexpr int kOffW = kOffK + kNQK * frag_plane_bytes(KD);
  static constexpr int kOffP = kOffW + 2 * frag_plane_bytes(KD);
  static constexpr int kOffU = kOffP + 2 * frag_plane_bytes(kC);
  static constexpr int kOffS = kOffU + kC * kLdU * 4;
  static constexpr int kStage = (kOffS + 3 * kC * 4 + 127) / 128 * 128;
  static constexpr int kXch = kWarps * 12 * 32 * 16;     // partial sums exchanged per chunk
  static constexpr int kOut = kWarps * kC * 16 * static_cast<int>(sizeof(typename io<IO>::elem));
  static int bytes(int stages) { return stages * kStage + kXch + kOut + 16; }
};

}  // namespace dk::prefill::tc
