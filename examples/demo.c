/*
 * deltakit demo: what an engine serving a Qwen3-Next-shaped Gated DeltaNet layer
 * does, through the public C API only.
 *   1. prefill a batch of prompts (varlen, packed along the token axis);
 *   2. run decode steps for the same sequences, state updated in place;
 *   3. check a sample (two sequences, one GVA head group) against the fp64
 *      golden, and print a small perf table.
 * Runs on the best device present (a GPU when there is one, else the CPU).
 */
#define _POSIX_C_SOURCE 199309L
#include <deltakit/deltakit.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "golden.h"

enum { HQ = 16, HV = 32, DK = 128, DV = 128, NSEQ = 4, DECODE_STEPS = 8, POOL_SLOTS = 6 };
static const int kSeqLens[NSEQ] = {1000, 1024, 777, 1200};
static const int kSlots[NSEQ] = {3, 0, 5, 1}; /* pool slot of each sequence */
static const double kTolerance = 5e-3;        /* SPEC §6: bf16 inputs, fp32 state */

#define CHECK(call)                                                                \
  do {                                                                             \
    dk_status check_status_ = (call);                                              \
    if (check_status_ != DK_STATUS_SUCCESS) {                                      \
      fprintf(stderr, "demo: %s failed: %s: %s\n", #call,                          \
              dk_status_string(check_status_), dk_last_error());                   \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

/* ---- small helpers: random numbers, bf16, clocks, tensors ---- */

static unsigned long long g_rng = 0x9e3779b97f4a7c15ull;
static double uniform(double lo, double hi) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return lo + (hi - lo) * (double)(g_rng >> 11) / 9007199254740992.0;
}

static unsigned short to_bf16(float f) {
  unsigned int u;
  memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even (inputs are finite) */
  return (unsigned short)(u >> 16);
}
static double from_bf16(unsigned short b) {
  unsigned int u = (unsigned int)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static void* xmalloc(size_t bytes) {
  void* p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "demo: out of host memory\n");
    exit(1);
  }
  return p;
}

/* A device buffer and its compact tensor view. */
typedef struct buffer {
  void* ptr;
  size_t bytes;
  int64_t shape[4];
  dk_tensor view;
} buffer;

static dk_context* g_ctx;

static buffer make_buffer(dk_dtype dtype, int ndim, const int64_t* shape) {
  buffer b;
  size_t n = 1;
  int d;
  memset(&b, 0, sizeof b);
  for (d = 0; d < ndim; ++d) {
    b.shape[d] = shape[d];
    n *= (size_t)shape[d];
  }
  b.bytes = n * dtype.bits / 8;
  CHECK(dk_malloc(g_ctx, b.bytes, &b.ptr));
  b.view.data = b.ptr;
  b.view.ndim = ndim;
  b.view.dtype = dtype;
  b.view.shape = NULL; /* set by fix_view: the struct may move when returned */
  b.view.strides = NULL;
  b.view.byte_offset = 0;
  return b;
}

static void fix_view(buffer* b, dk_device device) {
  b->view.shape = b->shape;
  b->view.device = device;
}

static void upload(buffer* b, const void* host) {
  CHECK(dk_memcpy(g_ctx, b->ptr, host, b->bytes, DK_COPY_HOST_TO_DEVICE, NULL));
}
static void download(void* host, const buffer* b) {
  CHECK(dk_memcpy(g_ctx, host, b->ptr, b->bytes, DK_COPY_DEVICE_TO_HOST, NULL));
}

static const dk_dtype kBF16 = {DK_DTYPE_CODE_BFLOAT, 16, 1};
static const dk_dtype kF32 = {DK_DTYPE_CODE_FLOAT, 32, 1};
static const dk_dtype kI32 = {DK_DTYPE_CODE_INT, 32, 1};

/* Host copies of one op's inputs: bf16 activations, fp32 gate/beta parameters. */
typedef struct inputs {
  int tokens;
  unsigned short *q, *k, *v;
  float *a, *b;
} inputs;

static inputs random_inputs(int tokens) {
  inputs in;
  size_t i;
  in.tokens = tokens;
  in.q = xmalloc(sizeof(unsigned short) * (size_t)tokens * HQ * DK);
  in.k = xmalloc(sizeof(unsigned short) * (size_t)tokens * HQ * DK);
  in.v = xmalloc(sizeof(unsigned short) * (size_t)tokens * HV * DV);
  in.a = xmalloc(sizeof(float) * (size_t)tokens * HV);
  in.b = xmalloc(sizeof(float) * (size_t)tokens * HV);
  for (i = 0; i < (size_t)tokens * HQ * DK; ++i) in.q[i] = to_bf16((float)uniform(-1, 1));
  for (i = 0; i < (size_t)tokens * HQ * DK; ++i) in.k[i] = to_bf16((float)uniform(-1, 1));
  for (i = 0; i < (size_t)tokens * HV * DV; ++i) in.v[i] = to_bf16((float)uniform(-1, 1));
  for (i = 0; i < (size_t)tokens * HV; ++i) in.a[i] = (float)uniform(-2, 2);
  for (i = 0; i < (size_t)tokens * HV; ++i) in.b[i] = (float)uniform(-3, 3);
  return in;
}

