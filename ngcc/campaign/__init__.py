"""The campaign: its settings, its run directory, and the phases that take it from the
host to the KAT gate, the calibration, the leak tests, the jobs handed to an executor,
and the records."""
