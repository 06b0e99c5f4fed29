"""Statistics: of per-call counts and trials (the leading figure, the stop rule, the
flags), groupings and ratios, pandas tables, the tests of a comparison, and a record
checked again against its raw samples. Never loads code that runs foreign libraries."""
