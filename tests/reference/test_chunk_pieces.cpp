// Each piece of the chunked form against a straightforward formula or the recurrence.
#include <doctest/doctest.h>

#include "test_problem.hpp"

using dk_ref::gate_kind;
using namespace dk_test;
namespace chunk = dk_ref::chunk;

namespace {

constexpr double tight = 1e-12;

// A one-chunk problem (HQ = HV = 1, no l2norm) with log gates of the given kind.
problem chunk_problem(gate_kind gate, int tokens, int dk, int dv, std::uint64_t seed,
                      bool zero_state = false) {
  dk_ref::config cfg;
  cfg.gate = gate;
  return make_problem(cfg, dk_ref::dims{1, 1, dk, dv}, tokens, seed, gate_range{}, zero_state);
}

// Every gate width: scalar (one column) and per-key (K columns).
const gate_kind gated_kinds[] = {gate_kind::scalar, gate_kind::per_key};

// Decayed k rows and the WY matrix A of one chunk, as chunk::forward forms them.
struct chunk_setup {
  matrix cumulative;
  chunk::decay_mask mask;
  matrix a, t;
  chunk::wy_factors wy;
};
chunk_setup setup(const chunk_inputs& c) {
  chunk_setup s;
  s.cumulative = chunk::cumulative_gates(c.gamma);
  s.mask = chunk::make_decay_mask(s.cumulative);
  s.a = chunk::decayed_gram(c.k, c.k, s.mask, false);
  s.t = chunk::solve_unit_lower(c.beta, s.a);
  s.wy = chunk::wy_representation(s.t, c.beta, chunk::decay_from_start(c.k, s.cumulative), c.v);
  return s;
}

// I + diag(beta) A
matrix unit_lower(const std::vector<double>& beta, const matrix& a) {
  matrix m = identity(a.rows);
  for (int i = 0; i < a.rows; ++i)
    for (int j = 0; j < a.cols; ++j) m(i, j) += beta[i] * a(i, j);
  return m;
}

}  // namespace

TEST_CASE("cumulative gates are the inclusive running sum") {
  matrix gamma(3, 2);
  gamma.values = {-0.1, -1.0, -0.2, -2.0, -0.3, -3.0};
  const matrix g = chunk::cumulative_gates(gamma);
  const std::vector<double> expected = {-0.1, -1.0, -0.3, -3.0, -0.6, -6.0};
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK(g.values[i] == doctest::Approx(expected[i]).epsilon(1e-15));
}

TEST_CASE("decay mask equals direct products of exp(gamma)") {
  for (gate_kind gate : gated_kinds)
    for (double strength : {1.0, 10.0}) {  // ordinary gates and gates around -5
      INFO("per_key=" << (gate == gate_kind::per_key) << " strength=" << strength);
      problem p = chunk_problem(gate, 20, 8, 4, 11);
      for (double& x : p.g) x *= strength;
      const chunk_inputs c = chunk_of(p, 0, 0, 20);
      const chunk::decay_mask mask = chunk::make_decay_mask(chunk::cumulative_gates(c.gamma));
      for (int i = 0; i < 20; ++i)
        for (int j = 0; j < 20; ++j)
          for (int key = 0; key < 8; ++key) {
            const int col = c.gamma.cols == 1 ? 0 : key;
            double product = j <= i ? 1.0 : 0.0;
            for (int m = j + 1; m <= i; ++m) product *= std::exp(c.gamma(m, col));
            REQUIRE(mask.at(i, j, key) == doctest::Approx(product).epsilon(1e-12));
          }
    }
}

