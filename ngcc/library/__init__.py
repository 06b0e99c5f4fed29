"""Libraries: the Round 1 candidates, what an instance is and its label, KAT file names
and parsing, ELF sizes, the compiler and building a submission folder (``_core`` is
this stage's compiled part)."""
