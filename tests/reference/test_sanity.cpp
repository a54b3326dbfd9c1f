// Hand-checkable properties of the golden reference.
#include <doctest/doctest.h>

#include "test_problem.hpp"

using dk_ref::gate_kind;
using namespace dk_test;

namespace {

// Both golden forms, so every sanity property is checked on each.
std::vector<result> run_both(const problem& p) { return {run_recurrent(p), run_chunked(p, 4)}; }

}  // namespace

TEST_CASE("one token from zero state: o = scale * beta * (q . k) v") {
  for (gate_kind gate : {gate_kind::none, gate_kind::scalar, gate_kind::per_key}) {
    dk_ref::config cfg;
    cfg.gate = gate;
    const dk_ref::dims d{1, 2, 8, 4};
    const problem p = make_problem(cfg, d, 1, 21, gate_range{}, /*zero_state=*/true);
    double qk = 0;
    for (int i = 0; i < 8; ++i) qk += p.q[i] * p.k[i];
    for (const result& r : run_both(p))
      for (int h = 0; h < 2; ++h)
        for (int j = 0; j < 4; ++j)
          CHECK(r.out[h * 4 + j] ==
                doctest::Approx(1 / std::sqrt(8.0) * p.beta[h] * qk * p.v[h * 4 + j]).epsilon(1e-14));
  }
}

TEST_CASE("delta rule with a unit key and beta = 1 stores v exactly: S^T k == v") {
  dk_ref::config cfg;
  cfg.gate = gate_kind::none;
  const dk_ref::dims d{1, 1, 16, 8};
  problem p = make_problem(cfg, d, 3, 22);
  for (int t = 0; t < 3; ++t) {
    double norm = 0;
    for (int i = 0; i < 16; ++i) norm += p.k[t * 16 + i] * p.k[t * 16 + i];
    for (int i = 0; i < 16; ++i) p.k[t * 16 + i] /= std::sqrt(norm);
    p.beta[t] = 1.0;
  }
  for (const result& r : run_both(p))
    for (int j = 0; j < 8; ++j) {
      double st_k = 0;  // last token's key against the final state
      for (int i = 0; i < 16; ++i) st_k += r.state[i * 8 + j] * p.k[2 * 16 + i];
      CHECK(st_k == doctest::Approx(p.v[2 * 8 + j]).epsilon(1e-12));
    }
}

TEST_CASE("a scalar gate equals a per-key gate with every key's gate the same") {
  dk_ref::config cfg;
  cfg.gate = gate_kind::scalar;
  const dk_ref::dims d{1, 2, 16, 8};
  const problem scalar = make_problem(cfg, d, 37, 23);
  problem per_key = scalar;
  per_key.cfg.gate = gate_kind::per_key;
  per_key.g.clear();
  for (double gamma : scalar.g) per_key.g.insert(per_key.g.end(), 16, gamma);
  const result a = run_recurrent(scalar), b = run_recurrent(per_key);
  CHECK(rel_l2(b.out, a.out) < 1e-15);
  CHECK(rel_l2(b.state, a.state) < 1e-15);
  CHECK(rel_l2(run_chunked(per_key, 16).out, run_chunked(scalar, 16).out) < 1e-14);
}

TEST_CASE("no gate equals a log gate of 0") {
  for (gate_kind gate : {gate_kind::scalar, gate_kind::per_key}) {
    dk_ref::config cfg;
    cfg.gate = gate;
    const dk_ref::dims d{1, 1, 8, 8};
    problem zero_gate = make_problem(cfg, d, 20, 24);
    std::fill(zero_gate.g.begin(), zero_gate.g.end(), 0.0);
    problem no_gate = zero_gate;
    no_gate.cfg.gate = gate_kind::none;
    no_gate.g.clear();  // gate none reads no g
    const result a = run_recurrent(zero_gate), b = run_recurrent(no_gate);
    CHECK(a.out == b.out);
    CHECK(a.state == b.state);
    CHECK(rel_l2(run_chunked(no_gate, 8).out, run_chunked(zero_gate, 8).out) < 1e-15);
  }
}

