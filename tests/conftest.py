"""Shared test set-up: the location of the public test data, hypothesis settings, and a
private disk-cache folder (the tests and the commands they start never touch the user's)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

pytest_plugins = ["tests._require_references"]

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"

_CACHE_FOLDER = tempfile.mkdtemp(prefix="evalframe-test-cache-")
os.environ["EVALFRAME_CACHE_DIR"] = _CACHE_FOLDER
atexit.register(shutil.rmtree, _CACHE_FOLDER, ignore_errors=True)

settings.register_profile("evalframe", deadline=None, max_examples=200, derandomize=True)
settings.load_profile("evalframe")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` beside the checkout; tests using it skip on a fresh clone."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (a fresh clone): real-data tests skipped")
    return SHARED_DATA