static void free_inputs(inputs* in) {
  free(in->q);
  free(in->k);
  free(in->v);
  free(in->a);
  free(in->b);
}

static double median(double* xs, int n) {
  qsort(xs, (size_t)n, sizeof(double), compare_doubles);
  return n % 2 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}

int main(void) {
  dk_device_info info;
  dk_config cfg;
  float a_log[HV], dt_bias[HV];
  int cu[NSEQ + 1], n, i, step, ntok = 0;
  const char *prefill_impl = NULL, *decode_impl = NULL;

  CHECK(dk_context_create_best(&g_ctx));
  CHECK(dk_context_device_info(g_ctx, &info));
  printf("deltakit %s demo on %s: %s (%s, %d compute units)\n", dk_version_string(),
         dk_backend_name((dk_backend)info.backend), info.name, info.arch, info.compute_units);

  /* Qwen3-Next's Gated DeltaNet: raw gates, beta as logit, q/k L2 norm, K-last fp32 state. */
  memset(&cfg, 0, sizeof cfg);
  cfg.gate_kind = DK_GATE_SCALAR;
  cfg.gate_form = DK_GATE_RAW;
  cfg.beta_form = DK_BETA_LOGIT;
  cfg.qk_l2norm = 1;
  cfg.state_layout = DK_STATE_K_LAST;
  for (i = 0; i < HV; ++i) {
    a_log[i] = (float)uniform(-2, 0.5);
    dt_bias[i] = (float)uniform(-1, 1);
  }
  cu[0] = 0;
  for (n = 0; n < NSEQ; ++n) cu[n + 1] = cu[n] + kSeqLens[n];
  ntok = cu[NSEQ];

  /* ---- device buffers ---- */
  inputs pre = random_inputs(ntok);
  int64_t s_qk[3] = {ntok, HQ, DK}, s_v[3] = {ntok, HV, DV}, s_g[2] = {ntok, HV};
  int64_t s_hv[1] = {HV}, s_cu[1] = {NSEQ + 1}, s_n[1] = {NSEQ};
  int64_t s_pool[4] = {POOL_SLOTS, HV, DV, DK};
  buffer q = make_buffer(kBF16, 3, s_qk), k = make_buffer(kBF16, 3, s_qk);
  buffer v = make_buffer(kBF16, 3, s_v), out = make_buffer(kBF16, 3, s_v);
  buffer ga = make_buffer(kF32, 2, s_g), gb = make_buffer(kF32, 2, s_g);
  buffer alog = make_buffer(kF32, 1, s_hv), dtb = make_buffer(kF32, 1, s_hv);
  buffer cus = make_buffer(kI32, 1, s_cu), slots = make_buffer(kI32, 1, s_n);
  buffer pool = make_buffer(kF32, 4, s_pool);
  buffer* all[] = {&q, &k, &v, &out, &ga, &gb, &alog, &dtb, &cus, &slots, &pool};
  for (i = 0; i < (int)(sizeof all / sizeof all[0]); ++i) fix_view(all[i], info.device);
  upload(&q, pre.q);
  upload(&k, pre.k);
  upload(&v, pre.v);
  upload(&ga, pre.a);
  upload(&gb, pre.b);
  upload(&alog, a_log);
  upload(&dtb, dt_bias);
  upload(&cus, cu);
  upload(&slots, kSlots);
  CHECK(dk_memset(g_ctx, pool.ptr, 0, pool.bytes, NULL));

  /* ---- prefill: zero initial state, final state into the pool slots ---- */
  dk_prefill_args pa;
  memset(&pa, 0, sizeof pa);
  pa.q = &q.view;
  pa.k = &k.view;
  pa.v = &v.view;
  pa.g = &ga.view;
  pa.beta = &gb.view;
  pa.A_log = &alog.view;
  pa.dt_bias = &dtb.view;
  pa.cu_seqlens = &cus.view;
  pa.state_pool = &pool.view;
  pa.final_state_indices = &slots.view;
  pa.out = &out.view;
  pa.num_seqs = NSEQ;
  pa.num_tokens = ntok;
  pa.max_seqlen = 1200;
  size_t ws_bytes = 0;
  void* ws = NULL;
  CHECK(dk_prefill_query(g_ctx, &cfg, &pa, &prefill_impl));
  CHECK(dk_prefill_workspace_size(g_ctx, &cfg, &pa, &ws_bytes));
  if (ws_bytes) CHECK(dk_malloc(g_ctx, ws_bytes, &ws));

  enum { PREFILL_RUNS = 5 };
  double prefill_times[PREFILL_RUNS];
  CHECK(dk_prefill_run(g_ctx, &cfg, &pa, ws, ws_bytes, NULL)); /* warm-up */
  CHECK(dk_context_synchronize(g_ctx));
  for (i = 0; i < PREFILL_RUNS; ++i) {
    double t0 = now_seconds();
    CHECK(dk_prefill_run(g_ctx, &cfg, &pa, ws, ws_bytes, NULL));
    CHECK(dk_context_synchronize(g_ctx));
    prefill_times[i] = now_seconds() - t0;
  }
  double prefill_s = median(prefill_times, PREFILL_RUNS);
  unsigned short* prefill_out = xmalloc(out.bytes);
  download(prefill_out, &out);

  /* ---- decode steps: one token per sequence per step, state in place ---- */
  int64_t d_qk[4] = {NSEQ, 1, HQ, DK}, d_v[4] = {NSEQ, 1, HV, DV}, d_g[3] = {NSEQ, 1, HV};
  buffer dq = make_buffer(kBF16, 4, d_qk), dkk = make_buffer(kBF16, 4, d_qk);
  buffer dv = make_buffer(kBF16, 4, d_v), dout = make_buffer(kBF16, 4, d_v);
  buffer dga = make_buffer(kF32, 3, d_g), dgb = make_buffer(kF32, 3, d_g);
  buffer* dall[] = {&dq, &dkk, &dv, &dout, &dga, &dgb};
  for (i = 0; i < (int)(sizeof dall / sizeof dall[0]); ++i) fix_view(dall[i], info.device);
  dk_decode_args da;
  memset(&da, 0, sizeof da);
  da.q = &dq.view;
  da.k = &dkk.view;
  da.v = &dv.view;
  da.g = &dga.view;
  da.beta = &dgb.view;
  da.A_log = &alog.view;
  da.dt_bias = &dtb.view;
  da.state_pool = &pool.view;
  da.state_indices = &slots.view;
  da.out = &dout.view;
  CHECK(dk_decode_query(g_ctx, &cfg, &da, &decode_impl));

  inputs dec[DECODE_STEPS];
  unsigned short* decode_out[DECODE_STEPS];
  double decode_times[DECODE_STEPS];
  for (step = 0; step < DECODE_STEPS; ++step) {
    dec[step] = random_inputs(NSEQ);
    upload(&dq, dec[step].q);
    upload(&dkk, dec[step].k);
    upload(&dv, dec[step].v);
    upload(&dga, dec[step].a);
    upload(&dgb, dec[step].b);
    CHECK(dk_context_synchronize(g_ctx));
    double t0 = now_seconds();
    CHECK(dk_decode_run(g_ctx, &cfg, &da, NULL));
    CHECK(dk_context_synchronize(g_ctx));
    decode_times[step] = now_seconds() - t0;
    decode_out[step] = xmalloc(dout.bytes);
    download(decode_out[step], &dout);
  }
  double decode_s = median(decode_times, DECODE_STEPS);
  float* pool_host = xmalloc(pool.bytes);
  download(pool_host, &pool);

  /* ---- check a sample against the fp64 golden: sequences 0 and NSEQ-1, the
   * GVA group of key head 5 (value heads 10, 11), prefill then decode ---- */
  const int group = HV / HQ, key_head = 5;
  double err2 = 0, ref2 = 0;
  int sample_seqs[2] = {0, NSEQ - 1}, si;
  for (si = 0; si < 2; ++si) {
    int seq = sample_seqs[si], len = kSeqLens[seq], total = len + DECODE_STEPS, t, x, h;
    double *gq = xmalloc(sizeof(double) * total * DK), *gk = xmalloc(sizeof(double) * total * DK);
    double *gv = xmalloc(sizeof(double) * total * group * DV);
    double *go = xmalloc(sizeof(double) * total * group * DV);
    double *gg = xmalloc(sizeof(double) * total * group), *gbeta = xmalloc(sizeof(double) * total * group);
    double galog[2], gdt[2];
    double* state = calloc((size_t)group * DK * DV, sizeof(double));
    for (t = 0; t < total; ++t) {
      const inputs* src = t < len ? &pre : &dec[t - len];
      size_t row = t < len ? (size_t)(cu[seq] + t) : (size_t)seq;
      for (x = 0; x < DK; ++x) {
        gq[t * DK + x] = from_bf16(src->q[(row * HQ + key_head) * DK + x]);
        gk[t * DK + x] = from_bf16(src->k[(row * HQ + key_head) * DK + x]);
      }
      for (h = 0; h < group; ++h) {
        int hv = key_head * group + h;
        for (x = 0; x < DV; ++x) gv[(t * group + h) * DV + x] = from_bf16(src->v[(row * HV + hv) * DV + x]);
        gg[t * group + h] = src->a[row * HV + hv];
        gbeta[t * group + h] = src->b[row * HV + hv];
      }
    }
    for (h = 0; h < group; ++h) {
      galog[h] = a_log[key_head * group + h];
      gdt[h] = dt_bias[key_head * group + h];
    }
    if (!state || golden_gdn_sequence(1, 1, 1, 0.0, 1, group, DK, DV, total, gq, gk, gv, gg,
                                      gbeta, galog, gdt, state, go) != 0) {
      fprintf(stderr, "demo: golden reference failed\n");
      return 1;
    }
    for (t = 0; t < total; ++t)
      for (h = 0; h < group; ++h) {
        int hv = key_head * group + h;
        const unsigned short* dev = t < len ? &prefill_out[((size_t)(cu[seq] + t) * HV + hv) * DV]
                                            : &decode_out[t - len][((size_t)seq * HV + hv) * DV];
        for (x = 0; x < DV; ++x) {
          double r = go[(t * group + h) * DV + x], d = from_bf16(dev[x]) - r;
          err2 += d * d;
          ref2 += r * r;
        }
      }
    for (h = 0; h < group; ++h) { /* pool is K-last: [slot][hv][v][k]; golden is [h][k][v] */
      const float* s = &pool_host[((size_t)kSlots[seq] * HV + key_head * group + h) * DV * DK];
      for (x = 0; x < DK; ++x) {
        int y;
        for (y = 0; y < DV; ++y) {
          double r = state[((size_t)h * DK + x) * DV + y], d = s[(size_t)y * DK + x] - r;
          err2 += d * d;
          ref2 += r * r;
        }
      }
    }
    free(gq), free(gk), free(gv), free(go), free(gg), free(gbeta), free(state);
  }
  double rel_err = sqrt(err2 / (ref2 > 0 ? ref2 : 1));
  int ok = rel_err <= kTolerance && rel_err == rel_err;

  /* ---- table ---- */
  double flops = 4.0 * ntok * HV * DK * DV;
  double state_bytes = 2.0 * NSEQ * HV * DK * DV * sizeof(float);
  double io_bytes = NSEQ * (2.0 * HQ * DK + 2.0 * HV * DV) * 2 + NSEQ * 2.0 * HV * 4;
  printf("\n%-8s %-34s %-30s %12s %14s %16s\n", "op", "shape", "implementation", "time",
         "tokens/s", "throughput");
  printf("%-8s %-34s %-30s %9.3f ms %14.0f %11.3f TFLOP/s\n", "prefill",
         "4 seqs, 4001 tok, HQ16 HV32 K=V=128", prefill_impl, prefill_s * 1e3, ntok / prefill_s,
         flops / prefill_s * 1e-12);
  printf("%-8s %-34s %-30s %9.1f us %14.0f %14.1f GB/s\n", "decode",
         "B=4 T=1, HQ16 HV32 K=V=128", decode_impl, decode_s * 1e6, NSEQ / decode_s,
         (state_bytes + io_bytes) / decode_s * 1e-9);
  printf("(host-timed: launch + synchronisation included; bench/ has the device-timed numbers)\n");
  printf("\nvalidation: sequences 0 and %d (%d and %d prefill tokens, then %d decode steps), "
         "value heads %d-%d: relative L2 error %.3e vs the fp64 golden (tolerance %.0e): %s\n",
         NSEQ - 1, kSeqLens[0], kSeqLens[NSEQ - 1], DECODE_STEPS, key_head * group,
         key_head * group + group - 1, rel_err, kTolerance, ok ? "PASS" : "FAIL");

  for (i = 0; i < (int)(sizeof all / sizeof all[0]); ++i) dk_free(g_ctx, all[i]->ptr);
  for (i = 0; i < (int)(sizeof dall / sizeof dall[0]); ++i) dk_free(g_ctx, dall[i]->ptr);
  for (step = 0; step < DECODE_STEPS; ++step) {
    free_inputs(&dec[step]);
    free(decode_out[step]);
  }
  free_inputs(&pre);
  free(prefill_out);
  free(pool_host);
  dk_free(g_ctx, ws);
  dk_context_destroy(g_ctx);
  return ok ? 0 : 2;
}
