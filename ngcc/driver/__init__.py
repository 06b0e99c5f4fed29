"""Running foreign code: the driver's frames, the trial runner's contract, ``ngcc-driver``
and its modes, hashing and the timing helpers, and the KAT check."""
