/* The driver's modes: what a request's first word may be, each one file.
 *
 * A mode is a name, a check of the request (the options it needs, in range: run
 * before the library is loaded, its text an ERROR of code DRIVER_ERR_REQUEST) and a
 * run, which makes the calls and sends the mode's frames (frames.h); driver.c sends
 * END after it, and a failure inside it ends the run with ERROR (channel.h). By the
 * time either is called the request has been parsed (request.h), the process is
 * isolated when asked to, the fault handler, the memory limit and the seccomp filter
 * are in place, and the CPU has the features the library needs.
 *
 * To add a mode NAME: write mode_NAME.c (setup.py compiles every .c of this folder)
 * that ends with
 *
 *     const driver_mode mode_NAME = {"NAME", check_NAME, run_NAME, MODE_NO_PROCESSES};
 *
 * and add X(NAME) to DRIVER_MODES below: that one row declares it and puts it in
 * driver.c's table. Its options go in request.h's struct and parse_request. Any new
 * frame goes in frames.h and ngcc/driver/protocol.py (tests/test_driver.py holds the
 * two together).
 */
#ifndef NGCC_MODES_H
#define NGCC_MODES_H

#include <stddef.h>

#include "request.h"

typedef struct {
    const char *name;
    /* 0 when the request holds what the mode needs, else -1 with why in error;
     * NULL: the common options (request.h) are all it needs. */
    int (*check)(const request *req, char *error, size_t size);
    void (*run)(const request *req);
    /* MODE_NO_PROCESSES: no process may start once the mode is known (the library
     * included: sandbox_forbid_processes in sandbox.h, installed before the mode
     * runs); MODE_FORKS_ITSELF: the mode forks children of its own (ct, one per
     * length), so the limit is the mode's to install, in each child before the
     * library is loaded there: in no mode may the library start a process. */
    int may_fork;
} driver_mode;

enum { MODE_NO_PROCESSES = 0, MODE_FORKS_ITSELF = 1 };

/* Every mode, one row each. */
#define DRIVER_MODES(X) X(hash) X(cold) X(trial) X(kat) X(probe) X(leak) X(ct)

#define DRIVER_MODE_DECLARE(name) extern const driver_mode mode_##name;
DRIVER_MODES(DRIVER_MODE_DECLARE)
#undef DRIVER_MODE_DECLARE

#endif
