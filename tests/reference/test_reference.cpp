// The two golden forms must agree: recurrent (SPEC §1, token by token) vs chunked (WY).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <string>

#include "test_problem.hpp"

using dk_ref::gate_kind;
using namespace dk_test;

namespace {

constexpr double tolerance = 1e-10;

const char* name_of(gate_kind g) {
  return g == gate_kind::none ? "none" : g == gate_kind::scalar ? "scalar" : "per_key";
}

std::string describe(const problem& p, int chunk) {
  return "T=" + std::to_string(p.tokens) + " chunk=" + std::to_string(chunk) +
         " gate=" + name_of(p.cfg.gate) + (p.cfg.gate_raw ? " raw" : " log") +
         (p.cfg.beta_logit ? " beta_logit" : " beta_prob") + (p.cfg.qk_l2norm ? " l2norm" : "") +
         " HQ=" + std::to_string(p.d.hq) + " HV=" + std::to_string(p.d.hv) +
         " K=" + std::to_string(p.d.dk) + " V=" + std::to_string(p.d.dv);
}

void check_agreement(const problem& p, int chunk) {
  INFO(describe(p, chunk));
  const result reference = run_recurrent(p);
  const result chunked = run_chunked(p, chunk);
  CHECK(rel_l2(chunked.out, reference.out) < tolerance);
  CHECK(rel_l2(chunked.state, reference.state) < tolerance);
}

// Lengths around the chunk boundaries plus long sequences, chunk sizes 16 and 64, one gate kind.
// Every run takes the next variant of the remaining options, so that across the lengths each of
// raw/log gate, logit/prob beta, l2norm on/off, GVA ratio 1/2/4 and K/V shape is exercised.
void check_agreement_over_lengths(gate_kind gate, int seed) {
  const int lengths[] = {1, 2, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000, 4096};
  struct shape { int dk, dv; };
  const shape shapes[] = {{64, 64}, {64, 32}, {48, 64}, {32, 48}};
  const int gva_ratios[] = {1, 2, 4};
  int variant = 0;
  for (int chunk : {16, 64})
    for (int tokens : lengths) {
      dk_ref::config cfg;
      cfg.gate = gate;
      cfg.gate_raw = variant & 1;
      cfg.beta_logit = (variant >> 1) & 1;
      cfg.qk_l2norm = (variant >> 2) & 1;
      const int hq = tokens >= 1000 ? 1 : 2;
      const shape s = tokens >= 1000 ? shape{64, 64} : shapes[variant % 4];
      const dk_ref::dims d{hq, hq * gva_ratios[variant % 3], s.dk, s.dv};
      check_agreement(make_problem(cfg, d, tokens, seed + variant), chunk);
      ++variant;
    }
}

}  // namespace

TEST_CASE("recurrent and chunked agree over lengths and chunk sizes: no gate (DeltaNet)") {
  check_agreement_over_lengths(gate_kind::none, 1000);
}

TEST_CASE("recurrent and chunked agree over lengths and chunk sizes: scalar gate (GDN)") {
  check_agreement_over_lengths(gate_kind::scalar, 2000);
}

TEST_CASE("recurrent and chunked agree over lengths and chunk sizes: per-key gate (KDA)") {
  check_agreement_over_lengths(gate_kind::per_key, 3000);
}

TEST_CASE("recurrent and chunked agree for every combination of options") {
  struct shape { int dk, dv; };
  int variant = 0;
  for (gate_kind gate : {gate_kind::none, gate_kind::scalar, gate_kind::per_key})
    for (bool raw : {false, true})
      for (bool logit : {false, true})
        for (bool l2norm : {false, true})
          for (int ratio : {1, 2, 4})
            for (shape s : {shape{32, 32}, shape{32, 16}, shape{48, 32}}) {
              dk_ref::config cfg;
              cfg.gate = gate;
              cfg.gate_raw = raw;
              cfg.beta_logit = logit;
              cfg.qk_l2norm = l2norm;
              const dk_ref::dims d{2, 2 * ratio, s.dk, s.dv};
              check_agreement(make_problem(cfg, d, 45, 5000 + variant++), 16);
            }
}

TEST_CASE("recurrent and chunked agree for odd chunk lengths") {
  dk_ref::config cfg;
  cfg.gate = gate_kind::per_key;
  const dk_ref::dims d{1, 2, 32, 24};
  const problem p = make_problem(cfg, d, 50, 77);
  for (int chunk : {1, 3, 7, 49, 50, 51, 200}) check_agreement(p, chunk);
}

TEST_CASE("recurrent and chunked agree with strong gates (log gate around -5)") {
  for (gate_kind gate : {gate_kind::scalar, gate_kind::per_key})
    for (int chunk : {16, 64}) {
      dk_ref::config cfg;
      cfg.gate = gate;
      cfg.qk_l2norm = true;
      const dk_ref::dims d{1, 2, 64, 64};
      check_agreement(make_problem(cfg, d, 1000, 31 + chunk, gate_range{-5.5, -4.5}), chunk);
    }
}

TEST_CASE("chunked stays finite and exact with extreme per-key gates") {
  // Cumulative gates reach about -1600 in a 64-token chunk: exp(-G) would overflow to inf, and
  // inf * 0 would poison the output. Pairwise exp(G_i - G_j) never exceeds 1.
  dk_ref::config cfg;
  cfg.gate = gate_kind::per_key;
  const dk_ref::dims d{1, 1, 32, 32};
  const problem p = make_problem(cfg, d, 200, 99, gate_range{-30, -20});
  const result chunked = run_chunked(p, 64);
  for (double x : chunked.out) REQUIRE(std::isfinite(x));
  for (double x : chunked.state) REQUIRE(std::isfinite(x));
  check_agreement(p, 64);
}
