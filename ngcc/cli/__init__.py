"""The command line: ``ngcc`` and ``python -m ngcc``.

``main`` builds the parser from each command module's ``add_<name>`` and turns errors
into exit statuses; ``common`` holds what the subcommands share (exit statuses, the
usage error, the aligned table, shared options) and ``summary`` what ``campaign`` and
``evaluate`` print around a measurement; each other module is one subcommand, or a
family of small ones (``hash``: list, hash; ``host``: info, check).
"""
