/*
 * deltakit — kernels for the gated delta rule family of linear attention
 * (DeltaNet, Gated DeltaNet, Kimi Delta Attention) behind one C99 API.
 *
 * Conventions
 *  - Every function returns dk_status. On failure, dk_last_error() holds a
 *    thread-local message naming the offending argument and why.
 *  - The library never aborts, exits or prints. (One exception outside its
 *    control: the CPU backend's OpenMP runtime, libgomp, ends the process if
 *    the system refuses to create its worker threads.)
 *  - Outputs come last and carry an out_ prefix.
 *  - Tensors are dk_tensor views, laid out exactly like DLPack's DLTensor: a
 *    DLTensor* may be passed as a dk_tensor* without copying.
 *  - Streams are passed as void* (cudaStream_t / hipStream_t; ignored on CPU;
 *    NULL = the default stream).
 *  - An invalid call returns an error before any kernel runs and writes
 *    nothing: the state pool and the outputs stay bit-for-bit unchanged.
 *  - Strides: every operand may be a strided view (strides >= 0; outputs never
 *    0 where the dim is > 1). The last dim of q, k, v, out and per-key gates,
 *    and the two innermost dims of states, must be contiguous. Kernels load
 *    16-byte vectors along rows, so q, k, v, out, state_pool and final_state
 *    need data + byte_offset aligned to 16 bytes and outer strides that are
 *    multiples of 16 bytes (compact tensors with head dims that are multiples
 *    of 16 always are). Other operands need element alignment only.
 */
#ifndef DELTAKIT_DELTAKIT_H
#define DELTAKIT_DELTAKIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(DK_BUILDING_LIBRARY)
#define DK_API __declspec(dllexport)
#elif defined(__GNUC__)
#define DK_API __attribute__((visibility("default")))
#else
#define DK_API
#endif

#define DK_VERSION_MAJOR 0
#define DK_VERSION_MINOR 1
#define DK_VERSION_PATCH 0

/* ------------------------------------------------------------------ status */

typedef enum dk_status {
  DK_STATUS_SUCCESS = 0,
  DK_STATUS_INVALID_ARGUMENT = 1,       /* a null, mis-shaped or inconsistent argument */
  DK_STATUS_UNSUPPORTED = 2,            /* valid, but no implementation here (head dim, arch, ...) */
  DK_STATUS_NO_DEVICE = 3,              /* the backend is built but no device is present */
  DK_STATUS_OUT_OF_MEMORY = 4,
  DK_STATUS_DEVICE_ERROR = 5,           /* a launch, copy or synchronisation failed on the device */
  DK_STATUS_INSUFFICIENT_WORKSPACE = 6, /* workspace smaller than dk_prefill_workspace_size() */
  DK_STATUS_INTERNAL = 7                /* a bug in deltakit: please report it */
} dk_status;

/* A static English name for a status ("DK_STATUS_UNSUPPORTED"); never NULL. */
DK_API const char* dk_status_string(dk_status status);

/* The message of the last failed call on this thread ("" after a success). */
DK_API const char* dk_last_error(void);

/* "0.1.0" */
DK_API const char* dk_version_string(void);

/* ----------------------------------------------------- DLPack-shaped tensors */

/* Values equal DLPack's DLDeviceType. */
typedef enum dk_device_type {
  DK_DEVICE_CPU = 1,  /* kDLCPU  */
  DK_DEVICE_CUDA = 2, /* kDLCUDA */
  DK_DEVICE_ROCM = 10 /* kDLROCM */
} dk_device_type;

/* Same layout as DLDevice (the enum is stored as int32_t). */
typedef struct dk_device {
  int32_t device_type; /* dk_device_type */
  int32_t device_id;
} dk_device;

/* Values equal DLPack's DLDataTypeCode. */
typedef enum dk_dtype_code {
  DK_DTYPE_CODE_INT = 0,
  DK_DTYPE_CODE_UINT = 1,
  DK_DTYPE_CODE_FLOAT = 2,
  DK_DTYPE_CODE_BFLOAT = 4
} dk_dtype_code;

/* Same layout as DLDataType. lanes must be 1. */
typedef struct dk_dtype {
  uint8_t code; /* dk_dtype_code */
  uint8_t bits;
  uint16_t lanes;
} dk_dtype;

/* Same layout as DLTensor. strides are in elements; NULL strides mean compact
 * row-major. The element at index i is at
 * (char*)data + byte_offset + sizeof(elem) * sum(i[d] * strides[d]). */
