"""The base of every stage: the version, the exceptions, the name rule, untrusted text,
times, files, typed JSON, number formats and the progress reporter. Imports nothing of ngcc
but itself."""
