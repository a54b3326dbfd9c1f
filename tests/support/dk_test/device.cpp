#include "dk_test/device.hpp"

#include <algorithm>

namespace dkt {

dk_error::dk_error(dk_status s, const std::string& what) : std::runtime_error(what), status(s) {}

void check(dk_status s, const char* what) {
  if (s != DK_STATUS_SUCCESS)
    throw dk_error(s, std::string(what) + " failed: " + dk_status_string(s) + ": " + dk_last_error());
}

buffer::buffer(dk_context* c, std::size_t bytes) : ctx(c), host(std::max<std::size_t>(bytes, 256), 0) {
  check(dk_malloc(ctx, host.size(), &dev), "dk_malloc");
}

buffer::~buffer() {
  if (dev != nullptr) dk_free(ctx, dev);
}

void buffer::upload(void* stream) {
  check(dk_memcpy(ctx, dev, host.data(), host.size(), DK_COPY_HOST_TO_DEVICE, stream), "dk_memcpy(H2D)");
  check(dk_stream_synchronize(ctx, stream), "dk_stream_synchronize");
}

void buffer::download(void* stream) {
  check(dk_memcpy(ctx, host.data(), dev, host.size(), DK_COPY_DEVICE_TO_HOST, stream), "dk_memcpy(D2H)");
  check(dk_stream_synchronize(ctx, stream), "dk_stream_synchronize");
}

std::int64_t tensor::numel() const {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

void tensor::fill(const std::vector<double>& dense) {
  if (std::int64_t(dense.size()) != numel()) throw std::logic_error("tensor::fill: size mismatch");
  for_each([&](std::int64_t lin, std::size_t byte) { store(type, buf->host.data() + byte, dense[lin]); });
}

std::vector<double> tensor::values() const {
  std::vector<double> out(static_cast<std::size_t>(numel()));
  for_each([&](std::int64_t lin, std::size_t byte) { out[lin] = load(type, buf->host.data() + byte); });
  return out;
}

std::size_t tensor::byte_of(std::int64_t linear) const {
  std::int64_t off = offset, rest = linear;
  for (std::size_t d = shape.size(); d-- > 0;) {
    off += (rest % shape[d]) * strides[d];
    rest /= shape[d];
  }
  return std::size_t(off) * elem_size();
}

double tensor::at(std::int64_t linear) const { return load(type, buf->host.data() + byte_of(linear)); }

void tensor::set_at(std::int64_t linear, double x) { store(type, buf->host.data() + byte_of(linear), x); }

void tensor::poison() {
  for_each([&](std::int64_t, std::size_t byte) { store_nan(type, buf->host.data() + byte); });
}

std::size_t tensor::first_byte() const { return std::size_t(offset) * elem_size(); }

std::size_t tensor::end_byte() const {
  std::int64_t last = offset;
  for (std::size_t d = 0; d < shape.size(); ++d) last += (shape[d] - 1) * strides[d];
  return std::size_t(last + 1) * elem_size();
}

const dk_tensor* tensor::dl() {
  desc.device = device;
  desc.ndim = std::int32_t(shape.size());
  desc.dtype = to_dk(type);
  desc.shape = shape.data();
  desc.strides = strides.data();
  const std::size_t byte = std::size_t(offset) * elem_size();
  if (use_byte_offset) {
    desc.data = buf->dev;
    desc.byte_offset = byte;
  } else {
    desc.data = static_cast<char*>(buf->dev) + byte;  // offsetting, never dereferencing
    desc.byte_offset = 0;
  }
  return &desc;
}

std::vector<std::int64_t> compact_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

tensor make_strided(dk_context* ctx, dk_device device, dt type, std::vector<std::int64_t> shape,
                    std::vector<std::int64_t> strides, std::int64_t offset) {
  tensor t;
  t.type = type;
  t.device = device;
  t.shape = std::move(shape);
  t.strides = std::move(strides);
  t.offset = offset;
  std::size_t bytes = 0;
  if (t.numel() > 0) bytes = t.end_byte();
  t.buf = std::make_shared<buffer>(ctx, bytes);
  return t;
}

tensor make_tensor(dk_context* ctx, dk_device device, dt type, std::vector<std::int64_t> shape) {
  std::vector<std::int64_t> strides = compact_strides(shape);
  return make_strided(ctx, device, type, std::move(shape), std::move(strides), 0);
}

tensor make_view(const tensor& owner, dt type, std::vector<std::int64_t> shape,
                 std::vector<std::int64_t> strides, std::int64_t offset) {
  tensor t;
  t.buf = owner.buf;
  t.type = type;
  t.device = owner.device;
  t.shape = std::move(shape);
  t.strides = std::move(strides);
  t.offset = offset;
  if (t.numel() > 0 && t.end_byte() > t.buf->host.size()) throw std::logic_error("make_view: out of bounds");
  return t;
}

dk_device context_device(dk_context* ctx) {
  dk_device_info info{};
  check(dk_context_device_info(ctx, &info), "dk_context_device_info");
  return info.device;
}

}  // namespace dkt
