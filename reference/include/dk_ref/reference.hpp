// The host golden: fp64, naive and obviously right. Independent of every backend.
// All arrays are dense, row-major, fp64, for ONE sequence.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dk_ref {

enum class gate_kind { none, scalar, per_key };

struct config {
  gate_kind gate = gate_kind::scalar;
  bool gate_raw = false;    // g holds `a`: gamma = -exp(A_log[h]) * softplus(a + dt_bias)
  bool beta_logit = false;  // beta = sigmoid(b)
  bool qk_l2norm = false;   // q, k *= 1/sqrt(sum(x^2) + 1e-6)
  double scale = 0.0;       // 0: 1/sqrt(K)
};

struct dims {
  int hq, hv, dk, dv;  // query/key heads, value heads, key dim K, value dim V
};

// One sequence of T tokens.
//   q, k    [T][HQ][K]     v [T][HV][V]    out [T][HV][V]
//   g       [T][HV] (scalar) or [T][HV][K] (per-key); ignored (may be null) for none
//   beta    [T][HV]
//   a_log   [HV]           (raw gates only, else may be null)
//   dt_bias [HV] or [HV][K] (raw gates only; null means zero)
//   state   [HV][K][V]: S[k][v], read as the initial state and overwritten with the final one
struct sequence {
  int tokens;
  const double* q;
  const double* k;
  const double* v;
  const double* g;
  const double* beta;
  const double* a_log;
  const double* dt_bias;
};

// Token-by-token recurrence of SPEC §1.
void recurrent(const config& cfg, const dims& d, const sequence& s, double* state, double* out);

// Chunked (WY) form with chunk length `chunk`; must equal recurrent() up to rounding.
void chunked(const config& cfg, const dims& d, const sequence& s, int chunk, double* state,
             double* out);

// Helpers the chunked form is built from (also unit-tested on their own).
// Log gate gamma for token t, value head h, key index i (i ignored for scalar;
// 0 for none), after raw-gate conversion.
double gate_at(const config& cfg, const dims& d, const sequence& s, int t, int h, int i);
double beta_at(const config& cfg, const dims& d, const sequence& s, int t, int h);

// softplus with beta 1 and threshold 20 (as torch.nn.functional.softplus): x itself for x > 20.
double softplus(double x);

// The pieces of one chunk of the chunked (WY) form, for one value head. Tokens i, j are local to
// the chunk (0 .. C-1). Gates are log gates gamma(i, d); a gate matrix has one column (none or
// scalar: the same decay for every key row) or K columns (per-key), and every function below
// broadcasts a one-column gate over the K key dimensions.
namespace chunk {

// Dense row-major fp64 matrix.
struct matrix {
  int rows = 0;
  int cols = 0;
  std::vector<double> values;

  matrix() = default;
  matrix(int rows_, int cols_) : rows(rows_), cols(cols_), values(std::size_t(rows_) * cols_, 0.0) {}
  double& operator()(int r, int c) { return values[std::size_t(r) * cols + c]; }
  double operator()(int r, int c) const { return values[std::size_t(r) * cols + c]; }
};

// Inclusive cumulative sum over the chunk's tokens: G(i, d) = sum_{j <= i} gamma(j, d).
matrix cumulative_gates(const matrix& gamma);

// Decay from token j to token i >= j: exp(G(i, d) - G(j, d)) = prod_{j < m <= i} exp(gamma(m, d)).
// Always formed from the pairwise difference (never exp(-G)), so it stays finite for strong gates.
struct decay_mask {
  int tokens = 0;
  int width = 0;               // gate columns: 1 or K
  std::vector<double> values;  // [tokens][tokens][width], zero where j > i

  // Decay for key dimension `key` (broadcast when width == 1).
  double at(int i, int j, int key) const {
    return values[(std::size_t(i) * tokens + j) * width + (width == 1 ? 0 : key)];
  }
};
decay_mask make_decay_mask(const matrix& cumulative);

// Decay-weighted inner products M(i, j) = sum_d x(i, d) y(j, d) mask(i, j, d) for j < i, and
// also for j == i when include_diagonal; zero elsewhere. With x = y = k (strict) this is the
// WY matrix A; with x = q, y = k (with diagonal) it is the intra-chunk attention scores.
matrix decayed_gram(const matrix& x, const matrix& y, const decay_mask& mask, bool include_diagonal);

// T = (I + diag(beta) A)^{-1} for strictly lower-triangular A, by forward substitution.
matrix solve_unit_lower(const std::vector<double>& beta, const matrix& strictly_lower);

// Row i of x times exp(G(i, .)): the decay from the chunk start to token i.
matrix decay_from_start(const matrix& x, const matrix& cumulative);

// Row i of x times exp(G(last, .) - G(i, .)): the decay from token i to the chunk end.
matrix decay_to_end(const matrix& x, const matrix& cumulative);

// WY representation: W = T diag(beta) k_decayed  [C][K],  U = T diag(beta) v  [C][V].
struct wy_factors {
  matrix w;
  matrix u;
};
wy_factors wy_representation(const matrix& t, const std::vector<double>& beta,
                             const matrix& k_decayed, const matrix& v);

// Pseudo-values u = U - W S_prev  [C][V]; S_prev is the state at the chunk start [K][V].
matrix pseudo_values(const wy_factors& wy, const matrix& state);

// Chunk output o = scale * (q_decayed S_prev + P u)  [C][V]: inter-chunk plus intra-chunk.
matrix chunk_output(const matrix& q_decayed, const matrix& state, const matrix& scores,
                    const matrix& pseudo, double scale);

// State at the chunk end: diag(exp(G(last))) S_prev + decay_to_end(k)^T u.
matrix state_pass(const matrix& state, const matrix& cumulative, const matrix& k,
                  const matrix& pseudo);

// One whole chunk for one value head, built from the pieces above. q, k [C][K] (already
// L2-normalised if the config asks), v [C][V], gamma [C][1 or K], beta [C]. `state` [K][V] is
// read as S_prev and overwritten with the state at the chunk end; returns the output [C][V].
matrix forward(const matrix& q, const matrix& k, const matrix& v, const matrix& gamma,
               const std::vector<double>& beta, double scale, matrix& state);

}  // namespace chunk

}  // namespace dk_ref