TEST_CASE("softplus: log1p(exp(x)), and x itself above the threshold 20") {
  CHECK(dk_ref::softplus(0.0) == doctest::Approx(0.6931471805599453).epsilon(1e-15));
  CHECK(dk_ref::softplus(-3.0) == doctest::Approx(std::log1p(std::exp(-3.0))).epsilon(1e-15));
  CHECK(dk_ref::softplus(20.0) == doctest::Approx(20.000000002061153).epsilon(1e-16));  // not yet x
  CHECK(dk_ref::softplus(20.0) != 20.0);
  CHECK(dk_ref::softplus(20.5) == 20.5);
  CHECK(dk_ref::softplus(100.0) == 100.0);
}

TEST_CASE("raw gates: gamma = -exp(A_log[h]) * softplus(a + dt_bias)") {
  dk_ref::config cfg;
  cfg.gate = gate_kind::scalar;
  cfg.gate_raw = true;
  const dk_ref::dims d{1, 2, 4, 4};
  const double a[] = {0.0, 19.0, 1.0, 22.0};  // [T=2][HV=2]
  const double a_log[] = {0.0, std::log(2.0)};
  const double dt_bias[] = {0.0, 1.5};
  dk_ref::sequence s{2, nullptr, nullptr, nullptr, a, nullptr, a_log, dt_bias};
  CHECK(dk_ref::gate_at(cfg, d, s, 0, 0, 3) == doctest::Approx(-std::log(2.0)).epsilon(1e-15));
  CHECK(dk_ref::gate_at(cfg, d, s, 0, 1, 0) == -2.0 * 20.5);  // 19 + 1.5 is past the threshold
  CHECK(dk_ref::gate_at(cfg, d, s, 1, 0, 0) == doctest::Approx(-std::log1p(std::exp(1.0))).epsilon(1e-15));
  CHECK(dk_ref::gate_at(cfg, d, s, 1, 1, 2) == -2.0 * 23.5);
  s.dt_bias = nullptr;  // no dt_bias means zero
  CHECK(dk_ref::gate_at(cfg, d, s, 0, 1, 0) ==
        doctest::Approx(-2.0 * std::log1p(std::exp(19.0))).epsilon(1e-15));

  cfg.gate = gate_kind::per_key;  // a [T][HV][K], dt_bias [HV][K]
  const dk_ref::dims d1{1, 1, 2, 2};
  const double a_pk[] = {0.5, -0.5};
  const double bias_pk[] = {0.25, 21.0};
  const double a_log_pk[] = {-1.0};
  const dk_ref::sequence pk{1, nullptr, nullptr, nullptr, a_pk, nullptr, a_log_pk, bias_pk};
  CHECK(dk_ref::gate_at(cfg, d1, pk, 0, 0, 0) ==
        doctest::Approx(-std::exp(-1.0) * std::log1p(std::exp(0.75))).epsilon(1e-15));
  CHECK(dk_ref::gate_at(cfg, d1, pk, 0, 0, 1) == doctest::Approx(-std::exp(-1.0) * 20.5).epsilon(1e-15));

  cfg.gate = gate_kind::none;
  CHECK(dk_ref::gate_at(cfg, d, s, 1, 1, 0) == 0.0);
}

TEST_CASE("beta: a probability as given, or sigmoid of a logit") {
  dk_ref::config cfg;
  const dk_ref::dims d{1, 2, 4, 4};
  const double b[] = {0.0, 2.0};
  const dk_ref::sequence s{1, nullptr, nullptr, nullptr, nullptr, b, nullptr, nullptr};
  CHECK(dk_ref::beta_at(cfg, d, s, 0, 1) == 2.0);
  cfg.beta_logit = true;
  CHECK(dk_ref::beta_at(cfg, d, s, 0, 0) == 0.5);
  CHECK(dk_ref::beta_at(cfg, d, s, 0, 1) == doctest::Approx(1 / (1 + std::exp(-2.0))).epsilon(1e-15));
}

