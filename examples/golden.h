/* A C entry point to the fp64 golden (reference/), for the demo's check. */
#ifndef DK_EXAMPLES_GOLDEN_H
#define DK_EXAMPLES_GOLDEN_H
#ifdef __cplusplus
extern "C" {
#endif

/* One sequence through dk_ref::recurrent. Layouts (row-major, fp64):
 * q, k [T][hq][dk]; v, out [T][hv][dv]; g, beta [T][hv] (scalar gate);
 * a_log, dt_bias [hv]; state [hv][dk][dv] in/out. Returns 0 on success. */
int golden_gdn_sequence(int gate_raw, int beta_logit, int qk_l2norm, double scale, int hq, int hv,
                        int dk, int dv, int tokens, const double* q, const double* k,
                        const double* v, const double* g, const double* beta,
                        const double* a_log, const double* dt_bias, double* state, double* out);

#ifdef __cplusplus
}
#endif
#endif
