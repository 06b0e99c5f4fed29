/* procinfo.h: pinning, /proc readings, CPU time, descendants. Linux. */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE  /* sched_setaffinity, CPU_SET, sched_getcpu, getloadavg */
#endif
#include "procinfo.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int pin_to_cpu(int cpu, char *error, size_t error_size)
{
    cpu_set_t set;

    if (cpu < 0 || cpu >= CPU_SETSIZE) {
        snprintf(error, error_size, "CPU %d is out of range (0 to %d)", cpu, CPU_SETSIZE - 1);
        return -1;
    }
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        snprintf(error, error_size, "cannot pin the trial process to CPU %d: %s", cpu,
                 strerror(errno));
        return -1;
    }
    if (!still_pinned(cpu)) {
        snprintf(error, error_size, "pinned the trial process to CPU %d, but the kernel "
                 "reports another affinity", cpu);
        return -1;
    }
    return 0;
}

int still_pinned(int cpu)
{
    cpu_set_t set;

    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return 0;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 0;
    return CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set);
}

int current_cpu(void)
{
    return sched_getcpu();
}

uint64_t resident_kib(void)
{
    unsigned long long size, resident;
    long page = sysconf(_SC_PAGESIZE);
    FILE *statm = fopen("/proc/self/statm", "r");
    int fields;

    if (statm == NULL)
        return 0;
    fields = fscanf(statm, "%llu %llu", &size, &resident);
    fclose(statm);
    return fields == 2 && page > 0 ? (uint64_t)resident * (uint64_t)page / 1024 : 0;
}

uint64_t peak_resident_kib(void)
{
    char line[256];
    unsigned long long kib = 0;
    FILE *status = fopen("/proc/self/status", "r");

    if (status == NULL)
        return 0;
    while (fgets(line, sizeof line, status) != NULL)
        if (sscanf(line, "VmHWM: %llu kB", &kib) == 1)
            break;
    fclose(status);
    return (uint64_t)kib;
}

void load_average(double out[3])
{
    if (getloadavg(out, 3) != 3)
        out[0] = out[1] = out[2] = 0.0;
}

uint64_t process_cpu_ns(void)
{
    struct timespec cpu;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) != 0)
        return 0;
    return (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
}

int bind_to_parent(long parent_pid)
{
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        return -1;
    return getppid() == (pid_t)parent_pid ? 0 : -1;  /* it may have died before prctl */
}

/* How many children /proc/self/task/<tid>/children lists. */
static unsigned listed_children(void)
{
    DIR *tasks = opendir("/proc/self/task");
    struct dirent *task;
    unsigned listed = 0;

    if (tasks == NULL)
        return 0;
    while ((task = readdir(tasks)) != NULL) {
        char path[300];
        long pid;
        FILE *children;

        if (task->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/children", task->d_name);
        if ((children = fopen(path, "r")) == NULL)
            continue;
        while (fscanf(children, "%ld", &pid) == 1)
            listed += pid > 0;
        fclose(children);
    }
    closedir(tasks);
    return listed;
}

unsigned reap_descendants(void)
{
    unsigned count = 0, unlisted_waits = 0, listed;

    for (;;) {
        pid_t pid = waitpid(-1, NULL, WNOHANG);
        if (pid > 0) {
            count++;
        } else if (pid < 0 && errno == EINTR) {
            continue;
        } else if (pid < 0) {
            return count;  /* ECHILD: none left */
        } else if ((listed = listed_children()) > 0) {
            return count + listed;  /* alive: the parent's kill of the group ends them */
        } else {
            /* Alive but not listed (no /proc children files): count them as one,
             * unless they end within 0.1 s. */
            struct timespec pause = {0, 1000000L};
            if (++unlisted_waits > 100)
                return count + 1;
            nanosleep(&pause, NULL);
        }
    }
}