TEST_CASE("decayed gram: strictly lower or with diagonal, decay-weighted inner products") {
  for (gate_kind gate : gated_kinds) {
    const problem p = chunk_problem(gate, 12, 8, 4, 12);
    const chunk_inputs c = chunk_of(p, 0, 0, 12);
    const chunk::decay_mask mask = chunk::make_decay_mask(chunk::cumulative_gates(c.gamma));
    const matrix strict = chunk::decayed_gram(c.k, c.k, mask, false);
    const matrix with_diagonal = chunk::decayed_gram(c.q, c.k, mask, true);
    for (int i = 0; i < 12; ++i)
      for (int j = 0; j < 12; ++j) {
        double kk = 0, qk = 0;  // sum_d x_i[d] y_j[d] prod_{j < m <= i} exp(gamma_m[d])
        for (int key = 0; key < 8; ++key) {
          double decay = 1.0;
          for (int m = j + 1; m <= i; ++m) decay *= std::exp(c.gamma(m, c.gamma.cols == 1 ? 0 : key));
          kk += c.k(i, key) * c.k(j, key) * decay;
          qk += c.q(i, key) * c.k(j, key) * decay;
        }
        CHECK(strict(i, j) == doctest::Approx(j < i ? kk : 0.0).epsilon(tight));
        CHECK(with_diagonal(i, j) == doctest::Approx(j <= i ? qk : 0.0).epsilon(tight));
      }
  }
}

TEST_CASE("triangular solve inverts I + diag(beta) A") {
  for (gate_kind gate : gated_kinds)
    for (int n : {1, 2, 16, 64}) {
      const chunk_inputs c = chunk_of(chunk_problem(gate, n, 16, 4, 13 + n), 0, 0, n);
      const chunk_setup s = setup(c);
      const matrix m = unit_lower(c.beta, s.a);
      CHECK(max_abs_diff(multiply(m, s.t), identity(n)) < tight);
      CHECK(max_abs_diff(multiply(s.t, m), identity(n)) < tight);
      for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j) REQUIRE(s.t(i, j) == 0.0);
    }
}

TEST_CASE("decay from start and to end scale rows by exp of cumulative gates") {
  matrix x(2, 3);
  x.values = {1, 2, 3, 4, 5, 6};
  matrix per_key(2, 3);
  per_key.values = {-0.1, -0.2, -0.3, -0.4, -0.5, -0.6};  // cumulative already
  const matrix from_start = chunk::decay_from_start(x, per_key);
  const matrix to_end = chunk::decay_to_end(x, per_key);
  CHECK(from_start(0, 1) == doctest::Approx(2 * std::exp(-0.2)).epsilon(1e-15));
  CHECK(from_start(1, 2) == doctest::Approx(6 * std::exp(-0.6)).epsilon(1e-15));
  CHECK(to_end(0, 0) == doctest::Approx(1 * std::exp(-0.4 + 0.1)).epsilon(1e-15));
  CHECK(to_end(1, 1) == doctest::Approx(5.0).epsilon(1e-15));
  matrix scalar(2, 1);
  scalar.values = {-0.25, -1.0};  // one column broadcasts over every key
  CHECK(chunk::decay_from_start(x, scalar)(1, 2) == doctest::Approx(6 * std::exp(-1.0)).epsilon(1e-15));
  CHECK(chunk::decay_to_end(x, scalar)(0, 1) == doctest::Approx(2 * std::exp(-0.75)).epsilon(1e-15));
}

TEST_CASE("WY factors solve (I + diag(beta) A) [W U] = diag(beta) [k_decayed v]") {
  for (gate_kind gate : gated_kinds) {
    const problem p = chunk_problem(gate, 16, 16, 8, 14);
    const chunk_inputs c = chunk_of(p, 0, 0, 16);
    const chunk_setup s = setup(c);
    const matrix m = unit_lower(c.beta, s.a);
    matrix beta_k = chunk::decay_from_start(c.k, s.cumulative), beta_v = c.v;
    for (int i = 0; i < 16; ++i) {
      for (int e = 0; e < beta_k.cols; ++e) beta_k(i, e) *= c.beta[i];
      for (int e = 0; e < beta_v.cols; ++e) beta_v(i, e) *= c.beta[i];
    }
    CHECK(max_abs_diff(multiply(m, s.wy.w), beta_k) < tight);
    CHECK(max_abs_diff(multiply(m, s.wy.u), beta_v) < tight);
  }
}

