"""Measuring: the host fingerprint, the CPU and run-directory locks, the plan rule, the KAT
gate, the timing-leakage test, the one job engine and its executors (serial,
interleaved, Dask), and the trials of unfinished jobs."""
