"""The command line: ``ngcc`` and ``python -m ngcc``."""
