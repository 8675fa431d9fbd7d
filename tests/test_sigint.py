"""SIGINT during a background polars query goes to Python's handler, then back to polars'."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="reads the C struct sigaction's handler field (Linux layout)"
)

# The handler address is the first field of Linux's struct sigaction. The child reads it
# before polars is imported (Python's handler), after (polars' own), inside the block
# and after it.
_CHILD = textwrap.dedent(
    """
    import ctypes, json, signal, struct
    libc = ctypes.CDLL(None)

    def handler():
        action = ctypes.create_string_buffer(1024)
        assert libc.sigaction(signal.SIGINT, None, action) == 0
        return struct.unpack("P", action.raw[:ctypes.sizeof(ctypes.c_void_p)])[0]

    python_handler = handler()
    import polars
    from evalframe._sigint import PythonSigintOnly
    polars_handler = handler()
    with PythonSigintOnly():
        inside = handler()
    after = handler()
    keep = PythonSigintOnly()
    with keep:
        keep.restore = False
    kept = handler()
    print(json.dumps([python_handler, polars_handler, inside, after, kept]))
    """
)


@pytest.mark.subprocess
def test_python_handler_in_front_inside_the_block_and_polars_after():
    result = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, check=True)
    python_handler, polars_handler, inside, after, kept = json.loads(result.stdout)
    if python_handler == polars_handler:
        pytest.skip("this polars build installs no SIGINT handler of its own")
    assert inside == python_handler
    assert after == polars_handler
    assert kept == python_handler  # restore=False: Python's handler stays


@pytest.mark.subprocess
def test_an_ignored_sigint_stays_ignored():
    child = textwrap.dedent(
        """
        import signal
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        from evalframe._sigint import PythonSigintOnly
        with PythonSigintOnly():
            signal.raise_signal(signal.SIGINT)
        print("still here")
        """
    )
    result = subprocess.run([sys.executable, "-c", child], capture_output=True, check=True)
    assert result.stdout.strip() == b"still here"


def test_outside_the_main_thread_nothing_changes():
    import signal
    import threading

    from evalframe._sigint import PythonSigintOnly

    before = signal.getsignal(signal.SIGINT)
    seen = []

    def work():
        with PythonSigintOnly() as block:
            seen.append(block._saved)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == [None]
    assert signal.getsignal(signal.SIGINT) is before
