/*
 * A plain C99 program driving deltakit the way a C engine would: context, device memory,
 * two in-place decode steps on the CPU backend, checked against numbers worked out by hand.
 *
 * K = V = 16, one head, beta = 1/2, scale = 1/sqrt(16) = 1/4, gate gamma = ln(1/2), K-last pool
 * of two slots, the sequence in slot 1, slot 0 a bystander that must not change.
 *   step 1: S = 0, q = e0, k = e0 + e1, v = v1 (v1[j] = (j + 1) / 16)
 *     S decays (still 0); u = beta v1; S = k u^T: rows 0 and 1 = v1 / 2
 *     o = scale S^T q = v1 / 8
 *   step 2: q = e0, k = e0, v = 0
 *     S decays by 1/2: rows 0 and 1 = v1 / 4; u = beta (0 - S^T k) = -v1 / 8
 *     S = S + k u^T: row 0 = v1 / 8, row 1 = v1 / 4
 *     o = scale S^T q = v1 / 32
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <deltakit/deltakit.h>

#define D 16

static int failures = 0;

static void expect(int ok, const char* what) {
  if (!ok) {
    printf("FAIL: %s (last error: %s)\n", what, dk_last_error());
    ++failures;
  }
}

static int near(float x, double want) { return fabs((double)x - want) <= 1e-6 * (1.0 + fabs(want)); }

int main(void) {
  dk_context* ctx = NULL;
  dk_device_info info;
  float q[D], k[D], v[D], out[D], g[1], beta[1];
  float pool[2 * D * D], slot0[D * D];
  int32_t index[1] = {1};
  int64_t qkv_shape[4] = {1, 1, 1, D};
  int64_t gate_shape[3] = {1, 1, 1};
  int64_t pool_shape[4] = {2, 1, D, D}; /* [P, HV, V, K] */
  int64_t index_shape[1] = {1};
  dk_dtype f32 = {DK_DTYPE_CODE_FLOAT, 32, 1};
  dk_dtype i32 = {DK_DTYPE_CODE_INT, 32, 1};
  dk_tensor tq, tk, tv, tout, tg, tbeta, tpool, tindex;
  dk_decode_args args;
  dk_config config;
  const char* impl = NULL;
  void *dq = NULL, *dk = NULL, *dv = NULL, *dout = NULL, *dg = NULL, *dbeta = NULL, *dpool = NULL,
       *dindex = NULL;
  int i, j, step;

  /* Enum arguments outside their enums (ints in C) are answered, not trusted. */
  {
    const char* unknown = dk_status_string((dk_status)1234);
    dk_context* none = NULL;
    expect(unknown != NULL && unknown[0] != '\0', "dk_status_string of an unknown status");
    expect(strcmp(dk_backend_name((dk_backend)99), "unknown") == 0, "dk_backend_name(99)");
    expect(dk_context_create((dk_backend)99, 0, &none) == DK_STATUS_UNSUPPORTED && none == NULL,
           "dk_context_create(99) is UNSUPPORTED");
    expect(dk_context_create((dk_backend)-1, 0, &none) == DK_STATUS_UNSUPPORTED, "dk_context_create(-1)");
  }
  if (dk_context_create(DK_BACKEND_CPU, 0, &ctx) != DK_STATUS_SUCCESS) {
    printf("FAIL: dk_context_create: %s\n", dk_last_error());
    return 1;
  }
  expect(dk_context_device_info(ctx, &info) == DK_STATUS_SUCCESS, "dk_context_device_info");
  {
    int64_t option = -1;
    expect(dk_context_get_option(ctx, DK_OPTION_PROGRAMMATIC_LAUNCH, &option) == DK_STATUS_SUCCESS &&
               option == 0,
           "dk_context_get_option: programmatic launch off by default");
    expect(dk_context_set_option(ctx, DK_OPTION_PROGRAMMATIC_LAUNCH, 1) == DK_STATUS_UNSUPPORTED,
           "dk_context_set_option: no programmatic launch on the CPU");
  }

  expect(dk_malloc(ctx, sizeof q, &dq) == DK_STATUS_SUCCESS, "dk_malloc q");
  expect(dk_malloc(ctx, sizeof k, &dk) == DK_STATUS_SUCCESS, "dk_malloc k");
  expect(dk_malloc(ctx, sizeof v, &dv) == DK_STATUS_SUCCESS, "dk_malloc v");
  expect(dk_malloc(ctx, sizeof out, &dout) == DK_STATUS_SUCCESS, "dk_malloc out");
  expect(dk_malloc(ctx, sizeof g, &dg) == DK_STATUS_SUCCESS, "dk_malloc g");
  expect(dk_malloc(ctx, sizeof beta, &dbeta) == DK_STATUS_SUCCESS, "dk_malloc beta");
  expect(dk_malloc(ctx, sizeof pool, &dpool) == DK_STATUS_SUCCESS, "dk_malloc pool");
  expect(dk_malloc(ctx, sizeof index, &dindex) == DK_STATUS_SUCCESS, "dk_malloc index");
  if (failures) return 1;

#define VIEW(t, ptr, nd, shp, dt) \
  do {                            \
    (t).data = (ptr);             \
    (t).device = info.device;     \
    (t).ndim = (nd);              \
    (t).dtype = (dt);             \
    (t).shape = (shp);            \
    (t).strides = NULL;           \
    (t).byte_offset = 0;          \
  } while (0)
  VIEW(tq, dq, 4, qkv_shape, f32);
  VIEW(tk, dk, 4, qkv_shape, f32);
  VIEW(tv, dv, 4, qkv_shape, f32);
  VIEW(tout, dout, 4, qkv_shape, f32);
  VIEW(tg, dg, 3, gate_shape, f32);
  VIEW(tbeta, dbeta, 3, gate_shape, f32);
  VIEW(tpool, dpool, 4, pool_shape, f32);
  VIEW(tindex, dindex, 1, index_shape, i32);
