// Device memory seen through a host mirror, and dk_tensor views into it.
//
// Every byte a kernel sees lives in memory from dk_malloc and moves with dk_memcpy, so the same
// test drives any backend: the host never dereferences a device pointer (it only offsets one).
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <deltakit/deltakit.h>

#include "dk_test/numeric.hpp"

namespace dkt {

// Thrown by the helpers when a memory/stream call fails (the test reports it as a failure).
struct dk_error : std::runtime_error {
  dk_status status;
  dk_error(dk_status s, const std::string& what);
};
// Throws dk_error with dk_last_error() unless s is DK_STATUS_SUCCESS.
void check(dk_status s, const char* what);

// One dk_malloc allocation and its host mirror.
class buffer {
 public:
  buffer(dk_context* ctx, std::size_t bytes);
  ~buffer();
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;

  void upload(void* stream = nullptr);    // host mirror -> device, then synchronises the stream
  void download(void* stream = nullptr);  // device -> host mirror, then synchronises the stream

  dk_context* ctx;
  void* dev = nullptr;
  std::vector<unsigned char> host;
};

// A strided view of `type` elements into a buffer. strides are in elements; offset is the
// element offset of index (0, ..., 0) from the start of the buffer.
class tensor {
 public:
  tensor() = default;

  bool present() const { return buf != nullptr; }
  std::int64_t rank() const { return std::int64_t(shape.size()); }
  std::int64_t numel() const;
  std::size_t elem_size() const { return dt_size(type); }

  // Calls f(linear logical index, byte offset in the buffer) for every element, row-major.
  template <class F>
  void for_each(F&& f) const {
    const std::int64_t n = numel();
    std::vector<std::int64_t> idx(shape.size(), 0);
    for (std::int64_t lin = 0; lin < n; ++lin) {
      std::int64_t off = offset;
      for (std::size_t d = 0; d < shape.size(); ++d) off += idx[d] * strides[d];
      f(lin, std::size_t(off) * elem_size());
      for (std::size_t d = shape.size(); d-- > 0;) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
  }

  // Writes dense row-major logical values (rounded to `type`) into the host mirror.
  void fill(const std::vector<double>& dense);
  // Reads every logical element of the host mirror, row-major.
  std::vector<double> values() const;
  double at(std::int64_t linear) const;
  // Byte offset of a logical element in the buffer.
  std::size_t byte_of(std::int64_t linear) const;
  void set_at(std::int64_t linear, double x);
  // NaN into every logical element of the host mirror.
  void poison();
  // Byte span [first, last) the view covers in its buffer.
  std::size_t first_byte() const;
  std::size_t end_byte() const;

  // The descriptor (data = device pointer + offset, or byte_offset when use_byte_offset).
  const dk_tensor* dl();

  std::shared_ptr<buffer> buf;
  dt type = dt::f32;
  dk_device device{};
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  bool use_byte_offset = false;
  dk_tensor desc{};
};

std::vector<std::int64_t> compact_strides(const std::vector<std::int64_t>& shape);

// A compact tensor in its own buffer (at least 256 bytes, so empty shapes still allocate).
tensor make_tensor(dk_context* ctx, dk_device device, dt type, std::vector<std::int64_t> shape);
// A strided view in its own buffer, sized to hold offset + the furthest element.
tensor make_strided(dk_context* ctx, dk_device device, dt type, std::vector<std::int64_t> shape,
                    std::vector<std::int64_t> strides, std::int64_t offset = 0);
// A view sharing `owner`'s buffer.
tensor make_view(const tensor& owner, dt type, std::vector<std::int64_t> shape,
                 std::vector<std::int64_t> strides, std::int64_t offset);

// The device of a context (what its tensors carry).
dk_device context_device(dk_context* ctx);

}  // namespace dkt
