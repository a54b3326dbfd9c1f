#include "golden.h"

#include "dk_ref/reference.hpp"

extern "C" int golden_gdn_sequence(int gate_raw, int beta_logit, int qk_l2norm, double scale,
                                   int hq, int hv, int dk, int dv, int tokens, const double* q,
                                   const double* k, const double* v, const double* g,
                                   const double* beta, const double* a_log,
                                   const double* dt_bias, double* state, double* out) {
  dk_ref::config cfg;
  cfg.gate = dk_ref::gate_kind::scalar;
  cfg.gate_raw = gate_raw != 0;
  cfg.beta_logit = beta_logit != 0;
  cfg.qk_l2norm = qk_l2norm != 0;
  cfg.scale = scale;
  dk_ref::dims d{hq, hv, dk, dv};
  dk_ref::sequence s{tokens, q, k, v, g, beta, a_log, dt_bias};
  try {
    dk_ref::recurrent(cfg, d, s, state, out);
  } catch (...) {
    return 1;
  }
  return 0;
}
