// The conformance suite's main: listing never touches the device (ctest discovery runs on
// machines without it); running without the device, or running a case this backend skips,
// prints one "SKIP: ..." line and exits 77, which ctest reports as skipped (SKIP_RETURN_CODE).
#define DOCTEST_CONFIG_IMPLEMENT
#include <cstdio>
#include <cstring>
#include <string>

#include "harness.hpp"

namespace {

constexpr int kSkipped = 77;

// doctest options that only list or describe tests ("--dt-" prefixed forms included).
bool lists_only(int argc, char** argv) {
  static const char* const kListing[] = {"-ltc", "--list-test-cases", "-lts", "--list-test-suites",
                                         "-lr", "--list-reporters", "-c", "--count", "-h", "--help",
                                         "-?", "-v", "--version"};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--dt-", 0) == 0) arg = "--" + arg.substr(5);
    if (arg.rfind("-dt-", 0) == 0) arg = "-" + arg.substr(4);
    const std::size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    for (const char* l : kListing)
      if (name == l && value != "false" && value != "0" && value != "no") return true;
  }
  return false;
}

// The value of --test-case= / -tc= when exactly one case is selected, with doctest's "\,"
// escapes undone (ctest runs one case per test).
std::string selected_case(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    for (const char* prefix : {"--test-case=", "-tc=", "--dt-test-case=", "-dt-tc="})
      if (arg.rfind(prefix, 0) == 0) {
        std::string value = arg.substr(std::strlen(prefix)), out;
        for (std::size_t c = 0; c < value.size(); ++c) {
          if (value[c] == '\\' && c + 1 < value.size() && value[c + 1] == ',') continue;
          out += value[c];
        }
        return out;
      }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  const char* backend = dk_backend_name(dkc::kBackend);
  if (lists_only(argc, argv)) return context.run();

  const std::string selected = selected_case(argc, argv);
  for (const dkc::skipped_case& s : dkc::skipped_cases()) {
    if (selected == s.test_case) {
      std::printf("SKIP: %s does not run \"%s\": %s\n", backend, s.test_case, s.reason);
      return kSkipped;
    }
    // doctest splits filters at commas: escape them so the whole name is excluded.
    std::string name;
    for (const char* ch = s.test_case; *ch; ++ch) {
      if (*ch == ',') name += '\\';
      name += *ch;
    }
    context.addFilter("test-case-exclude", name.c_str());
  }

  // Find the device: no device (or a backend that is not compiled in) is a skip, any other
  // failure is a failure.
  int32_t count = 0;
  dk_context* c = nullptr;
  dk_status status = dk_device_count(dkc::kBackend, &count);
  std::string why = dk_last_error();
  if (status == DK_STATUS_SUCCESS) {
    status = dk_context_create(dkc::kBackend, 0, &c);
    why = dk_last_error();
    if (count == 0 && status == DK_STATUS_SUCCESS) {
      std::printf("FAIL: dk_device_count(%s) reports 0 devices but dk_context_create succeeded\n", backend);
      dk_context_destroy(c);
      return 1;
    }
    if (count == 0 && why.empty()) why = "dk_device_count reports 0 devices";
  }
  // UNSUPPORTED with devices present (no code for this arch in the build) is a failure.
  if (status == DK_STATUS_NO_DEVICE || (status == DK_STATUS_UNSUPPORTED && count == 0)) {
    std::printf("SKIP: no %s device: %s\n", backend, why.c_str());
    return kSkipped;
  }
  if (status != DK_STATUS_SUCCESS) {
    std::printf("FAIL: no usable %s device: %s: %s\n", backend, dk_status_string(status), why.c_str());
    return 1;
  }
  dk_device_info info{};
  if (dk_context_device_info(c, &info) == DK_STATUS_SUCCESS)
    std::printf("[conformance] backend %s, device \"%s\", arch %s, compiled archs %s\n", backend, info.name,
                info.arch, info.compiled_archs);
  dkc::set_ctx(c);
  const int result = context.run();
  dkc::set_ctx(nullptr);
  dk_context_destroy(c);
  return result;
}
