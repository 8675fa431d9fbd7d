"""What an adapter is: a named file layout, how to recognise it, and how to read it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from evalframe.io.adapters._probe import Probe

#: Levels of what one row of an adapter's output is.
LEVELS = ("samples", "results", "reference")


@dataclass(frozen=True)
class Adapter:
    """One harness file layout.

    Attributes
    ----------
    name
        The ``format=`` / ``--format`` value (``"lm_eval"``).
    harness
        Who writes the files (``"lm-evaluation-harness"``).
    files
        Which files, as a user would recognise them (``"samples_<task>_<date>.jsonl"``).
    expects
        What a file must hold to be read (said when a file is not recognised).
    detect
        Whether a probed file is in this layout; it must be strict (one layout per file).
    read
        The file as a lazy frame in evalframe's canonical columns, everything else kept:
        ``read(path)``, and ``read(path, duplicates=...)`` for a layout with :attr:`keys`.
    level
        What one output row is: a ``"samples"`` row (scored), a ``"results"`` row (a harness's
        own aggregate) or a ``"reference"`` row (questions, golds).
    rows
        What one row is, when rows of the same level are still different things and must not
        be stacked with others (``"pairwise judgments"``, ``"graded answers"``); the level's
        name by default.
    extensions
        File name endings only this adapter reads (``(".eval",)``); others use the table of
        formats by extension.
    folder_file
        The name of the file that stands for a whole folder of this layout
        (``"scenario_state.json"`` for a HELM run folder): a folder holding it (detected as this
        layout, or named with ``format=``) is read through that file alone.
    doc
        The docs page about this layout.
    check_files
        A check over every file read in this layout in one call, given as ``(path, frame)``
        pairs (a key that must not repeat across files); ``None``: none.
    keys
        The columns that name one sample (or reference row) in the layout's output: a key
        written twice in one file is refused, or one record kept, as ``duplicates=`` says
        (:func:`evalframe.io._duplicates.unique_samples`). Empty for aggregates, whose rows
        are named by the keys of one JSON object.
    fields
        The keys a record (or the object) of the layout holds, to say what a file that fits
        no layout lacks.

    Examples
    --------
    >>> adapter = Adapter(
    ...     name="demo", harness="demo", files="*.jsonl", expects="key 'x'",
    ...     detect=lambda probe: probe.has("x"), read=lambda path: pl.LazyFrame({"x": [1]}),
    ... )
    >>> adapter.read(Path("any")).collect().shape
    (1, 1)
    """

    name: str
    harness: str
    files: str
    expects: str
    detect: Callable[[Probe], bool]
    read: Callable[[Path], pl.LazyFrame]
    level: str = "samples"
    extensions: tuple[str, ...] = ()
    folder_file: str = ""
    doc: str = ""
    rows: str = ""
    check_files: Callable[[Sequence[tuple[Path, pl.LazyFrame]]], None] | None = None
    keys: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"adapter {self.name!r}: level {self.level!r} not in {LEVELS}")

    @property
    def kind(self) -> str:
        """What one row is: :attr:`rows`, else the level's name."""
        return self.rows or self.level

    def load(self, path: Path, *, duplicates: str = "error") -> pl.LazyFrame:
        """:attr:`read`, given ``duplicates`` when the layout has :attr:`keys`."""
        if self.keys:
            return self.read(path, duplicates=duplicates)
        return self.read(path)
