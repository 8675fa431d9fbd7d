"""Shared test set-up: the location of the public test data and hypothesis settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

pytest_plugins = ["tests._require_references"]

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"

settings.register_profile("evalframe", deadline=None, max_examples=200, derandomize=True)
settings.load_profile("evalframe")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` beside the checkout; tests using it skip on a fresh clone."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (a fresh clone): real-data tests skipped")
    return SHARED_DATA
