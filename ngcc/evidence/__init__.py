"""Evidence: what a run directory holds and how it is read and written: the typed model
(schema 2), one trial's facts, old runs (schema 1), the store of its files, what ``ngcc
evaluate`` made of an archive, and the run object (:class:`~ngcc.Run`)."""
