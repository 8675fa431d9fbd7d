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


#: Directories whose every test carries a marker, so the default run can leave them out.
_MARKED_FOLDERS = {"conformance": "conformance"}
#: Docstring examples that take seconds (the math parser's first import in a process).
_SLOW_DOCTESTS = {"evalframe.extract.lighteval_math.lighteval_math"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the conformance tests (their folder) and the property-based tests (hypothesis),
    which the default run leaves out (``addopts`` in ``pyproject.toml``); other slow tests
    carry ``slow`` or ``subprocess`` in their own modules."""
    for item in items:
        folder = Path(str(item.path)).parent.name
        if folder in _MARKED_FOLDERS:
            item.add_marker(_MARKED_FOLDERS[folder])
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker("hypothesis")
        if item.name in _SLOW_DOCTESTS:
            item.add_marker("slow")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` beside the checkout; tests using it skip on a fresh clone."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (a fresh clone): real-data tests skipped")
    return SHARED_DATA
