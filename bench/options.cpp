#include "options.hpp"

#include <cstdio>
#include <cstdlib>

namespace dkb {
namespace {

void usage(std::FILE* f) {
  std::fputs(
      "usage: dk_bench [options]\n"
      "  --backend cpu|cuda|hip  backend to measure (default: the best device present)\n"
      "  --device N              device id within the backend (default 0)\n"
      "  --quick                 smaller prefill sizes and no V-last decode rows, for a\n"
      "                          small CPU machine\n"
      "  --filter SUBSTR         only workloads whose name contains SUBSTR (repeatable)\n"
      "  --rounds N              passes over all workloads; each takes its share of the\n"
      "                          timed calls, so slow drifts of the machine average out\n"
      "                          (default 3; 24 for --quick on the CPU)\n"
      "  --repeat N              timed calls per workload over all rounds (default 45 quick,\n"
      "                          60 full, 192 for --quick on the CPU; SPEC asks for at\n"
      "                          least 20, the tool accepts 1)\n"
      "  --warmup N              untimed calls per workload per round (default 2 quick, 5 full)\n"
      "  --json FILE             write the records to FILE\n"
      "  --commit ID             commit id recorded (default: from configure time)\n"
      "  --invocation TEXT       the wrapper command that ran dk_bench, recorded as is\n"
      "  --copy-reference        decode on GPUs: also time a graph of R device copies that\n"
      "                          move each call's bytes (memcpy nodes: not a kernel's ceiling)\n"
      "  --stream-calls N        decode on GPUs: at least N calls (copies) in the in-graph\n"
      "                          timing's graph, e.g. a model's layer count (default: as\n"
      "                          many as keep the state cold, at least 2; at most 1024)\n"
      "  --slot-order ORDER      shuffled (default): the state pool's indices are a\n"
      "                          seeded permutation of the slots, as in an engine's pool;\n"
      "                          ascending: sequence i reads and writes slot i\n"
      "  --state-out WHERE       in-place (default): decode writes each new state back to\n"
      "                          the slot it read; other-slots: to B other slots of a pool\n"
      "                          of 2B (state_out_indices, in the same slot order)\n"
      "  --list                  list the workloads and exit\n",
      f);
}

bool parse_int(const char* s, int min, int* out) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (!s[0] || *end || v < min || v > 1000000) return false;
  *out = static_cast<int>(v);
  return true;
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_./=:,+@%") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

int parse_options(int argc, char** argv, const char* default_commit, options* o) {
  o->commit = default_commit;
  for (int i = 0; i < argc; ++i) o->command += (i ? " " : "") + shell_quote(argv[i]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = nullptr;
    auto value = [&] { return i + 1 < argc ? (v = argv[++i]) != nullptr : false; };
    // clang-format off
    if (a == "--quick") o->quick = true;
    else if (a == "--list") o->list = true;
    else if (a == "--copy-reference") o->copy_reference = true;
    else if (a == "-h" || a == "--help") return usage(stdout), -1;
    else if (a == "--backend" && value()) o->backend = v;
    else if (a == "--device" && value() && parse_int(v, 0, &o->device)) {}
    else if (a == "--filter" && value()) o->filters.push_back(v);
    else if (a == "--rounds" && value() && parse_int(v, 1, &o->rounds)) {}
    else if (a == "--repeat" && value() && parse_int(v, 1, &o->repeat)) {}
    else if (a == "--warmup" && value() && parse_int(v, 0, &o->warmup)) {}
    else if (a == "--stream-calls" && value() && parse_int(v, 1, &o->stream_calls) && o->stream_calls <= 1024) {}
    else if (a == "--slot-order" && value() && (std::string(v) == "shuffled" || std::string(v) == "ascending"))
      o->ascending_slots = std::string(v) == "ascending";
    else if (a == "--state-out" && value() && (std::string(v) == "in-place" || std::string(v) == "other-slots"))
      o->other_out_slots = std::string(v) == "other-slots";
    else if (a == "--json" && value()) o->json_path = v;
    else if (a == "--commit" && value()) o->commit = v;
    else if (a == "--invocation" && value()) o->invocation = v;
    // clang-format on
    else {
      std::fprintf(stderr, "dk_bench: bad argument '%s'%s\n", a.c_str(),
                   v ? (std::string(" value '") + v + "'").c_str() : "");
      usage(stderr);
      return 2;
    }
  }
  if (!o->backend.empty() && o->backend != "cpu" && o->backend != "cuda" && o->backend != "hip") {
    std::fprintf(stderr, "dk_bench: --backend must be cpu, cuda or hip\n");
    return 2;
  }
  return 0;
}

}  // namespace dkb
