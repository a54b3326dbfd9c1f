#include "inputs.hpp"

#include <cmath>

namespace dk_ref {

double softplus(double x) { return x > 20.0 ? x : std::log1p(std::exp(x)); }

double gate_at(const config& cfg, const dims& d, const sequence& s, int t, int h, int i) {
  if (cfg.gate == gate_kind::none) return 0.0;
  const bool per_key = cfg.gate == gate_kind::per_key;
  // Index of this gate in g (and in dt_bias, minus the token part): [T][HV] or [T][HV][K].
  const std::size_t token_part = per_key ? std::size_t(t) * d.hv * d.dk : std::size_t(t) * d.hv;
  const std::size_t head_part = per_key ? std::size_t(h) * d.dk + i : std::size_t(h);
  const double g = s.g[token_part + head_part];
  if (!cfg.gate_raw) return g;
  const double bias = s.dt_bias != nullptr ? s.dt_bias[head_part] : 0.0;
  return -std::exp(s.a_log[h]) * softplus(g + bias);
}

double beta_at(const config& cfg, const dims& d, const sequence& s, int t, int h) {
  const double b = s.beta[std::size_t(t) * d.hv + h];
  return cfg.beta_logit ? 1.0 / (1.0 + std::exp(-b)) : b;
}

namespace detail {

std::vector<double> qk_row(const config& cfg, const dims& d, const double* qk, int t, int qk_head) {
  const double* src = qk + (std::size_t(t) * d.hq + qk_head) * d.dk;
  std::vector<double> row(src, src + d.dk);
  if (cfg.qk_l2norm) {
    double sum_sq = 0.0;
    for (double x : row) sum_sq += x * x;
    const double inv_norm = 1.0 / std::sqrt(sum_sq + 1e-6);
    for (double& x : row) x *= inv_norm;
  }
  return row;
}

void check_dims(const dims& d) {
  if (d.hq <= 0 || d.hv <= 0 || d.dk <= 0 || d.dv <= 0 || d.hv % d.hq != 0)
    throw std::invalid_argument("dk_ref: need positive dims and HV a multiple of HQ");
}

}  // namespace detail
}  // namespace dk_ref
