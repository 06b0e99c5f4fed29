"""The exceptions ngcc raises. Every one derives from :class:`NgccError`."""

from __future__ import annotations


class NgccError(Exception):
    """Base class of every error ngcc raises on purpose."""


class UnknownInstanceError(NgccError, LookupError):
    """An instance name that is neither built in nor a library path."""

    def __init__(self, name: str, close_matches: list[str]):
        self.name = name
        self.close_matches = close_matches
        hint = (" Did you mean: %s?" % ", ".join(close_matches)) if close_matches else ""
        super().__init__("unknown instance %r.%s Run `ngcc list` to see every instance."
                         % (name, hint))

    def __str__(self) -> str:  # LookupError would otherwise repr() the message
        return self.args[0]


class LibraryError(NgccError, OSError):
    """An instance library that cannot be loaded or lacks ``CryptHash``."""


class HashError(NgccError, RuntimeError):
    """``CryptHash`` returned nonzero (the message names instance and call)."""


class BuildError(NgccError):
    """``ngcc build`` could not make an instance library from a source folder."""