typedef struct dk_tensor {
  void* data;
  dk_device device;
  int32_t ndim;
  dk_dtype dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} dk_tensor;

/* ------------------------------------------------------ backends and devices */

typedef enum dk_backend {
  DK_BACKEND_CPU = 1,
  DK_BACKEND_CUDA = 2,
  DK_BACKEND_HIP = 3
} dk_backend;

/* The backends compiled into this build, best first (GPU backends before cpu).
 * Writes at most `capacity` entries; *out_count is the number compiled in. */
DK_API dk_status dk_backends_compiled(dk_backend* out_backends, int32_t capacity,
                                      int32_t* out_count);

/* "cpu", "cuda", "hip"; "unknown" otherwise. */
DK_API const char* dk_backend_name(dk_backend backend);

/* Number of devices the backend can use now: DK_STATUS_SUCCESS with 0 when it
 * is compiled but finds no device; DK_STATUS_UNSUPPORTED when not compiled. */
DK_API dk_status dk_device_count(dk_backend backend, int32_t* out_count);

typedef struct dk_device_info {
  int32_t backend;      /* dk_backend */
  int32_t device_id;
  dk_device device;     /* what tensors on this device carry in dk_tensor.device */
  char vendor[32];      /* "NVIDIA", "AMD", "x86-64" ... */
  char name[128];       /* "NVIDIA H200", CPU model name ... */
  char arch[32];        /* "sm_90a", "gfx906", "x86-64-avx512" ... */
  char compiled_archs[128]; /* the archs this build carries code for, comma separated */
  int32_t compute_units;    /* SMs, CUs, CPU threads used */
  int64_t memory_bytes;     /* device memory (host RAM on CPU) */
  double peak_bandwidth_gbps; /* theoretical memory bandwidth; 0 when unknown */
} dk_device_info;

/* ------------------------------------------------------------------ contexts */

/* A context is bound to one (backend, device). Contexts are thread safe: one
 * context may be used from several threads on different streams at once. */
typedef struct dk_context dk_context;

/* DK_STATUS_NO_DEVICE when the backend is compiled but the device is absent;
 * DK_STATUS_UNSUPPORTED when the device's arch is not among the compiled
 * archs (the message lists them) or the backend is not compiled. */
DK_API dk_status dk_context_create(dk_backend backend, int32_t device_id,
                                   dk_context** out_context);
/* Creates a context on the best device present (first GPU, else the CPU). */
DK_API dk_status dk_context_create_best(dk_context** out_context);
DK_API dk_status dk_context_destroy(dk_context* context);
DK_API dk_status dk_context_device_info(const dk_context* context,
                                        dk_device_info* out_info);

/* Context options: how later calls on the context launch their work. */
typedef enum dk_context_option {
  /* 1 or 0: programmatic dependent launch of decode kernels (CUDA, devices of
   * sm_90 and newer). A new context has it on where its device takes it (CUDA
   * sm_90 and newer) and off elsewhere; set 0 to launch decode kernels the
   * ordinary way. A decode kernel launched this way may start
   * while the kernel before it on the stream is still finishing. Each of its
   * blocks waits for that kernel to complete, with all of its writes visible,
   * before it reads or writes any operand. Before the wait it at most
   * prefetches into L2 state tiles (on small calls all of them, on larger T = 1
   * calls those of a few late-starting blocks) and lines of its other inputs.
   * It reads the state indices for that, and a stale index costs only a
   * useless prefetch. Once its blocks are past the wait, the next kernel on
   * the stream launched the same way may start. Results are bit for bit those
   * of a normal launch. It works eagerly and under graph capture,
   * where it becomes a programmatic edge. Prefill launches are unaffected.
   * Setting 1 returns DK_STATUS_UNSUPPORTED on the CPU and HIP backends and
   * on CUDA devices older than sm_90. */
  DK_OPTION_PROGRAMMATIC_LAUNCH = 1
} dk_context_option;

/* Sets `option` (dk_context_option) for every later call on the context.
 * DK_STATUS_INVALID_ARGUMENT for an unknown option or value. Set options before
 * the context is shared between threads: a call already under way keeps the
 * value it started with. */
DK_API dk_status dk_context_set_option(dk_context* context, int32_t option, int64_t value);
DK_API dk_status dk_context_get_option(const dk_context* context, int32_t option,
                                       int64_t* out_value);

/* ---------------------------------------------------- memory and streams */

