// The rest of the public API on the CPU backend: status strings, the thread-local error text,
// backend and device queries, contexts, memory and streams, implementation names.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "rejection.hpp"

namespace dka {
namespace {

std::vector<dk_backend> compiled() {
  int32_t n = 0;
  REQUIRE(dk_backends_compiled(nullptr, 0, &n) == DK_STATUS_SUCCESS);
  std::vector<dk_backend> list(std::size_t(n), dk_backend(0));
  int32_t again = 0;
  REQUIRE(dk_backends_compiled(list.data(), n, &again) == DK_STATUS_SUCCESS);
  REQUIRE(again == n);
  return list;
}

bool terminated(const char* s, std::size_t capacity) { return std::memchr(s, '\0', capacity) != nullptr; }

TEST_CASE("dk_status_string names every status") {
  const std::pair<dk_status, const char*> all[] = {
      {DK_STATUS_SUCCESS, "DK_STATUS_SUCCESS"},
      {DK_STATUS_INVALID_ARGUMENT, "DK_STATUS_INVALID_ARGUMENT"},
      {DK_STATUS_UNSUPPORTED, "DK_STATUS_UNSUPPORTED"},
      {DK_STATUS_NO_DEVICE, "DK_STATUS_NO_DEVICE"},
      {DK_STATUS_OUT_OF_MEMORY, "DK_STATUS_OUT_OF_MEMORY"},
      {DK_STATUS_DEVICE_ERROR, "DK_STATUS_DEVICE_ERROR"},
      {DK_STATUS_INSUFFICIENT_WORKSPACE, "DK_STATUS_INSUFFICIENT_WORKSPACE"},
      {DK_STATUS_INTERNAL, "DK_STATUS_INTERNAL"},
  };
  for (auto [status, name] : all) CHECK(std::string(dk_status_string(status)) == name);
  // Values outside the enum are UB to form in C++; test_c99.c passes them from C.
}

TEST_CASE("dk_version_string matches the header") {
  const std::string expected = std::to_string(DK_VERSION_MAJOR) + "." + std::to_string(DK_VERSION_MINOR) + "." +
                               std::to_string(DK_VERSION_PATCH);
  CHECK(std::string(dk_version_string()) == expected);
}

TEST_CASE("dk_last_error is set by a failure and cleared by a success") {
  dk_context* c = nullptr;
  CHECK(dk_context_create(DK_BACKEND_CPU, -1, &c) == DK_STATUS_INVALID_ARGUMENT);
  CHECK(c == nullptr);
  CHECK(names(dk_last_error(), "device_id"));
  int32_t n = 0;
  CHECK(dk_device_count(DK_BACKEND_CPU, &n) == DK_STATUS_SUCCESS);
  CHECK(std::string(dk_last_error()).empty());
}

TEST_CASE("dk_last_error is thread-local") {
  dk_context* ctx = cpu_ctx();
  CHECK(dk_malloc(ctx, 16, nullptr) == DK_STATUS_INVALID_ARGUMENT);
  const std::string mine = dk_last_error();
  REQUIRE(names(mine, "out_ptr"));

  std::string theirs_before = "unset", theirs_after, theirs_after_success;
  std::thread other([&] {
    theirs_before = dk_last_error();  // a fresh thread has no error
    dk_stream_synchronize(nullptr, nullptr);
    theirs_after = dk_last_error();
    int32_t n = 0;
    dk_device_count(DK_BACKEND_CPU, &n);
    theirs_after_success = dk_last_error();
  });
  other.join();
  CHECK(theirs_before.empty());
  CHECK(names(theirs_after, "context"));
  CHECK(theirs_after_success.empty());
  CHECK(std::string(dk_last_error()) == mine);  // untouched by the other thread's calls
}

TEST_CASE("backends: the list is consistent and the CPU is last") {
  const std::vector<dk_backend> list = compiled();
  REQUIRE(!list.empty());
  CHECK(list.back() == DK_BACKEND_CPU);  // best first: GPU backends before cpu
  for (dk_backend b : list) {
    CAPTURE(int(b));
    CHECK(std::count(list.begin(), list.end(), b) == 1);
    int32_t n = -1;
    CHECK(dk_device_count(b, &n) == DK_STATUS_SUCCESS);
    CHECK(n >= 0);
  }
  int32_t n = 0;
  CHECK(dk_device_count(DK_BACKEND_CPU, &n) == DK_STATUS_SUCCESS);
  CHECK(n >= 1);

  // Capacity smaller than the count: writes only `capacity` entries, still reports the count.
  dk_backend one[2] = {dk_backend(0), dk_backend(0)};  // 0: no backend
  int32_t count = 0;
  CHECK(dk_backends_compiled(one, 1, &count) == DK_STATUS_SUCCESS);
  CHECK(count == int32_t(list.size()));
  CHECK(one[0] == list[0]);
  CHECK(one[1] == dk_backend(0));
  CHECK(dk_backends_compiled(one, -1, &count) == DK_STATUS_INVALID_ARGUMENT);
  CHECK(dk_backends_compiled(one, 1, nullptr) == DK_STATUS_INVALID_ARGUMENT);
  CHECK(names(dk_last_error(), "out_count"));
  CHECK(dk_backends_compiled(nullptr, 1, &count) == DK_STATUS_INVALID_ARGUMENT);
  CHECK(names(dk_last_error(), "out_backends"));
}

TEST_CASE("backends: names") {
  CHECK(std::string(dk_backend_name(DK_BACKEND_CPU)) == "cpu");
  CHECK(std::string(dk_backend_name(DK_BACKEND_CUDA)) == "cuda");
  CHECK(std::string(dk_backend_name(DK_BACKEND_HIP)) == "hip");
  CHECK(std::string(dk_backend_name(dk_backend(0))) == "unknown");
}

TEST_CASE("backends: one that is not compiled answers UNSUPPORTED") {
  const std::vector<dk_backend> list = compiled();
  std::vector<dk_backend> absent = {dk_backend(0)};  // other values: test_c99.c (C enums are ints)
  for (dk_backend b : {DK_BACKEND_CUDA, DK_BACKEND_HIP})
    if (std::find(list.begin(), list.end(), b) == list.end()) absent.push_back(b);
  for (dk_backend b : absent) {
    CAPTURE(int(b));
    dk_context* c = reinterpret_cast<dk_context*>(&absent);  // must be overwritten with NULL
    CHECK(dk_context_create(b, 0, &c) == DK_STATUS_UNSUPPORTED);
    CHECK(c == nullptr);
    CHECK(names(dk_last_error(), dk_backend_name(b)));
    int32_t n = 0;
    CHECK(dk_device_count(b, &n) == DK_STATUS_UNSUPPORTED);
    CHECK(!std::string(dk_last_error()).empty());
  }
}

TEST_CASE("contexts: creation errors") {
  dk_context* c = nullptr;
  CHECK(dk_context_create(DK_BACKEND_CPU, 0, nullptr) == DK_STATUS_INVALID_ARGUMENT);
  CHECK(names(dk_last_error(), "out_context"));
  int32_t n = 0;
  REQUIRE(dk_device_count(DK_BACKEND_CPU, &n) == DK_STATUS_SUCCESS);
  CHECK(dk_context_create(DK_BACKEND_CPU, n, &c) == DK_STATUS_NO_DEVICE);  // one past the last
  CHECK(c == nullptr);
  CHECK(!std::string(dk_last_error()).empty());
  CHECK(dk_context_destroy(nullptr) == DK_STATUS_SUCCESS);  // like free(NULL)
  CHECK(dk_context_device_info(nullptr, nullptr) == DK_STATUS_INVALID_ARGUMENT);
  CHECK(dk_context_device_info(cpu_ctx(), nullptr) == DK_STATUS_INVALID_ARGUMENT);
  CHECK(names(dk_last_error(), "out_info"));
}

TEST_CASE("contexts: device info of the CPU context") {
  dk_device_info info{};
  REQUIRE(dk_context_device_info(cpu_ctx(), &info) == DK_STATUS_SUCCESS);
  CHECK(info.backend == DK_BACKEND_CPU);
  CHECK(info.device_id == 0);
  CHECK(info.device.device_type == DK_DEVICE_CPU);
  CHECK(info.device.device_id == 0);
  for (auto [field, capacity] : {std::pair<const char*, std::size_t>{info.vendor, sizeof info.vendor},
                                 {info.name, sizeof info.name},
                                 {info.arch, sizeof info.arch},
                                 {info.compiled_archs, sizeof info.compiled_archs}}) {
    REQUIRE(terminated(field, capacity));
    CHECK(std::strlen(field) > 0);
  }
  INFO("arch " << info.arch << ", compiled archs " << info.compiled_archs);
  CHECK(std::string(info.compiled_archs).find(info.arch) != std::string::npos);
  CHECK(info.compute_units >= 1);
  CHECK(info.memory_bytes > 0);
  CHECK(info.peak_bandwidth_gbps >= 0.0);
}

TEST_CASE("contexts: options") {
  int64_t value = -1;
  CHECK(dk_context_get_option(cpu_ctx(), DK_OPTION_PROGRAMMATIC_LAUNCH, &value) == DK_STATUS_SUCCESS);
  CHECK(value == 0);  // the default
  CHECK(dk_context_set_option(cpu_ctx(), DK_OPTION_PROGRAMMATIC_LAUNCH, 0) == DK_STATUS_SUCCESS);
  // The CPU launches no kernels: programmatic launch is refused and stays off.
  CHECK(dk_context_set_option(cpu_ctx(), DK_OPTION_PROGRAMMATIC_LAUNCH, 1) == DK_STATUS_UNSUPPORTED);
  CHECK(names(dk_last_error(), "programmatic"));
  CHECK(dk_context_get_option(cpu_ctx(), DK_OPTION_PROGRAMMATIC_LAUNCH, &value) == DK_STATUS_SUCCESS);
  CHECK(value == 0);
  CHECK(dk_context_set_option(cpu_ctx(), DK_OPTION_PROGRAMMATIC_LAUNCH, 2) ==
        DK_STATUS_INVALID_ARGUMENT);
  CHECK(names(dk_last_error(), "0 or 1"));
  CHECK(dk_context_set_option(cpu_ctx(), 0, 0) == DK_STATUS_INVALID_ARGUMENT);
  CHECK(names(dk_last_error(), "unknown option"));
  CHECK(dk_context_get_option(cpu_ctx(), 7, &value) == DK_STATUS_INVALID_ARGUMENT);
  CHECK(dk_context_set_option(nullptr, DK_OPTION_PROGRAMMATIC_LAUNCH, 0) ==
        DK_STATUS_INVALID_ARGUMENT);
  CHECK(dk_context_get_option(cpu_ctx(), DK_OPTION_PROGRAMMATIC_LAUNCH, nullptr) ==
        DK_STATUS_INVALID_ARGUMENT);
  CHECK(names(dk_last_error(), "out_value"));
}

TEST_CASE("contexts: create_best gives the first compiled backend with a device") {
  dk_context* c = nullptr;
  REQUIRE(dk_context_create_best(&c) == DK_STATUS_SUCCESS);
  dk_device_info info{};
  CHECK(dk_context_device_info(c, &info) == DK_STATUS_SUCCESS);
  dk_backend expected = DK_BACKEND_CPU;
  for (dk_backend b : compiled()) {
    int32_t n = 0;
    if (dk_device_count(b, &n) == DK_STATUS_SUCCESS && n > 0) {
      expected = b;
      break;
    }
  }
  CHECK(info.backend == expected);
  CHECK(dk_context_destroy(c) == DK_STATUS_SUCCESS);
  CHECK(dk_context_create_best(nullptr) == DK_STATUS_INVALID_ARGUMENT);
}

TEST_CASE("memory: alloc, copy, set and free") {
  dk_context* ctx = cpu_ctx();
  constexpr std::size_t n = 1000;
  void* a = nullptr;
  void* b = nullptr;
  REQUIRE(dk_malloc(ctx, n, &a) == DK_STATUS_SUCCESS);
  REQUIRE(dk_malloc(ctx, n, &b) == DK_STATUS_SUCCESS);
  CHECK(reinterpret_cast<std::uintptr_t>(a) % 256 == 0);
  CHECK(reinterpret_cast<std::uintptr_t>(b) % 256 == 0);
  std::vector<unsigned char> src(n), dst(n, 0);
  for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
  CHECK(dk_memcpy(ctx, a, src.data(), n, DK_COPY_HOST_TO_DEVICE, nullptr) == DK_STATUS_SUCCESS);
  CHECK(dk_memcpy(ctx, b, a, n, DK_COPY_DEVICE_TO_DEVICE, nullptr) == DK_STATUS_SUCCESS);
  CHECK(dk_memset(ctx, b, 0x5a, 10, nullptr) == DK_STATUS_SUCCESS);
  CHECK(dk_memcpy(ctx, dst.data(), b, n, DK_COPY_DEVICE_TO_HOST, nullptr) == DK_STATUS_SUCCESS);
  CHECK(dk_context_synchronize(ctx) == DK_STATUS_SUCCESS);
  for (std::size_t i = 0; i < n; ++i) {
    if (dst[i] != (i < 10 ? 0x5a : src[i])) {
      FAIL_CHECK("byte " << i << " differs");
      break;
    }
  }
  std::vector<unsigned char> h(n, 0);
  CHECK(dk_memcpy(ctx, h.data(), src.data(), n, DK_COPY_HOST_TO_HOST, nullptr) == DK_STATUS_SUCCESS);
  CHECK(h == src);
  CHECK(dk_memcpy(ctx, a, src.data(), 0, DK_COPY_HOST_TO_DEVICE, nullptr) == DK_STATUS_SUCCESS);
  CHECK(dk_memcpy(ctx, nullptr, src.data(), n, DK_COPY_HOST_TO_DEVICE, nullptr) == DK_STATUS_INVALID_ARGUMENT);
  CHECK(names(dk_last_error(), "dst"));
  CHECK(dk_memcpy(ctx, a, nullptr, n, DK_COPY_HOST_TO_DEVICE, nullptr) == DK_STATUS_INVALID_ARGUMENT);
  CHECK(names(dk_last_error(), "src"));
  CHECK(dk_memset(ctx, nullptr, 0, n, nullptr) == DK_STATUS_INVALID_ARGUMENT);
  CHECK(dk_malloc(nullptr, n, &a) == DK_STATUS_INVALID_ARGUMENT);
  CHECK(names(dk_last_error(), "context"));
  CHECK(dk_free(ctx, a) == DK_STATUS_SUCCESS);
  CHECK(dk_free(ctx, b) == DK_STATUS_SUCCESS);
  CHECK(dk_free(ctx, nullptr) == DK_STATUS_SUCCESS);
}

TEST_CASE("streams: create, synchronize, destroy") {
  dk_context* ctx = cpu_ctx();
  void* s = nullptr;
  REQUIRE(dk_stream_create(ctx, &s) == DK_STATUS_SUCCESS);
  CHECK(dk_stream_synchronize(ctx, s) == DK_STATUS_SUCCESS);
  CHECK(dk_stream_synchronize(ctx, nullptr) == DK_STATUS_SUCCESS);  // the default stream
  CHECK(dk_stream_destroy(ctx, s) == DK_STATUS_SUCCESS);
  CHECK(dk_stream_destroy(ctx, nullptr) == DK_STATUS_SUCCESS);
  CHECK(dk_stream_create(ctx, nullptr) == DK_STATUS_INVALID_ARGUMENT);
  CHECK(names(dk_last_error(), "out_stream"));
  CHECK(dk_stream_create(nullptr, &s) == DK_STATUS_INVALID_ARGUMENT);
}

TEST_CASE("queries: implementation names are non-empty and name the backend") {
  for (dk_gate_kind gate : {DK_GATE_NONE, DK_GATE_SCALAR, DK_GATE_PER_KEY})
    for (dt io : {dt::f32, dt::bf16, dt::f16})
      for (dt state : {dt::f32, dt::bf16, dt::f16}) {
        decode_spec d = valid_decode();
        d.rule.gate = gate;
        d.types.io = io;
        d.types.state = state;
        CAPTURE(d.describe());
        decode_problem dp(cpu_ctx(), d);
        const dk_decode_args da = dp.args();
        const char* impl = nullptr;
        REQUIRE(dk_decode_query(cpu_ctx(), &dp.config, &da, &impl) == DK_STATUS_SUCCESS);
        REQUIRE(impl != nullptr);
        CHECK(std::string(impl).rfind("cpu", 0) == 0);

        prefill_spec p = valid_prefill();
        p.rule.gate = gate;
        p.types.io = io;
        p.types.state = state;
        CAPTURE(p.describe());
        prefill_problem pp(cpu_ctx(), p);
        const dk_prefill_args pa = pp.args();
        impl = nullptr;
        REQUIRE(dk_prefill_query(cpu_ctx(), &pp.config, &pa, &impl) == DK_STATUS_SUCCESS);
        REQUIRE(impl != nullptr);
        CHECK(std::string(impl).rfind("cpu", 0) == 0);
        CHECK(std::string(dk_last_error()).empty());
      }
}

}  // namespace
}  // namespace dka
