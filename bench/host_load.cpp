#include "host_load.hpp"

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace dkb {

double load_average() {
  double load = -1;
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = -1;
    std::fclose(f);
  }
  return load;
}

namespace {

bool all_digits(const char* s) {
  if (!*s) return false;
  for (; *s; ++s)
    if (*s < '0' || *s > '9') return false;
  return true;
}

// The state letter of /proc/<pid>/task/<tid>/stat: after the last ')'.
char task_state(const std::string& stat_path) {
  char buf[512];
  std::FILE* f = std::fopen(stat_path.c_str(), "r");
  if (!f) return 0;
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  const char* paren = std::strrchr(buf, ')');
  return paren && paren[1] == ' ' ? paren[2] : 0;
}

// One sample: threads in state R of every process but ours; -1 on failure.
int count_other_runnable() {
  DIR* proc = opendir("/proc");
  if (!proc) return -1;
  const long self = static_cast<long>(getpid());
  int running = 0;
  while (dirent* p = readdir(proc)) {
    if (!all_digits(p->d_name) || std::strtol(p->d_name, nullptr, 10) == self) continue;
    const std::string task_dir = std::string("/proc/") + p->d_name + "/task";
    DIR* tasks = opendir(task_dir.c_str());
    if (!tasks) continue;  // the process just exited
    while (dirent* t = readdir(tasks))
      if (all_digits(t->d_name) && task_state(task_dir + "/" + t->d_name + "/stat") == 'R')
        ++running;
    closedir(tasks);
  }
  closedir(proc);
  return running;
}

}  // namespace

double other_runnable_tasks(int samples) {
  samples = samples < 1 ? 1 : samples;
  int total = 0;
  for (int i = 0; i < samples; ++i) {
    if (i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const int n = count_other_runnable();
    if (n < 0) return -1;
    total += n;
  }
  return double(total) / samples;
}

}  // namespace dkb
