"""Cold start: ``import evalframe`` and ``evalframe score`` on the example dump, fresh processes.

Each run is a new interpreter (``sys.executable``), timed from outside (wall seconds,
interpreter start included); the child reads its own peak resident set size
(``VmHWM`` in ``/proc/self/status``) when it is done (``ru_maxrss`` of a child is inherited
across fork+exec on Linux, so it is not used). Reported: min and median over ``--runs``
after one warm-up run, which also compiles evalframe's bytecode as an installed package has
it (``PYTHONDONTWRITEBYTECODE`` is dropped for the children and the caches go to a
temporary ``PYTHONPYCACHEPREFIX``, so the source tree is left clean).

- ``import evalframe``;
- ``evalframe score data/example_dump.jsonl -m squad_em -o out.parquet``, run as the
  ``evalframe`` command runs it (``evalframe.cli.main``);
- for scale, ``import polars`` alone.

Targets: import under 0.4 s; the score command under 1.0 s wall and 250 MB peak.

    python benchmarks/bench_cold_start.py [--runs 10]

Writes results/cold_start.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DUMP = ROOT / "data" / "example_dump.jsonl"

#: The child prints its peak RSS (MiB) on the last line of stderr.
PEAK = (
    "from pathlib import Path as _P; import sys as _s; "
    "_s.stderr.write('\\npeak_mb=' + str(int([l for l in _P('/proc/self/status').read_text()"
    ".splitlines() if l.startswith('VmHWM:')][0].split()[1]) / 1024) + '\\n')"
)

TARGETS = {"import_seconds": 0.4, "score_seconds": 1.0, "score_peak_mb": 250.0}


def commands(out: Path) -> dict[str, str]:
    argv = ["score", str(DUMP), "-m", "squad_em", "-o", str(out), "--quiet"]
    return {
        "import polars": f"import polars\n{PEAK}",
        "import evalframe": f"import evalframe\n{PEAK}",
        "evalframe score": (
            "import sys\nfrom evalframe.cli import main\n"
            f"code = main({argv!r})\n{PEAK}\nsys.exit(code)"
        ),
    }


def run_once(code: str, bytecode: Path) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONPYCACHEPREFIX": str(bytecode)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"the child failed ({done.returncode}): {done.stderr}")
    peak = float(done.stderr.strip().splitlines()[-1].split("=", 1)[1])
    return seconds, peak


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args(argv)

    figures = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, code in commands(Path(folder) / "out.parquet").items():
            bytecode = Path(folder) / "bytecode"
            run_once(code, bytecode)  # warm-up: bytecode caches, the file system cache
            runs = [run_once(code, bytecode) for _ in range(args.runs)]
            seconds = [run[0] for run in runs]
            peaks = [run[1] for run in runs]
            figures[name] = {
                "wall_min_s": round(min(seconds), 3),
                "wall_median_s": round(statistics.median(seconds), 3),
                "peak_min_mb": round(min(peaks), 1),
                "peak_median_mb": round(statistics.median(peaks), 1),
            }
            print(name, json.dumps(figures[name]), flush=True)
    checks = {
        "import_seconds": figures["import evalframe"]["wall_median_s"],
        "score_seconds": figures["evalframe score"]["wall_median_s"],
        "score_peak_mb": figures["evalframe score"]["peak_median_mb"],
    }
    summary = {
        "benchmark": "cold start: import evalframe; evalframe score on the example dump",
        "runs": args.runs,
        "figures": figures,
        "targets": TARGETS,
        "meets_targets": {key: checks[key] <= TARGETS[key] for key in TARGETS},
        "load_average": os.getloadavg(),
    }
    sys.path.insert(0, str(HERE))
    from _harness import write_results

    write_results("cold_start", summary)
    return summary


if __name__ == "__main__":
    main()
