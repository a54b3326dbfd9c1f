// The pieces of one chunk of the chunked (WY) form; see reference.hpp for the math of each.
#include <cmath>
#include <stdexcept>

#include "dk_ref/reference.hpp"

namespace dk_ref::chunk {
namespace {

// Column of a gate matrix that applies to key dimension `key` (one-column gates broadcast).
int gate_column(const matrix& gates, int key) { return gates.cols == 1 ? 0 : key; }

// out(i, d) = x(i, d) * exp(log_decay(i, d)), with log_decay(i, d) given per row and column.
template <class LogDecay>
matrix scale_rows(const matrix& x, LogDecay log_decay) {
  matrix out(x.rows, x.cols);
  for (int i = 0; i < x.rows; ++i)
    for (int d = 0; d < x.cols; ++d) out(i, d) = x(i, d) * std::exp(log_decay(i, d));
  return out;
}

}  // namespace

matrix cumulative_gates(const matrix& gamma) {
  matrix cumulative(gamma.rows, gamma.cols);
  for (int c = 0; c < gamma.cols; ++c) {
    double running = 0.0;
    for (int i = 0; i < gamma.rows; ++i) {
      running += gamma(i, c);
      cumulative(i, c) = running;
    }
  }
  return cumulative;
}

decay_mask make_decay_mask(const matrix& cumulative) {
  decay_mask mask;
  mask.tokens = cumulative.rows;
  mask.width = cumulative.cols;
  mask.values.assign(std::size_t(mask.tokens) * mask.tokens * mask.width, 0.0);
  for (int i = 0; i < mask.tokens; ++i)
    for (int j = 0; j <= i; ++j)
      for (int c = 0; c < mask.width; ++c)
        mask.values[(std::size_t(i) * mask.tokens + j) * mask.width + c] =
            std::exp(cumulative(i, c) - cumulative(j, c));
  return mask;
}

matrix decayed_gram(const matrix& x, const matrix& y, const decay_mask& mask, bool include_diagonal) {
  matrix gram(x.rows, y.rows);
  for (int i = 0; i < x.rows; ++i) {
    const int last_j = include_diagonal ? i : i - 1;
    for (int j = 0; j <= last_j; ++j) {
      double sum = 0.0;
      for (int d = 0; d < x.cols; ++d) sum += x(i, d) * y(j, d) * mask.at(i, j, d);
      gram(i, j) = sum;
    }
  }
  return gram;
}

matrix solve_unit_lower(const std::vector<double>& beta, const matrix& strictly_lower) {
  // (I + diag(beta) A) T = I, row by row: T(i, :) = e_i - beta_i * sum_{j < i} A(i, j) T(j, :).
  const int n = strictly_lower.rows;
  matrix t(n, n);
  for (int i = 0; i < n; ++i) {
    t(i, i) = 1.0;
    for (int j = 0; j < i; ++j) {
      const double factor = beta[i] * strictly_lower(i, j);
      for (int c = 0; c <= j; ++c) t(i, c) -= factor * t(j, c);  // T is lower triangular
    }
  }
  return t;
}

matrix decay_from_start(const matrix& x, const matrix& cumulative) {
  return scale_rows(x, [&](int i, int d) { return cumulative(i, gate_column(cumulative, d)); });
}

matrix decay_to_end(const matrix& x, const matrix& cumulative) {
  const int last = cumulative.rows - 1;
  return scale_rows(x, [&](int i, int d) {
    const int c = gate_column(cumulative, d);
    return cumulative(last, c) - cumulative(i, c);
  });
}

wy_factors wy_representation(const matrix& t, const std::vector<double>& beta,
                             const matrix& k_decayed, const matrix& v) {
  // X = T diag(beta) Y for Y = k_decayed and Y = v; T is lower triangular so j runs to i.
  auto apply = [&](const matrix& y) {
    matrix x(y.rows, y.cols);
    for (int i = 0; i < y.rows; ++i)
      for (int j = 0; j <= i; ++j) {
        const double weight = t(i, j) * beta[j];
        for (int c = 0; c < y.cols; ++c) x(i, c) += weight * y(j, c);
      }
    return x;
  };
  return {apply(k_decayed), apply(v)};
}

matrix pseudo_values(const wy_factors& wy, const matrix& state) {
  matrix u = wy.u;
  for (int i = 0; i < u.rows; ++i)
    for (int a = 0; a < state.rows; ++a) {
      const double w = wy.w(i, a);
      for (int b = 0; b < u.cols; ++b) u(i, b) -= w * state(a, b);
    }
  return u;
}

matrix chunk_output(const matrix& q_decayed, const matrix& state, const matrix& scores,
                    const matrix& pseudo, double scale) {
  matrix out(q_decayed.rows, state.cols);
  for (int i = 0; i < out.rows; ++i) {
    for (int a = 0; a < state.rows; ++a)  // inter-chunk: what S_prev remembers
      for (int b = 0; b < out.cols; ++b) out(i, b) += q_decayed(i, a) * state(a, b);
    for (int j = 0; j <= i; ++j)  // intra-chunk: causal, including the token itself
      for (int b = 0; b < out.cols; ++b) out(i, b) += scores(i, j) * pseudo(j, b);
    for (int b = 0; b < out.cols; ++b) out(i, b) *= scale;
  }
  return out;
}

matrix state_pass(const matrix& state, const matrix& cumulative, const matrix& k,
                  const matrix& pseudo) {
  const int last = cumulative.rows - 1;
  const matrix k_to_end = decay_to_end(k, cumulative);
  matrix next(state.rows, state.cols);
  for (int a = 0; a < state.rows; ++a) {
    const double chunk_decay = std::exp(cumulative(last, gate_column(cumulative, a)));
    for (int b = 0; b < state.cols; ++b) {
      double sum = chunk_decay * state(a, b);
      for (int j = 0; j < k.rows; ++j) sum += k_to_end(j, a) * pseudo(j, b);
      next(a, b) = sum;
    }
  }
  return next;
}

matrix forward(const matrix& q, const matrix& k, const matrix& v, const matrix& gamma,
               const std::vector<double>& beta, double scale, matrix& state) {
  if (q.rows < 1 || k.rows != q.rows || v.rows != q.rows || gamma.rows != q.rows ||
      int(beta.size()) != q.rows || (gamma.cols != 1 && gamma.cols != k.cols))
    throw std::invalid_argument("dk_ref::chunk::forward: inconsistent chunk shapes");
  const matrix cumulative = cumulative_gates(gamma);
  const decay_mask mask = make_decay_mask(cumulative);

  const matrix t = solve_unit_lower(beta, decayed_gram(k, k, mask, /*include_diagonal=*/false));
  const matrix pseudo = pseudo_values(wy_representation(t, beta, decay_from_start(k, cumulative), v), state);

  const matrix scores = decayed_gram(q, k, mask, /*include_diagonal=*/true);
  matrix out = chunk_output(decay_from_start(q, cumulative), state, scores, pseudo, scale);
  state = state_pass(state, cumulative, k, pseudo);
  return out;
}

}  // namespace dk_ref::chunk
