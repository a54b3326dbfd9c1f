// dk_bench's command line.
#pragma once
#include <string>
#include <vector>

namespace dkb {

struct options {
  std::string backend;  // empty: the best device present
  int device = 0;
  bool quick = false, list = false;
  bool copy_reference = false;  // --copy-reference
  int stream_calls = 0;          // --stream-calls: at least this many calls per in-graph graph
  bool ascending_slots = false;  // --slot-order ascending: sequence i in pool slot i
  bool other_out_slots = false;  // --state-out other-slots: decode writes B other slots
  std::vector<std::string> filters;           // a workload runs when its name contains any of them
  int repeat = -1, warmup = -1, rounds = -1;  // -1: the mode's default
  std::string json_path, commit;
  std::string invocation;  // the wrapper command that ran us, recorded as is
  std::string command;     // argv, shell-quoted
};

// Fills `o`; returns 0 to go on, -1 after --help, else the exit code.
int parse_options(int argc, char** argv, const char* default_commit, options* o);

}  // namespace dkb
