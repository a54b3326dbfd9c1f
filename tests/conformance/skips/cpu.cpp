// The conformance cases the cpu backend does not run, and why. A listed case still appears in
// ctest and is reported SKIPPED with the reason, never as passed.
#include "harness.hpp"

namespace dkc {

const std::vector<skipped_case>& skipped_cases() {
  static const std::vector<skipped_case> cases = {
      // {"<TEST_CASE name>", "<reason>"},
      {"prefill: a workspace smaller than queried is rejected and nothing is written",
       "the cpu backend takes no workspace (it queries 0 bytes)"},
  };
  return cases;
}

}  // namespace dkc
