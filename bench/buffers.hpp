// Device tensors for the benchmark: dk_malloc'd memory filled with seeded random
// non-zero values through dk_memcpy, and the dk_tensor view an op call takes.
// Only the public C API is used, so the same code drives every backend.
#pragma once
#include <deltakit/deltakit.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace dkb {

// A failed dk_* call, carrying dk_last_error(); the workload is reported as failed.
struct dk_failure : std::runtime_error {
  dk_status status;
  dk_failure(dk_status s, const std::string& what) : std::runtime_error(what), status(s) {}
};
// Throws dk_failure("<what>: <status>: <dk_last_error()>") unless s is a success.
void check(dk_status s, const char* what);

enum class elem { f32, bf16, i32 };
dk_dtype to_dk(elem e);
std::size_t elem_size(elem e);
const char* elem_name(elem e);  // "float32", "bfloat16", "int32"

// One compact row-major tensor in device memory.
class device_tensor {
 public:
  device_tensor(dk_context* ctx, elem type, std::vector<int64_t> shape);
  ~device_tensor();
  device_tensor(const device_tensor&) = delete;
  device_tensor& operator=(const device_tensor&) = delete;

  // Uniform values in [lo, hi) from a generator seeded with `seed`; magnitudes
  // below 1/64 of the range are pushed away from zero (inputs are never zero).
  void fill_uniform(uint64_t seed, float lo, float hi);
  void fill_ints(const std::vector<int32_t>& values);  // exactly numel() values
  // Number of non-finite elements (floating types), read back through dk_memcpy.
  int64_t count_non_finite() const;

  int64_t numel() const;
  std::size_t bytes() const { return numel() * elem_size(type_); }
  const dk_tensor* view() const { return &view_; }
  void* data() const { return data_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  elem type() const { return type_; }

 private:
  dk_context* ctx_;
  elem type_;
  std::vector<int64_t> shape_;
  void* data_ = nullptr;
  dk_tensor view_{};
};

}  // namespace dkb
