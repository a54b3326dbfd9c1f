// Token-by-token recurrence of SPEC §1, written exactly as the spec states it.
#include <algorithm>
#include <cmath>
#include <vector>

#include "inputs.hpp"

namespace dk_ref {

void recurrent(const config& cfg, const dims& d, const sequence& s, double* state, double* out) {
  detail::check_dims(d);
  const int K = d.dk, V = d.dv;
  const double scale = detail::output_scale(cfg, d);
  std::vector<double> st_k(V), u(V);  // S^T k and the update u, per value column

  for (int h = 0; h < d.hv; ++h) {
    const int qk_head = detail::qk_head_of(d, h);
    double* S = state + std::size_t(h) * K * V;  // S[i][j] = S[i * V + j], i key, j value
    for (int t = 0; t < s.tokens; ++t) {
      const std::vector<double> q = detail::qk_row(cfg, d, s.q, t, qk_head);
      const std::vector<double> k = detail::qk_row(cfg, d, s.k, t, qk_head);
      const double* v = s.v + (std::size_t(t) * d.hv + h) * V;
      const double beta = beta_at(cfg, d, s, t, h);

      // S = diag(exp(gamma)) S: decay first.
      for (int i = 0; i < K; ++i) {
        const double decay = std::exp(gate_at(cfg, d, s, t, h, i));
        for (int j = 0; j < V; ++j) S[i * V + j] *= decay;
      }
      // u = beta * (v - S^T k), with the decayed S. (Row-wise sums keep the loops cache-friendly.)
      std::fill(st_k.begin(), st_k.end(), 0.0);
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < V; ++j) st_k[j] += S[i * V + j] * k[i];
      for (int j = 0; j < V; ++j) u[j] = beta * (v[j] - st_k[j]);
      // S = S + k u^T
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < V; ++j) S[i * V + j] += k[i] * u[j];
      // o = scale * S^T q, reading the updated S.
      double* o = out + (std::size_t(t) * d.hv + h) * V;
      std::fill(o, o + V, 0.0);
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < V; ++j) o[j] += S[i * V + j] * q[i];
      for (int j = 0; j < V; ++j) o[j] *= scale;
    }
  }
}

}  // namespace dk_ref
