/* The machine's own counter (the NULL counter source) as csrc/common/timer.c sees it,
 * one fact a line: name, unit, nominal_hz, frequency_hz, overhead_min,
 * overhead_median, cycles_per_tick, resolution. CI cross-builds it with timer.c and
 * runs it under qemu-aarch64 (.ci/aarch64): the AArch64 branch of the counter, whose
 * facts the trial driver's frames do not carry (its rate by cntfrq_el0). */
#include <stdio.h>

#include "timer.h"

int main(void)
{
    counter_calibration calibration;

    if (counter_calibrate(&calibration) != 0) {
        fprintf(stderr, "counter_probe: the %s counter did not advance\n", counter_name());
        return 1;
    }
    printf("name %s\nunit %s\nnominal_hz %.0f\nfrequency_hz %.0f\n", counter_name(),
           counter_unit(), counter_nominal_hz(), calibration.frequency_hz);
    printf("overhead_min %llu\noverhead_median %llu\ncycles_per_tick %.3f\nresolution %llu\n",
           (unsigned long long)calibration.overhead_min,
           (unsigned long long)calibration.overhead_median,
           counter_cycles_per_tick(NULL, calibration.overhead_min),
           (unsigned long long)calibration.resolution);
    return 0;
}
