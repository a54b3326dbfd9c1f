// Random problems and comparison helpers shared by the reference tests.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "dk_ref/reference.hpp"

namespace dk_test {

using dk_ref::chunk::matrix;

struct gate_range {
  double lo = -0.5, hi = -0.01;  // log gates are drawn from U(lo, hi)
};

// One sequence's inputs plus its initial state, owning all arrays.
struct problem {
  dk_ref::config cfg;
  dk_ref::dims d{};
  int tokens = 0;
  std::vector<double> q, k, v, g, beta, a_log, dt_bias, state;

  int gate_width() const { return cfg.gate == dk_ref::gate_kind::per_key ? d.dk : 1; }

  // Tokens [first, first + count) as a sequence (pointers offset into this problem's arrays).
  dk_ref::sequence slice(int first, int count) const {
    auto at = [](const std::vector<double>& x, std::size_t offset) {
      return x.empty() ? nullptr : x.data() + offset;
    };
    const std::size_t t = std::size_t(first);
    return {count,
            at(q, t * d.hq * d.dk),
            at(k, t * d.hq * d.dk),
            at(v, t * d.hv * d.dv),
            at(g, t * d.hv * gate_width()),
            at(beta, t * d.hv),
            at(a_log, 0),
            at(dt_bias, 0)};
  }
  dk_ref::sequence sequence() const { return slice(0, tokens); }
};

// Deterministic random problem: q, k, v ~ U(-1, 1); log gates ~ U(range); raw `a` ~ N(0, 1);
// A_log, dt_bias ~ U(-1, 1); beta ~ U(0.02, 0.98) or logit ~ U(-4, 4); state ~ U(-0.5, 0.5).
// Without qk_l2norm, k rows are rescaled to norm U(0.5, 1) so that |1 - beta |k|^2| <= 1 and
// the delta rule stays bounded over thousands of tokens, as it does with normalised keys.
inline problem make_problem(const dk_ref::config& cfg, const dk_ref::dims& d, int tokens,
                            std::uint64_t seed, gate_range gates = {}, bool zero_state = false) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto fill_uniform = [&](std::vector<double>& x, std::size_t n, double lo, double hi) {
    x.resize(n);
    for (double& e : x) e = uniform(lo, hi);
  };

  problem p;
  p.cfg = cfg;
  p.d = d;
  p.tokens = tokens;
  const std::size_t T = std::size_t(tokens);
  fill_uniform(p.q, T * d.hq * d.dk, -1, 1);
  fill_uniform(p.k, T * d.hq * d.dk, -1, 1);
  if (!cfg.qk_l2norm) {
    for (std::size_t row = 0; row < T * d.hq; ++row) {
      double* kr = p.k.data() + row * d.dk;
      double norm = 0;
      for (int i = 0; i < d.dk; ++i) norm += kr[i] * kr[i];
      const double factor = uniform(0.5, 1.0) / std::sqrt(norm);
      for (int i = 0; i < d.dk; ++i) kr[i] *= factor;
    }
  }
  fill_uniform(p.v, T * d.hv * d.dv, -1, 1);
  if (cfg.gate != dk_ref::gate_kind::none) {
    const std::size_t n = T * d.hv * p.gate_width();
    if (cfg.gate_raw) {
      std::normal_distribution<double> normal(0.0, 1.0);
      p.g.resize(n);
      for (double& e : p.g) e = normal(rng);
      fill_uniform(p.a_log, d.hv, -1, 1);
      fill_uniform(p.dt_bias, std::size_t(d.hv) * p.gate_width(), -1, 1);
    } else {
      fill_uniform(p.g, n, gates.lo, gates.hi);
    }
  }
  if (cfg.beta_logit)
    fill_uniform(p.beta, T * d.hv, -4, 4);
  else
    fill_uniform(p.beta, T * d.hv, 0.02, 0.98);
  fill_uniform(p.state, std::size_t(d.hv) * d.dk * d.dv, -0.5, 0.5);
  if (zero_state) std::fill(p.state.begin(), p.state.end(), 0.0);
  return p;
}

struct result {
  std::vector<double> out, state;
};

