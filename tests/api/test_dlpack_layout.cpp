// dk_tensor / dk_device / dk_dtype are laid out exactly like DLPack's DLTensor / DLDevice /
// DLDataType (Debian's libdlpack-dev), so an engine can pass a DLTensor* without copying.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <cstddef>
#include <cstring>
#include <vector>

#include <dlpack/dlpack.h>

#include "rejection.hpp"

namespace {

#define DK_SAME_FIELD(dk_type, dk_field, dl_type, dl_field)                                      \
  do {                                                                                           \
    INFO(#dk_type "." #dk_field " vs " #dl_type "." #dl_field);                                  \
    CHECK(offsetof(dk_type, dk_field) == offsetof(dl_type, dl_field));                           \
    CHECK(sizeof(static_cast<dk_type*>(nullptr)->dk_field) == sizeof(static_cast<dl_type*>(nullptr)->dl_field)); \
  } while (0)

TEST_CASE("dk_device matches DLDevice") {
  CHECK(sizeof(dk_device) == sizeof(DLDevice));
  CHECK(alignof(dk_device) == alignof(DLDevice));
  DK_SAME_FIELD(dk_device, device_type, DLDevice, device_type);
  DK_SAME_FIELD(dk_device, device_id, DLDevice, device_id);
}

TEST_CASE("dk_dtype matches DLDataType") {
  CHECK(sizeof(dk_dtype) == sizeof(DLDataType));
  CHECK(alignof(dk_dtype) == alignof(DLDataType));
  DK_SAME_FIELD(dk_dtype, code, DLDataType, code);
  DK_SAME_FIELD(dk_dtype, bits, DLDataType, bits);
  DK_SAME_FIELD(dk_dtype, lanes, DLDataType, lanes);
}

TEST_CASE("dk_tensor matches DLTensor") {
  CHECK(sizeof(dk_tensor) == sizeof(DLTensor));
  CHECK(alignof(dk_tensor) == alignof(DLTensor));
  DK_SAME_FIELD(dk_tensor, data, DLTensor, data);
  DK_SAME_FIELD(dk_tensor, device, DLTensor, device);
  DK_SAME_FIELD(dk_tensor, ndim, DLTensor, ndim);
  DK_SAME_FIELD(dk_tensor, dtype, DLTensor, dtype);
  DK_SAME_FIELD(dk_tensor, shape, DLTensor, shape);
  DK_SAME_FIELD(dk_tensor, strides, DLTensor, strides);
  DK_SAME_FIELD(dk_tensor, byte_offset, DLTensor, byte_offset);
}

TEST_CASE("enum values match DLPack") {
  CHECK(int(DK_DEVICE_CPU) == int(kDLCPU));
  CHECK(int(DK_DEVICE_CUDA) == int(kDLCUDA));
  CHECK(int(DK_DEVICE_ROCM) == int(kDLROCM));
  CHECK(int(DK_DTYPE_CODE_INT) == int(kDLInt));
  CHECK(int(DK_DTYPE_CODE_UINT) == int(kDLUInt));
  CHECK(int(DK_DTYPE_CODE_FLOAT) == int(kDLFloat));
  CHECK(int(DK_DTYPE_CODE_BFLOAT) == int(kDLBfloat));
}

// A DLTensor with the same view as `t`, built from DLPack's own types.
DLTensor to_dlpack(const dk_tensor& t) {
  DLTensor d;
  d.data = t.data;
  d.device.device_type = static_cast<DLDeviceType>(t.device.device_type);
  d.device.device_id = t.device.device_id;
  d.ndim = t.ndim;
  d.dtype.code = t.dtype.code;
  d.dtype.bits = t.dtype.bits;
  d.dtype.lanes = t.dtype.lanes;
  d.shape = t.shape;
  d.strides = t.strides;
  d.byte_offset = t.byte_offset;
  return d;
}

TEST_CASE("a DLTensor* passed as dk_tensor* drives a decode") {
  using namespace dkt;
  decode_spec spec = dka::valid_decode();
  spec.mem.qkv = qkv_layout::fused;  // strides and offsets, not just compact tensors
  spec.mem.byte_offset = true;
  spec.types.io = dt::bf16;
  decode_problem p(dka::cpu_ctx(), spec);
  const std::vector<buffer*> buffers = p.buffers();
  std::vector<std::vector<unsigned char>> before;
  for (const buffer* b : buffers) before.push_back(b->host);

  // Through dk_tensor.
  dk_decode_args a = p.args();
  p.upload();
  REQUIRE(dk_decode_run(dka::cpu_ctx(), &p.config, &a, nullptr) == DK_STATUS_SUCCESS);
  p.download();
  std::vector<std::vector<unsigned char>> via_dk;
  for (const buffer* b : buffers) via_dk.push_back(b->host);

  // Through DLTensor, from the same state.
  for (std::size_t i = 0; i < buffers.size(); ++i) buffers[i]->host = before[i];
  p.upload();
  std::vector<DLTensor> dl;
  dl.reserve(16);
  auto pass = [&](const dk_tensor* t) -> const dk_tensor* {
    if (!t) return nullptr;
    dl.push_back(to_dlpack(*t));
    return reinterpret_cast<const dk_tensor*>(&dl.back());
  };
  dk_decode_args b{};
  b.q = pass(a.q);
  b.k = pass(a.k);
  b.v = pass(a.v);
  b.g = pass(a.g);
  b.beta = pass(a.beta);
  b.A_log = pass(a.A_log);
  b.dt_bias = pass(a.dt_bias);
  b.state_pool = pass(a.state_pool);
  b.state_indices = pass(a.state_indices);
  b.state_out_indices = pass(a.state_out_indices);
  b.state_token_indices = pass(a.state_token_indices);
  b.out = pass(a.out);
  const char* impl = nullptr;
  REQUIRE(dk_decode_query(dka::cpu_ctx(), &p.config, &b, &impl) == DK_STATUS_SUCCESS);
  REQUIRE(dk_decode_run(dka::cpu_ctx(), &p.config, &b, nullptr) == DK_STATUS_SUCCESS);
  p.download();
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    CAPTURE(i);
    CHECK(buffers[i]->host == via_dk[i]);
  }
  CHECK(via_dk != before);  // the call did write something
}

}  // namespace
