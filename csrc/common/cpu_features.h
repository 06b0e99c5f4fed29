/* Which instruction-set extensions this CPU (and its OS) offers, by the flag
 * names of Linux /proc/cpuinfo ("aes", "ssse3", "avx2", ...).
 *
 * An `opt` instance library is compiled for extensions that the machine
 * running it may lack; calling it there would die of SIGILL. The registry
 * (ngcc._core.cpu_features) and the C trial driver ask this file first and
 * refuse such a library with the names of the missing features.
 *
 * x86-64: CPUID, plus XGETBV for the vector state the OS must save (AVX and
 * AVX-512 flags count only when it does, as Linux reports them). AArch64 Linux:
 * the kernel's HWCAP bits (getauxval), named as its Features line names them
 * ("asimd", "aes", "pmull", "sha2", ...). Elsewhere no feature is reported.
 */
#ifndef NGCC_CPU_FEATURES_H
#define NGCC_CPU_FEATURES_H

#include <stddef.h>

/* The index-th feature name this file knows, NULL past the last one. */
const char *ngcc_cpu_feature_name(size_t index);

/* 1 if this CPU has the feature; 0 if it lacks it or the name is unknown. */
int ngcc_cpu_has(const char *name);

/* Write the features of names[0..count-1] that this CPU lacks into out as a
 * comma-separated, NUL-terminated list (truncated to out_size); return how many
 * are missing (0: the library may run here). out may be NULL when out_size is 0. */
size_t ngcc_cpu_missing(const char *const *names, size_t count, char *out, size_t out_size);

#endif
