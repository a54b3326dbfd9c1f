// Chunked (WY) driver: splits each value head's tokens into chunks and runs chunk::forward.
#include <algorithm>
#include <stdexcept>

#include "inputs.hpp"

namespace dk_ref {

void chunked(const config& cfg, const dims& d, const sequence& s, int chunk, double* state,
             double* out) {
  detail::check_dims(d);
  if (chunk < 1) throw std::invalid_argument("dk_ref::chunked: chunk length must be >= 1");
  const int K = d.dk, V = d.dv;
  const int gate_width = cfg.gate == gate_kind::per_key ? K : 1;
  const double scale = detail::output_scale(cfg, d);

  for (int h = 0; h < d.hv; ++h) {
    const int qk_head = detail::qk_head_of(d, h);
    double* head_state = state + std::size_t(h) * K * V;
    chunk::matrix S(K, V);
    std::copy(head_state, head_state + std::size_t(K) * V, S.values.begin());

    for (int start = 0; start < s.tokens; start += chunk) {
      const int length = std::min(chunk, s.tokens - start);  // the last chunk may be partial
      chunk::matrix q(length, K), k(length, K), v(length, V), gamma(length, gate_width);
      std::vector<double> beta(length);
      for (int i = 0; i < length; ++i) {
        const int t = start + i;
        const std::vector<double> q_row = detail::qk_row(cfg, d, s.q, t, qk_head);
        const std::vector<double> k_row = detail::qk_row(cfg, d, s.k, t, qk_head);
        std::copy(q_row.begin(), q_row.end(), &q(i, 0));
        std::copy(k_row.begin(), k_row.end(), &k(i, 0));
        const double* v_row = s.v + (std::size_t(t) * d.hv + h) * V;
        std::copy(v_row, v_row + V, &v(i, 0));
        for (int c = 0; c < gate_width; ++c) gamma(i, c) = gate_at(cfg, d, s, t, h, c);
        beta[i] = beta_at(cfg, d, s, t, h);
      }

      const chunk::matrix o = chunk::forward(q, k, v, gamma, beta, scale, S);
      for (int i = 0; i < length; ++i)
        std::copy_n(o.values.begin() + std::size_t(i) * V, V,
                    out + (std::size_t(start + i) * d.hv + h) * V);
    }
    std::copy(S.values.begin(), S.values.end(), head_state);
  }
}

}  // namespace dk_ref
