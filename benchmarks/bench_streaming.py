"""Streaming memory: scan -> score (squad_em, squad_f1) -> save against Polars streaming alone.

Workload: a generated parquet dump (``_qa_data``: distinct Unicode QA text on every row) of
1M, 5M and 10M rows, written to a temporary folder and removed afterwards. Each run is a
fresh child process that reads its own peak resident set size (``VmHWM`` in
``/proc/self/status``) at the end; ``ru_maxrss`` of children is inherited across
fork+exec on Linux, so it is not used.

- polars: ``pl.scan_parquet(path).with_columns(pl.col("prediction").str.to_lowercase())
  .sink_parquet(out)``, what Polars alone needs to stream the file through;
- evalframe: ``ef.save(ef.score(ef.scan(path), metrics=["squad_em", "squad_f1"]), out)``.

Target: evalframe's peak within 1.3x of polars' at every size (flat: no growth with rows).

    python benchmarks/bench_streaming.py [--rows 1000000 5000000 10000000] [--repeats 2]

Writes results/streaming.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = 1.3


def vm_hwm_mb() -> float:
    """This process's peak resident set size (MiB), from ``/proc/self/status``."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def child(kind: str, path: str, out: str) -> None:
    start = time.perf_counter()
    if kind == "polars":
        import polars as pl

        (
            pl.scan_parquet(path)
            .with_columns(pl.col("prediction").str.to_lowercase())
            .sink_parquet(out)
        )
    else:
        import evalframe as ef

        ef.save(ef.score(ef.scan(path), metrics=["squad_em", "squad_f1"]), out)
    seconds = time.perf_counter() - start
    print(json.dumps({"peak_mb": vm_hwm_mb(), "seconds": seconds}))


def run_child(kind: str, path: Path, out: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path), str(out)],
        check=True, capture_output=True, text=True, env=env,
    )
    out.unlink(missing_ok=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 5_000_000, 10_000_000])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return {}

    sys.path.insert(0, str(HERE))
    import _qa_data

    sizes = []
    with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        for rows in args.rows:
            path = _qa_data.write_parquet(Path(folder) / f"qa_{rows}.parquet", rows, args.seed)
            out = Path(folder) / "out.parquet"
            runs = {"polars": [], "evalframe": []}
            for _ in range(args.repeats):
                for kind in runs:
                    runs[kind].append(run_child(kind, path, out))
            polars_mb = min(run["peak_mb"] for run in runs["polars"])
            ours_mb = min(run["peak_mb"] for run in runs["evalframe"])
            size = {
                "rows": rows,
                "file_mb": round(path.stat().st_size / 2**20, 1),
                "polars_peak_mb": round(polars_mb, 1),
                "evalframe_peak_mb": round(ours_mb, 1),
                "ratio": round(ours_mb / polars_mb, 3),
                "polars_seconds": round(min(run["seconds"] for run in runs["polars"]), 2),
                "evalframe_seconds": round(min(run["seconds"] for run in runs["evalframe"]), 2),
            }
            print(json.dumps(size))
            sizes.append(size)
            path.unlink()
    worst = max(size["ratio"] for size in sizes)
    summary = {
        "benchmark": "streaming memory: scan -> score(squad_em, squad_f1) -> save",
        "sizes": sizes,
        "worst_ratio": worst,
        "target_ratio": TARGET,
        "meets_target": worst <= TARGET,
        "load_average": os.getloadavg(),
    }
    sys.path.insert(0, str(HERE))
    from _harness import write_results

    write_results("streaming", summary)
    return summary


if __name__ == "__main__":
    main()