inline result run_recurrent(const problem& p) {
  result r{std::vector<double>(std::size_t(p.tokens) * p.d.hv * p.d.dv, NAN), p.state};
  dk_ref::recurrent(p.cfg, p.d, p.sequence(), r.state.data(), r.out.data());
  return r;
}

inline result run_chunked(const problem& p, int chunk) {
  result r{std::vector<double>(std::size_t(p.tokens) * p.d.hv * p.d.dv, NAN), p.state};
  dk_ref::chunked(p.cfg, p.d, p.sequence(), chunk, r.state.data(), r.out.data());
  return r;
}

// ||x - ref|| / ||ref||; NaN anywhere (e.g. an unwritten output) makes it NaN, which fails `<`.
inline double rel_l2(const std::vector<double>& x, const std::vector<double>& ref) {
  if (x.size() != ref.size()) return NAN;
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    diff += (x[i] - ref[i]) * (x[i] - ref[i]);
    norm += ref[i] * ref[i];
  }
  return std::sqrt(diff) / std::sqrt(norm);
}

inline double max_abs_diff(const matrix& a, const matrix& b) {
  if (a.rows != b.rows || a.cols != b.cols) return NAN;
  double worst = 0;
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    const double diff = std::fabs(a.values[i] - b.values[i]);
    if (!(diff <= worst)) worst = diff;  // also catches NaN
  }
  return worst;
}

inline matrix multiply(const matrix& a, const matrix& b) {
  matrix c(a.rows, b.cols);
  for (int i = 0; i < a.rows; ++i)
    for (int l = 0; l < a.cols; ++l)
      for (int j = 0; j < b.cols; ++j) c(i, j) += a(i, l) * b(l, j);
  return c;
}

inline matrix identity(int n) {
  matrix m(n, n);
  for (int i = 0; i < n; ++i) m(i, i) = 1.0;
  return m;
}

// The inputs of one chunk of one value head, as chunk::forward takes them.
struct chunk_inputs {
  matrix q, k, v, gamma;
  std::vector<double> beta;
  matrix state;  // [K][V]
  double scale = 0;
};

// Value head h of tokens [first, first + count) of p (which must have qk_l2norm off).
inline chunk_inputs chunk_of(const problem& p, int h, int first, int count) {
  const auto& d = p.d;
  const int qk_head = h / (d.hv / d.hq);
  const dk_ref::sequence s = p.sequence();
  chunk_inputs c{matrix(count, d.dk), matrix(count, d.dk), matrix(count, d.dv),
                 matrix(count, p.gate_width()), std::vector<double>(count), matrix(d.dk, d.dv),
                 p.cfg.scale != 0 ? p.cfg.scale : 1.0 / std::sqrt(double(d.dk))};
  for (int i = 0; i < count; ++i) {
    const int t = first + i;
    for (int e = 0; e < d.dk; ++e) {
      c.q(i, e) = p.q[(std::size_t(t) * d.hq + qk_head) * d.dk + e];
      c.k(i, e) = p.k[(std::size_t(t) * d.hq + qk_head) * d.dk + e];
    }
    for (int e = 0; e < d.dv; ++e) c.v(i, e) = p.v[(std::size_t(t) * d.hv + h) * d.dv + e];
    for (int e = 0; e < p.gate_width(); ++e) c.gamma(i, e) = dk_ref::gate_at(p.cfg, d, s, t, h, e);
    c.beta[i] = dk_ref::beta_at(p.cfg, d, s, t, h);
  }
  for (int a = 0; a < d.dk; ++a)
    for (int b = 0; b < d.dv; ++b) c.state(a, b) = p.state[(std::size_t(h) * d.dk + a) * d.dv + b];
  return c;
}

// Rows of a [T][HV][V] output (or [HV][K][V] state) that belong to value head h, as a matrix.
inline matrix head_rows(const std::vector<double>& x, int rows, int heads, int h, int cols) {
  matrix m(rows, cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) m(r, c) = x[(std::size_t(r) * heads + h) * cols + c];
  return m;
}
inline matrix head_state(const std::vector<double>& state, const dk_ref::dims& d, int h) {
  matrix m(d.dk, d.dv);
  std::copy(state.begin() + std::size_t(h) * d.dk * d.dv,
            state.begin() + std::size_t(h + 1) * d.dk * d.dv, m.values.begin());
  return m;
}

}  // namespace dk_test