typedef enum dk_copy_kind {
  DK_COPY_HOST_TO_DEVICE = 0,
  DK_COPY_DEVICE_TO_HOST = 1,
  DK_COPY_DEVICE_TO_DEVICE = 2,
  DK_COPY_HOST_TO_HOST = 3
} dk_copy_kind;

/* Device memory, aligned to at least 256 bytes. */
DK_API dk_status dk_malloc(dk_context* context, size_t bytes, void** out_ptr);
DK_API dk_status dk_free(dk_context* context, void* ptr);
/* Ordered on `stream`; synchronous with respect to the host for host memory. */
DK_API dk_status dk_memcpy(dk_context* context, void* dst, const void* src, size_t bytes,
                           dk_copy_kind kind, void* stream);
DK_API dk_status dk_memset(dk_context* context, void* dst, int value, size_t bytes,
                           void* stream);
DK_API dk_status dk_stream_create(dk_context* context, void** out_stream);
DK_API dk_status dk_stream_destroy(dk_context* context, void* stream);
DK_API dk_status dk_stream_synchronize(dk_context* context, void* stream);
/* Waits for all work on the context's device. */
DK_API dk_status dk_context_synchronize(dk_context* context);

/* ------------------------------------------------------ the gated delta rule */

typedef enum dk_gate_kind {
  DK_GATE_NONE = 0,    /* DeltaNet: no decay */
  DK_GATE_SCALAR = 1,  /* Gated DeltaNet: one gate per (token, value head) */
  DK_GATE_PER_KEY = 2  /* Kimi Delta Attention: one gate per (token, value head, key) */
} dk_gate_kind;

typedef enum dk_gate_form {
  DK_GATE_LOG = 0, /* g holds the log-space decay gamma <= 0 */
  DK_GATE_RAW = 1  /* g holds `a`; gamma = -exp(A_log[h]) * softplus(a + dt_bias) */
} dk_gate_form;

typedef enum dk_beta_form {
  DK_BETA_PROB = 0, /* beta used as given */
  DK_BETA_LOGIT = 1 /* beta = sigmoid(b) */
} dk_beta_form;

typedef enum dk_state_layout {
  DK_STATE_K_LAST = 0, /* [.., HV, V, K]: the default */
  DK_STATE_V_LAST = 1  /* [.., HV, K, V] */
} dk_state_layout;

/* What the op computes (SPEC §1). Zero-initialise, then set what you need:
 * the zero value is DeltaNet with log gates, beta as probability, no l2norm,
 * K-last state and the default scale 1/sqrt(K). */
typedef struct dk_config {
  int32_t gate_kind;    /* dk_gate_kind */
  int32_t gate_form;    /* dk_gate_form (ignored for DK_GATE_NONE) */
  int32_t beta_form;    /* dk_beta_form */
  int32_t state_layout; /* dk_state_layout */
  int32_t qk_l2norm;    /* nonzero: q and k are L2-normalised per head (eps 1e-6) */
  float scale;          /* output scale; 0 means 1/sqrt(K) */
} dk_config;

/*
 * decode: B sequences, T tokens each (T = 1..16), in order per sequence.
 * Shapes (HQ query/key heads, HV value heads, HV % HQ == 0; value head h uses
 * key head h / (HV/HQ)):
 *   q, k            [B, T, HQ, K]     bf16/fp16/fp32, last dim contiguous
 *   v               [B, T, HV, V]     same dtype as q
 *   out             [B, T, HV, V]     same dtype as q, last dim contiguous
 *   g               [B, T, HV] (scalar gate) or [B, T, HV, K] (per-key gate);
 *                   log gamma, or `a` when gate_form is DK_GATE_RAW;
 *                   NULL for DK_GATE_NONE.                      fp32/bf16
 *   beta            [B, T, HV]                                  fp32/bf16
 *   A_log           [HV]            required with DK_GATE_RAW   fp32/bf16
 *   dt_bias         [HV] (scalar) or [HV, K] (per-key); optional (zero) with
 *                   DK_GATE_RAW                                 fp32/bf16
 *   state_pool      [P, HV, V, K] (K-last) or [P, HV, K, V] (V-last),
 *                   fp32/bf16/fp16, updated in place. The slot stride
 *                   (strides[0]) and head stride may exceed one state
 *                   (page-strided pools); the two innermost dims are contiguous.
 *   state_indices   [B] int32/int64: the slot each sequence reads. -1 means
 *                   padding: no state read or write, output zero. A value
 *                   outside [-1, P) is treated as padding by the kernels.
 *                   Any order is valid; the GPU kernels walk the batch in
 *                   index order, so slots ascending with b are read together
 *                   with their neighbours, measured up to 5 % faster on the H200
 *                   from B=8 on (README).
 *   state_out_indices  optional [B]: the slot the final state is written to
 *                   (default: state_indices, i.e. in place). -1: not written.
 *   state_token_indices optional [B, T]: after token t the state is written to
 *                   slot [b, t] (-1: not written); replaces the final write,
 *                   so it cannot be combined with state_out_indices.
 * Write slots must not alias slots read by another sequence of the same call.
 */
