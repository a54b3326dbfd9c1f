// Host entry points of the decode kernel: checks, kernel choice, launch. The
// kernels themselves are built in decode_instances_*.cu (decode_instances.cuh).
#include "decode_instances.cuh"

namespace dk::gpu {
namespace decode_detail {
namespace {

constexpr int kMaxHeadDim = 256;
#if DK_VENDOR_CUDA
// dk_bench's bare launch (bench/timer_cuda.cpp, the reference for host time per
// call) passes a parameter block of this size: change both together.
static_assert(sizeof(launch_params) == 688, "update kBareParamBytes in bench/timer_cuda.cpp");
#endif

decode_class class_of(const decode_problem& p) {
  if (p.dk == 128) return decode_class::k128;
  if (p.dk == 64) return decode_class::k64;
  return decode_class::generic;
}

// Names: "<vendor>:<arch>:decode_<class>[_vlast][_t1|_t1pipe|_t1bf16|_t1bf16smem|_tnbf16|_t1perkey|_t1perkeysmem|
// _tnperkey|_tnmma|_tnmmaperkey|_tnmmachunk|_tnmmaperkeychunk]".
#define DK_DECODE_NAMES3(prefix, suffix)                                                 \
  {                                                                                      \
    {prefix "decode_kv128" suffix, prefix "decode_kv64" suffix, prefix "decode_generic" suffix}, { \
      prefix "decode_kv128_vlast" suffix, prefix "decode_kv64_vlast" suffix,             \
          prefix "decode_generic_vlast" suffix                                           \
    }                                                                                    \
  }
#define DK_DECODE_NAMES(prefix)                                                                  \
  {                                                                                              \
    DK_DECODE_NAMES3(prefix, ""), DK_DECODE_NAMES3(prefix, "_t1"), DK_DECODE_NAMES3(prefix, "_t1pipe"), \
        DK_DECODE_NAMES3(prefix, "_t1bf16"), DK_DECODE_NAMES3(prefix, "_t1bf16smem"),            \
        DK_DECODE_NAMES3(prefix, "_tnbf16"), DK_DECODE_NAMES3(prefix, "_t1perkey"),              \
        DK_DECODE_NAMES3(prefix, "_t1perkeysmem"), DK_DECODE_NAMES3(prefix, "_tnperkey"),        \
        DK_DECODE_NAMES3(prefix, "_tnmma"), DK_DECODE_NAMES3(prefix, "_tnmmaperkey"),            \
        DK_DECODE_NAMES3(prefix, "_tnmmachunk"), DK_DECODE_NAMES3(prefix, "_tnmmaperkeychunk")      \
  }
#if DK_VENDOR_HIP
const char* const kNames[][13][2][3] = {DK_DECODE_NAMES("hip:gfx906:")};
#else
const char* const kNames[][13][2][3] = {DK_DECODE_NAMES("cuda:sm80:"), DK_DECODE_NAMES("cuda:sm90a:"),
                                       DK_DECODE_NAMES("cuda:sm100a:"),
                                       DK_DECODE_NAMES("cuda:sm120a:")};
#endif
#undef DK_DECODE_NAMES
#undef DK_DECODE_NAMES3
static_assert(sizeof(kNames) / sizeof(kNames[0]) == kNumFamilies, "a name table per family");

int family_slot(const target& t) {
  const int f = tuning::family_of(t.arch, DK_VENDOR_HIP != 0);
  for (int i = 0; i < kNumFamilies; ++i)
    if (kFamilies[i] == f) return i;
  return -1;
}

struct choice {
  launch_fn fn;
  int variant;
};

choice pick(int family_index, const target& t, const decode_problem& p) {
  const decode_class c = class_of(p);
#if DK_VENDOR_HIP
  const decode_mode m = mode_for<906>(t.compute_units, p, c);
#else
  decode_mode m;
  switch (kFamilies[family_index]) {
    case 80: m = mode_for<80>(t.compute_units, p, c); break;
    case 90: m = mode_for<90>(t.compute_units, p, c); break;
    case 100: m = mode_for<100>(t.compute_units, p, c); break;
    default: m = mode_for<120>(t.compute_units, p, c); break;
  }
#endif
  const bool k_last = p.r.layout == state_layout::k_last;
  entry e;
  switch (p.pool.type) {  // plan() admits fp32, bf16 and fp16 state only
    case dtype::f32:
      e = k_last ? launch_entry<dtype::f32, state_layout::k_last>(family_index, m, c)
                 : launch_entry<dtype::f32, state_layout::v_last>(family_index, m, c);
      break;
    case dtype::bf16:
      e = k_last ? launch_entry<dtype::bf16, state_layout::k_last>(family_index, m, c)
                 : launch_entry<dtype::bf16, state_layout::v_last>(family_index, m, c);
      break;
    default:
      e = k_last ? launch_entry<dtype::f16, state_layout::k_last>(family_index, m, c)
                 : launch_entry<dtype::f16, state_layout::v_last>(family_index, m, c);
      break;
  }
  return {e.fn, e.variant};
}

// Checks that the backend can run `p` and picks its kernel (once per call);
// the chosen launcher checks the shape's shared memory.
dk_status plan(const target& t, const decode_problem& p, int* out_family, choice* out) {
  const int fam = family_slot(t);
  if (fam < 0)
    return set_error(DK_STATUS_UNSUPPORTED, "decode: no %s decode kernels for arch %d",
                     kVendorName, t.arch);
  if (p.dk % 16 != 0 || p.dv % 16 != 0 || p.dk < 16 || p.dv < 16 || p.dk > kMaxHeadDim ||
      p.dv > kMaxHeadDim)
    return set_error(DK_STATUS_UNSUPPORTED,
                     "decode: head dims K=%d, V=%d: the %s backend supports multiples of 16 "
                     "from 16 to %d",
                     p.dk, p.dv, kVendorName, kMaxHeadDim);
  if (p.tokens < 1 || p.tokens > kMaxDecodeTokens)
    return set_error(DK_STATUS_UNSUPPORTED, "decode: T=%d tokens per sequence; supported 1..%d",
                     p.tokens, kMaxDecodeTokens);
  if (p.pool.type != dtype::f32 && p.pool.type != dtype::bf16 && p.pool.type != dtype::f16)
    return set_error(DK_STATUS_UNSUPPORTED, "decode: state_pool dtype must be fp32, bf16 or fp16");
  if (p.pool.stride[3] != 1)
    return set_error(DK_STATUS_UNSUPPORTED,
                     "decode: state_pool innermost dim must be contiguous (stride %lld)",
                     static_cast<long long>(p.pool.stride[3]));
  if (p.hq <= 0 || p.hv % p.hq != 0)
    return set_error(DK_STATUS_UNSUPPORTED, "decode: HV=%d is not a multiple of HQ=%d", p.hv, p.hq);
  *out_family = fam;
  *out = pick(fam, t, p);
  return DK_STATUS_SUCCESS;
}

}  // namespace
}  // namespace decode_detail

dk_status decode_query(const target& t, const decode_problem& p, const char** out_name) {
  using namespace decode_detail;
  if (out_name) *out_name = nullptr;
  int fam = 0;
  choice ch{};
  if (const dk_status st = plan(t, p, &fam, &ch)) return st;
  if (const dk_status st = ch.fn(t, p, nullptr, false)) return st;
  if (out_name)
    *out_name = kNames[fam][ch.variant][p.r.layout == state_layout::k_last ? 0 : 1][int(class_of(p))];
  return DK_STATUS_SUCCESS;
}

dk_status decode_launch(const target& t, const decode_problem& p, void* stream) {
  using namespace decode_detail;
  int fam = 0;
  choice ch{};
  if (const dk_status st = plan(t, p, &fam, &ch)) return st;
  return ch.fn(t, p, static_cast<gpu_stream_t>(stream), true);
}

}  // namespace dk::gpu
