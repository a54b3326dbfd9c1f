// How busy the host is with other work: CPU timings taken while other tasks
// compete for the cores are noise, so every run and record says how busy it was.
#pragma once

namespace dkb {

// The 1-minute load average; -1 when unknown. It lags: it still counts a
// previous run of ours for a minute or so.
double load_average();

// Runnable tasks (threads in state R) outside this process, averaged over
// `samples` looks taken 5 ms apart; -1 when /proc cannot be read.
double other_runnable_tasks(int samples = 3);

}  // namespace dkb