typedef struct dk_decode_args {
  const dk_tensor* q;
  const dk_tensor* k;
  const dk_tensor* v;
  const dk_tensor* g;
  const dk_tensor* beta;
  const dk_tensor* A_log;
  const dk_tensor* dt_bias;
  const dk_tensor* state_pool;
  const dk_tensor* state_indices;
  const dk_tensor* state_out_indices;
  const dk_tensor* state_token_indices;
  const dk_tensor* out;
} dk_decode_args;

/*
 * prefill: N variable-length sequences packed along the token axis.
 *   q, k            [Ntok, HQ, K];  v, out [Ntok, HV, V]   (dtypes as decode)
 *   g               [Ntok, HV] or [Ntok, HV, K]; beta [Ntok, HV]
 *   A_log, dt_bias  as decode
 *   cu_seqlens      [N+1] int32/int64 in device memory: 0 = c_0 <= c_1 <= ...
 *                   <= c_N = Ntok, each length <= max_seqlen
 *   state_pool      optional [P, HV, V, K] / [P, HV, K, V], as decode
 *   initial_state_indices optional [N]: slot holding sequence n's initial
 *                   state; absent, -1 or outside [0, P): zero initial state
 *   final_state_indices   optional [N]: slot receiving the final state (pass
 *                   the same tensor as initial_state_indices for in place);
 *                   -1 or outside [0, P): not written
 *   final_state     optional dense [N, HV, V, K] / [N, HV, K, V] receiving the
 *                   final states (fp32/bf16/fp16)
 *   num_seqs, num_tokens, max_seqlen: host integers (N, Ntok, the longest
 *                   sequence), so that no call synchronises with the host and
 *                   the call can be captured in a CUDA/HIP graph.
 * GPU scratch memory comes from the caller: see dk_prefill_workspace_size() (the
 * CPU backend asks for none and takes host scratch itself).
 */
typedef struct dk_prefill_args {
  const dk_tensor* q;
  const dk_tensor* k;
  const dk_tensor* v;
  const dk_tensor* g;
  const dk_tensor* beta;
  const dk_tensor* A_log;
  const dk_tensor* dt_bias;
  const dk_tensor* cu_seqlens;
  const dk_tensor* state_pool;
  const dk_tensor* initial_state_indices;
  const dk_tensor* final_state_indices;
  const dk_tensor* final_state;
  const dk_tensor* out;
  int64_t num_seqs;
  int64_t num_tokens;
  int64_t max_seqlen;
} dk_prefill_args;

/* Whether the context can run this problem, and by which implementation
 * ("cpu:avx512:decode", "cuda:sm90a:decode_kv128" ...; a static string).
 * Checks shapes, dtypes and strides like the run does, but data pointers may
 * be NULL. DK_STATUS_UNSUPPORTED (reason in dk_last_error) when valid but not
 * implemented. */
DK_API dk_status dk_decode_query(dk_context* context, const dk_config* config,
                                 const dk_decode_args* args, const char** out_impl_name);
DK_API dk_status dk_decode_run(dk_context* context, const dk_config* config,
                               const dk_decode_args* args, void* stream);

DK_API dk_status dk_prefill_query(dk_context* context, const dk_config* config,
                                  const dk_prefill_args* args, const char** out_impl_name);
/* Bytes of workspace dk_prefill_run needs for this problem (may be 0). Depends
 * only on the shapes and host integers; data pointers may be NULL. */
DK_API dk_status dk_prefill_workspace_size(dk_context* context, const dk_config* config,
                                           const dk_prefill_args* args, size_t* out_bytes);
/* workspace: device memory of at least the queried size, aligned to 256 bytes,
 * not used by anything else until the work on `stream` completes. */
DK_API dk_status dk_prefill_run(dk_context* context, const dk_config* config,
                                const dk_prefill_args* args, void* workspace,
                                size_t workspace_bytes, void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DELTAKIT_DELTAKIT_H */