TEST_CASE("pseudo-values equal the recurrence's updates u_t = beta (v - (decayed S)^T k)") {
  for (gate_kind gate : gated_kinds) {
    const problem p = chunk_problem(gate, 16, 16, 8, 15);
    const chunk_inputs c = chunk_of(p, 0, 0, 16);
    const matrix pseudo = chunk::pseudo_values(setup(c).wy, c.state);

    // Step the recurrence one token at a time and form each token's u from its decayed state.
    std::vector<double> state = p.state, out(8);
    for (int t = 0; t < 16; ++t) {
      matrix s = head_state(state, p.d, 0);
      for (int a = 0; a < 16; ++a)
        for (int b = 0; b < 8; ++b) s(a, b) *= std::exp(c.gamma(t, c.gamma.cols == 1 ? 0 : a));
      for (int b = 0; b < 8; ++b) {
        double st_k = 0;
        for (int a = 0; a < 16; ++a) st_k += s(a, b) * c.k(t, a);
        CHECK(pseudo(t, b) == doctest::Approx(c.beta[t] * (c.v(t, b) - st_k)).epsilon(1e-11));
      }
      dk_ref::recurrent(p.cfg, p.d, p.slice(t, 1), state.data(), out.data());
    }
  }
}

TEST_CASE("intra-chunk attention alone equals a one-chunk recurrence from zero state") {
  for (gate_kind gate : gated_kinds)
    for (int n : {1, 5, 16, 64}) {
      const problem p = chunk_problem(gate, n, 16, 8, 16 + n, /*zero_state=*/true);
      const chunk_inputs c = chunk_of(p, 0, 0, n);
      const chunk_setup s = setup(c);
      const matrix scores = chunk::decayed_gram(c.q, c.k, s.mask, true);
      const matrix zero(16, 8);
      const matrix intra = chunk::chunk_output(chunk::decay_from_start(c.q, s.cumulative), zero,
                                               scores, s.wy.u, c.scale);
      const result r = run_recurrent(p);
      CHECK(rel_l2(intra.values, r.out) < 1e-12);
    }
}

TEST_CASE("inter-chunk output alone is the decayed state read by q") {
  // With v = 0 and beta = 0 nothing is written: o_i = scale * (exp(G_i) * q_i)^T S_prev.
  for (gate_kind gate : gated_kinds) {
    problem p = chunk_problem(gate, 16, 16, 8, 17);
    std::fill(p.beta.begin(), p.beta.end(), 0.0);
    const chunk_inputs c = chunk_of(p, 0, 0, 16);
    const chunk_setup s = setup(c);
    const matrix out = chunk::chunk_output(chunk::decay_from_start(c.q, s.cumulative), c.state,
                                           chunk::decayed_gram(c.q, c.k, s.mask, true),
                                           chunk::pseudo_values(s.wy, c.state), c.scale);
    CHECK(rel_l2(out.values, run_recurrent(p).out) < 1e-12);
  }
}

TEST_CASE("state pass equals the recurrence's state after one chunk") {
  for (gate_kind gate : gated_kinds)
    for (int n : {1, 16, 64}) {
      const problem p = chunk_problem(gate, n, 16, 8, 18 + n);
      const chunk_inputs c = chunk_of(p, 0, 0, n);
      const chunk_setup s = setup(c);
      const matrix next = chunk::state_pass(c.state, s.cumulative, c.k, chunk::pseudo_values(s.wy, c.state));
      CHECK(rel_l2(next.values, run_recurrent(p).state) < 1e-12);
    }
}

TEST_CASE("chunk::forward over several chunks equals the recurrence") {
  for (gate_kind gate : {gate_kind::none, gate_kind::scalar, gate_kind::per_key}) {
    const problem p = chunk_problem(gate, 40, 16, 8, 19);
    const result r = run_recurrent(p);
    matrix state = chunk_of(p, 0, 0, 1).state;
    for (int first = 0; first < 40; first += 16) {  // chunks of 16, 16 and 8 tokens
      const int count = std::min(16, 40 - first);
      chunk_inputs c = chunk_of(p, 0, first, count);
      const matrix out = chunk::forward(c.q, c.k, c.v, c.gamma, c.beta, c.scale, state);
      const matrix expected = head_rows(std::vector<double>(r.out.begin() + first * 8,
                                                            r.out.begin() + (first + count) * 8),
                                        count, 1, 0, 8);
      CHECK(rel_l2(out.values, expected.values) < 1e-12);
    }
    CHECK(rel_l2(state.values, r.state) < 1e-12);
  }
}
