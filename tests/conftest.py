"""Shared fixtures. Tests that need ../shared (specs, official KAT files) skip without it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_path() -> Path:
    """Where the project's shared materials are: $NGCC_SHARED or ../shared beside the repo."""
    return Path(os.environ.get("NGCC_SHARED", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared/ folder (spec/, kat/, seeds/); skips the test when it is absent."""
    path = shared_path()
    if not (path / "spec").is_dir():
        pytest.skip("shared materials not found at %s (set NGCC_SHARED to use them)" % path)
    return path