TEST_CASE("l2norm equals feeding q * rsqrt(sum q^2 + 1e-6), k likewise") {
  dk_ref::config cfg;
  cfg.qk_l2norm = true;
  const dk_ref::dims d{2, 2, 8, 4};
  const problem normed = make_problem(cfg, d, 9, 25);
  problem prenormed = normed;
  prenormed.cfg.qk_l2norm = false;
  for (std::vector<double>* x : {&prenormed.q, &prenormed.k})
    for (std::size_t row = 0; row < x->size() / 8; ++row) {
      double sum_sq = 0;
      for (int i = 0; i < 8; ++i) sum_sq += (*x)[row * 8 + i] * (*x)[row * 8 + i];
      for (int i = 0; i < 8; ++i) (*x)[row * 8 + i] /= std::sqrt(sum_sq + 1e-6);
    }
  CHECK(rel_l2(run_recurrent(prenormed).out, run_recurrent(normed).out) < 1e-14);
  CHECK(rel_l2(run_chunked(prenormed, 4).out, run_chunked(normed, 4).out) < 1e-14);
  problem raw = normed;  // the same q/k without the norm: the norm must change the output
  raw.cfg.qk_l2norm = false;
  CHECK(rel_l2(run_recurrent(raw).out, run_recurrent(normed).out) > 1e-3);  // l2norm acted
}

TEST_CASE("GVA: value head h reads q/k head h / (HV/HQ), not h % HQ") {
  dk_ref::config cfg;
  const dk_ref::dims d{2, 4, 8, 4};  // value heads 0, 1 -> qk head 0; 2, 3 -> qk head 1
  const problem p = make_problem(cfg, d, 6, 26);
  for (const result& r : run_both(p))
    for (int h = 0; h < 4; ++h) {
      // Value head h alone, with its q/k copied in as the single head.
      problem single;
      single.cfg = cfg;
      single.d = {1, 1, 8, 4};
      single.tokens = 6;
      const int qk_head = h / 2;
      for (int t = 0; t < 6; ++t) {
        for (int i = 0; i < 8; ++i) {
          single.q.push_back(p.q[(t * 2 + qk_head) * 8 + i]);
          single.k.push_back(p.k[(t * 2 + qk_head) * 8 + i]);
        }
        for (int j = 0; j < 4; ++j) single.v.push_back(p.v[(t * 4 + h) * 4 + j]);
        single.g.push_back(p.g[t * 4 + h]);
        single.beta.push_back(p.beta[t * 4 + h]);
      }
      single.state.assign(p.state.begin() + h * 32, p.state.begin() + (h + 1) * 32);
      const result alone = run_recurrent(single);
      INFO("value head " << h);
      CHECK(rel_l2(head_rows(r.out, 6, 4, h, 4).values, alone.out) < 1e-13);
      CHECK(rel_l2(head_state(r.state, d, h).values, alone.state) < 1e-13);
    }
}

TEST_CASE("scale: 0 means 1/sqrt(K), and an explicit scale multiplies the output") {
  dk_ref::config cfg;
  const dk_ref::dims d{1, 1, 16, 4};
  const problem p = make_problem(cfg, d, 5, 27);
  problem quarter = p, explicit_default = p;
  quarter.cfg.scale = 0.5;
  explicit_default.cfg.scale = 0.25;  // 1/sqrt(16)
  CHECK(run_recurrent(explicit_default).out == run_recurrent(p).out);
  const result base = run_recurrent(p), scaled = run_recurrent(quarter);
  for (std::size_t i = 0; i < base.out.size(); ++i) CHECK(scaled.out[i] == doctest::Approx(2 * base.out[i]).epsilon(1e-14));
  CHECK(scaled.state == base.state);
  CHECK(run_chunked(explicit_default, 2).out == run_chunked(p, 2).out);
}

TEST_CASE("zero tokens leave the state untouched") {
  dk_ref::config cfg;
  const problem p = make_problem(cfg, dk_ref::dims{1, 2, 8, 8}, 0, 28);
  CHECK(run_recurrent(p).state == p.state);
  CHECK(run_chunked(p, 16).state == p.state);
}
