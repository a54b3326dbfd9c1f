#include "buffers.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace dkb {

void check(dk_status s, const char* what) {
  if (s == DK_STATUS_SUCCESS) return;
  throw dk_failure(s, std::string(what) + ": " + dk_status_string(s) + ": " + dk_last_error());
}

dk_dtype to_dk(elem e) {
  switch (e) {
    case elem::f32:
      return dk_dtype{DK_DTYPE_CODE_FLOAT, 32, 1};
    case elem::bf16:
      return dk_dtype{DK_DTYPE_CODE_BFLOAT, 16, 1};
    case elem::i32:
      return dk_dtype{DK_DTYPE_CODE_INT, 32, 1};
  }
  return dk_dtype{};
}

std::size_t elem_size(elem e) { return e == elem::bf16 ? 2 : 4; }

const char* elem_name(elem e) {
  switch (e) {
    case elem::f32:
      return "float32";
    case elem::bf16:
      return "bfloat16";
    case elem::i32:
      return "int32";
  }
  return "?";
}

namespace {

// splitmix64: fast, seedable, good enough for benchmark inputs.
struct rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float unit() { return float(next() >> 40) * (1.0f / 16777216.0f); }  // [0, 1)
};

uint16_t to_bf16(float f) {  // round to nearest even; inputs here are finite
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float from_bf16(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

constexpr std::size_t kChunkElems = std::size_t(1) << 22;  // host staging: 16 MB of fp32

}  // namespace

device_tensor::device_tensor(dk_context* ctx, elem type, std::vector<int64_t> shape)
    : ctx_(ctx), type_(type), shape_(std::move(shape)) {
  dk_device_info info{};
  check(dk_context_device_info(ctx_, &info), "dk_context_device_info");
  check(dk_malloc(ctx_, std::max<std::size_t>(bytes(), 256), &data_), "dk_malloc");
  view_.data = data_;
  view_.device = info.device;
  view_.ndim = static_cast<int32_t>(shape_.size());
  view_.dtype = to_dk(type_);
  view_.shape = shape_.data();
  view_.strides = nullptr;  // compact
  view_.byte_offset = 0;
}

device_tensor::~device_tensor() {
  if (data_) dk_free(ctx_, data_);
}

int64_t device_tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

void device_tensor::fill_uniform(uint64_t seed, float lo, float hi) {
  rng r{seed};
  const float span = hi - lo, min_mag = std::fabs(span) / 64.0f;
  const std::size_t n = static_cast<std::size_t>(numel()), esize = elem_size(type_);
  std::vector<unsigned char> host(std::min(n, kChunkElems) * esize);
  for (std::size_t begin = 0; begin < n; begin += kChunkElems) {
    const std::size_t count = std::min(kChunkElems, n - begin);
    for (std::size_t i = 0; i < count; ++i) {
      float x = lo + span * r.unit();
      if (std::fabs(x) < min_mag) x = x < 0 ? -min_mag : min_mag;
      if (type_ == elem::bf16) {
        uint16_t h = to_bf16(x);
        std::memcpy(&host[i * 2], &h, 2);
      } else {
        std::memcpy(&host[i * 4], &x, 4);
      }
    }
    check(dk_memcpy(ctx_, static_cast<char*>(data_) + begin * esize, host.data(), count * esize,
                    DK_COPY_HOST_TO_DEVICE, nullptr),
          "dk_memcpy (upload)");
  }
  check(dk_context_synchronize(ctx_), "dk_context_synchronize");
}

void device_tensor::fill_ints(const std::vector<int32_t>& values) {
  if (type_ != elem::i32 || static_cast<int64_t>(values.size()) != numel())
    throw std::logic_error("fill_ints: type or size mismatch");
  check(dk_memcpy(ctx_, data_, values.data(), bytes(), DK_COPY_HOST_TO_DEVICE, nullptr),
        "dk_memcpy (upload)");
  check(dk_context_synchronize(ctx_), "dk_context_synchronize");
}

int64_t device_tensor::count_non_finite() const {
  if (type_ == elem::i32) return 0;
  check(dk_context_synchronize(ctx_), "dk_context_synchronize");
  const std::size_t n = static_cast<std::size_t>(numel()), esize = elem_size(type_);
  std::vector<unsigned char> host(std::min(n, kChunkElems) * esize);
  int64_t bad = 0;
  for (std::size_t begin = 0; begin < n; begin += kChunkElems) {
    const std::size_t count = std::min(kChunkElems, n - begin);
    check(dk_memcpy(ctx_, host.data(), static_cast<const char*>(data_) + begin * esize,
                    count * esize, DK_COPY_DEVICE_TO_HOST, nullptr),
          "dk_memcpy (download)");
    check(dk_context_synchronize(ctx_), "dk_context_synchronize");
    for (std::size_t i = 0; i < count; ++i) {
      float x;
      if (type_ == elem::bf16) {
        uint16_t h;
        std::memcpy(&h, &host[i * 2], 2);
        x = from_bf16(h);
      } else {
        std::memcpy(&x, &host[i * 4], 4);
      }
      bad += std::isfinite(x) ? 0 : 1;
    }
  }
  return bad;
}

}  // namespace dkb