#undef VIEW

  memset(&config, 0, sizeof config);
  config.gate_kind = DK_GATE_SCALAR; /* log gates, beta as probability, K-last, no l2norm */
  memset(&args, 0, sizeof args);
  args.q = &tq;
  args.k = &tk;
  args.v = &tv;
  args.g = &tg;
  args.beta = &tbeta;
  args.state_pool = &tpool;
  args.state_indices = &tindex;
  args.out = &tout;

  expect(dk_memcpy(ctx, dq, q, sizeof q, (dk_copy_kind)9, NULL) == DK_STATUS_INVALID_ARGUMENT,
         "dk_memcpy with copy kind 9");
  expect(dk_decode_query(ctx, &config, &args, &impl) == DK_STATUS_SUCCESS, "dk_decode_query");
  expect(impl != NULL && impl[0] != '\0', "implementation name");

  for (i = 0; i < D * D; ++i) {
    slot0[i] = pool[i] = (float)(i % 7) - 3.0f; /* slot 0: a nonzero bystander */
    pool[D * D + i] = 0.0f;                     /* slot 1: zero initial state */
  }
  expect(dk_memcpy(ctx, dpool, pool, sizeof pool, DK_COPY_HOST_TO_DEVICE, NULL) == DK_STATUS_SUCCESS, "upload pool");
  expect(dk_memcpy(ctx, dindex, index, sizeof index, DK_COPY_HOST_TO_DEVICE, NULL) == DK_STATUS_SUCCESS, "upload index");

  for (step = 1; step <= 2; ++step) {
    for (i = 0; i < D; ++i) {
      q[i] = i == 0 ? 1.0f : 0.0f;
      k[i] = (i == 0 || (step == 1 && i == 1)) ? 1.0f : 0.0f;
      v[i] = step == 1 ? (float)(i + 1) / 16.0f : 0.0f;
      out[i] = NAN;
    }
    g[0] = (float)log(0.5);
    beta[0] = 0.5f;
    expect(dk_memcpy(ctx, dq, q, sizeof q, DK_COPY_HOST_TO_DEVICE, NULL) == DK_STATUS_SUCCESS, "upload q");
    expect(dk_memcpy(ctx, dk, k, sizeof k, DK_COPY_HOST_TO_DEVICE, NULL) == DK_STATUS_SUCCESS, "upload k");
    expect(dk_memcpy(ctx, dv, v, sizeof v, DK_COPY_HOST_TO_DEVICE, NULL) == DK_STATUS_SUCCESS, "upload v");
    expect(dk_memcpy(ctx, dout, out, sizeof out, DK_COPY_HOST_TO_DEVICE, NULL) == DK_STATUS_SUCCESS, "upload out");
    expect(dk_memcpy(ctx, dg, g, sizeof g, DK_COPY_HOST_TO_DEVICE, NULL) == DK_STATUS_SUCCESS, "upload g");
    expect(dk_memcpy(ctx, dbeta, beta, sizeof beta, DK_COPY_HOST_TO_DEVICE, NULL) == DK_STATUS_SUCCESS, "upload beta");
    expect(dk_decode_run(ctx, &config, &args, NULL) == DK_STATUS_SUCCESS, "dk_decode_run");
    expect(dk_memcpy(ctx, out, dout, sizeof out, DK_COPY_DEVICE_TO_HOST, NULL) == DK_STATUS_SUCCESS, "download out");
    expect(dk_memcpy(ctx, pool, dpool, sizeof pool, DK_COPY_DEVICE_TO_HOST, NULL) == DK_STATUS_SUCCESS, "download pool");
    expect(dk_stream_synchronize(ctx, NULL) == DK_STATUS_SUCCESS, "dk_stream_synchronize");

    for (j = 0; j < D; ++j) {
      const double v1 = (double)(j + 1) / 16.0;
      char what[128];
      snprintf(what, sizeof what, "step %d out[%d] = %g, want %g", step, j, (double)out[j], v1 / (step == 1 ? 8.0 : 32.0));
      expect(near(out[j], v1 / (step == 1 ? 8.0 : 32.0)), what);
      for (i = 0; i < D; ++i) { /* K-last: slot 1 element (value j, key i) */
        const double want = i == 0 ? v1 / (step == 1 ? 2.0 : 8.0) : i == 1 ? v1 / (step == 1 ? 2.0 : 4.0) : 0.0;
        snprintf(what, sizeof what, "step %d state[v=%d][k=%d]", step, j, i);
        expect(near(pool[D * D + j * D + i], want), what);
      }
    }
    expect(memcmp(pool, slot0, sizeof slot0) == 0, "slot 0 unchanged");
  }

  dk_free(ctx, dq);
  dk_free(ctx, dk);
  dk_free(ctx, dv);
  dk_free(ctx, dout);
  dk_free(ctx, dg);
  dk_free(ctx, dbeta);
  dk_free(ctx, dpool);
  dk_free(ctx, dindex);
  dk_context_destroy(ctx);
  if (failures == 0) printf("test_c99: two decode steps match the hand-computed values (%s)\n", impl);
  return failures == 0 ? 0 : 1;
}
