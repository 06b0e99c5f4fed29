/* What the trial driver asks the kernel about its own process (Linux):
 * CPU pinning, resident set, load average, CPU time, and child processes. */
#ifndef NGCC_PROCINFO_H
#define NGCC_PROCINFO_H

#include <stddef.h>
#include <stdint.h>

/* Pin the process to `cpu` and check that the kernel kept exactly {cpu}.
 * Returns 0, or -1 with a message in error. */
int pin_to_cpu(int cpu, char *error, size_t error_size);

/* 1 if the affinity is still exactly {cpu}, else 0. */
int still_pinned(int cpu);

/* The CPU this thread runs on now, or -1. */
int current_cpu(void);

/* Resident set now (/proc/self/statm) and its peak (VmHWM), in KiB; 0 if unknown. */
uint64_t resident_kib(void);
uint64_t peak_resident_kib(void);

/* The 1, 5 and 15 minute load averages (zeros if unknown). */
void load_average(double out[3]);

/* CPU time of the whole process so far, in ns (0 if unknown). */
uint64_t process_cpu_ns(void);

/* Become the reaper of orphaned descendants (PR_SET_CHILD_SUBREAPER) and die with
 * the parent (PR_SET_PDEATHSIG); returns -1 if the parent is not parent_pid. */
int bind_to_parent(long parent_pid);

/* Reap every child process that has ended (and, as their reaper, every descendant
 * that was reparented to us); returns how many there were, living ones included.
 * The living are not signalled: the sandbox (sandbox.h) forbids it and keeps them in
 * the process group, which the parent kills after the run. */
unsigned reap_descendants(void);

#endif
