"""CI cannot silently skip parity: a missing reference fails under EVALFRAME_REQUIRE_REFERENCES."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

TEST = '''
import pytest
reference = pytest.importorskip("a_reference_that_is_not_there")

def test_parity():
    assert False
'''

SKIPIF = '''
import pytest

@pytest.mark.skipif(True, reason="lighteval is not installed")
def test_parity():
    pass

@pytest.mark.skipif(True, reason="../shared/data is absent")
def test_real_data():
    pass
'''


def _run(tmp_path: Path, source: str, required: bool) -> subprocess.CompletedProcess:
    path = tmp_path / "test_probe.py"
    path.write_text(source)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("EVALFRAME_REQUIRE_REFERENCES", None)
    if required:
        env["EVALFRAME_REQUIRE_REFERENCES"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests._require_references",
         "-p", "no:cacheprovider", str(path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )


@pytest.mark.subprocess
@pytest.mark.parametrize("source", [TEST, SKIPIF], ids=["importorskip", "skipif"])
def test_missing_reference_skips_for_users_and_fails_in_ci(tmp_path, source):
    # for a user: skipped (exit code 5 when the module's only tests are skipped at import)
    assert _run(tmp_path, source, required=False).returncode in (0, 5)
    required = _run(tmp_path, source, required=True)
    assert required.returncode in (1, 2), required.stdout  # failed, or a collection error
    assert "EVALFRAME_REQUIRE_REFERENCES=1" in required.stdout


@pytest.mark.subprocess
def test_absent_data_still_skips_in_ci(tmp_path):
    result = _run(tmp_path, SKIPIF, required=True)
    assert "1 skipped" in result.stdout and result.returncode == 1, result.stdout
