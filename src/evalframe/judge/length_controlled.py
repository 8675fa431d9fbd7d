"""AlpacaEval 2.0's length-controlled win rate: the ``length_controlled_v1`` GLM, refitted here.

AlpacaEval (``alpaca_eval.metrics.glm_winrate.get_length_controlled_winrate``, 0.6.6) fits,
for one model against its baseline, a logistic regression of the judge's preference for the
model (the share ``preference - 1`` in [0, 1], a draw ``0`` read as ``1.5``) on three
features, without an intercept::

    tanh(std_delta_len) + instruction_difficulty + not_gamed_baseline

- ``std_delta_len``: the baseline's answer length minus the model's (``answer_a`` minus
  ``answer_b``, in characters: Unicode code points, as Python's ``len``), divided by the
  standard deviation (``ddof=1``) of these differences over the model's rows; not centred.
- ``instruction_difficulty``: a number per instruction (higher: the model wins more easily).
- ``not_gamed_baseline``: 1 for the model's rows, so its coefficient is the model's own
  strength.

The model's rows weigh 1. To keep the length slope honest, AlpacaEval adds the rows of two
*gamed* baselines (the baseline prompted to be verbose, and to be concise, judged against
the baseline) with ``not_gamed_baseline`` 0 and weight ``0.2 / 2`` each
(``regularize_to_baseline_lambda = 0.2``). Rows without a preference (null, NaN) are left
out of the fit. The fit is soft-label logistic regression with an L1 penalty: it minimises
``sum|beta| + C * sum_i w_i * (log(1 + exp(x_i beta)) - p_i x_i beta)``, ``C`` chosen among
``logspace(-4, 4, 10)`` by 5-fold cross-validation (scikit-learn's ``GroupKFold`` on the
training rows in order: row ``g`` of ``n`` is in fold ``(n - 1 - g) % 5``), the score of a
fold being minus the weighted mean log loss on its held-out rows (predictions clipped to
[1e-15, 1 - 1e-15]); the first ``C`` of the highest summed score is refitted on every row.

The length-controlled win rate is the prediction with no length difference
(``std_delta_len = 0``), averaged over every row of the model (rows without a preference
too), in percent: ``length_controlled_winrate = 100 * mean(sigmoid(beta_2 * difficulty_i +
beta_3))``; ``lc_standard_error`` is 100 times the standard error of the mean of those
predictions (``ddof=1``), as AlpacaEval reports it. It measures how much the predictions
vary across instructions, not how uncertain the fit is. ``lc_ci_low`` / ``lc_ci_high`` are
``length_controlled_winrate -/+ z * lc_standard_error`` (``z`` the normal quantile of the
report's ``ci``), clipped to [0, 100]: they inherit that meaning. A model judged against
itself (``model_a`` equal to ``model_b``) is 50 with a standard error of 0, by construction,
as in AlpacaEval.

The fit here is evalframe's own (an orthant-wise Newton method on numpy and scipy), run to
convergence (steps below 1e-12). AlpacaEval's scikit-learn ``liblinear`` fit stops at
``tol=1e-4``: on the real AlpacaEval 2.0 annotations (with test tables built from them) its
win rates differ from the optimum by up to about 0.03 point; run with ``tol=1e-10`` it
agrees with this fit to 1e-6 (``tests/conformance/test_length_controlled_conformance.py``).

Where the difficulties and the gamed rows come from
---------------------------------------------------
``glm_data=DIR``: AlpacaEval's own tables, downloaded from the Hugging Face dataset
``tatsu-lab/alpaca_eval`` (what AlpacaEval's ``hf_hub_download`` fetches at run time). Only
``df_gamed.csv`` is read: the gamed baselines' rows, with the columns ``index``,
``preference`` (the share, in [0, 1]; empty where missing), ``std_delta_len``,
``instruction_difficulty`` and ``not_gamed_baseline`` (``True``/``False``); other columns
(``model``) are ignored. An instruction's difficulty is the ``instruction_difficulty`` of
the first row of its ``index``, as AlpacaEval reads it (``drop_duplicates("index")``;
AlpacaEval then looks index ``i`` up by *row label*, the same thing when the file's first
rows hold the indices 0, 1, 2... in order, as a table of gamed models one after the other
does; evalframe looks it up by the ``index`` column).
AlpacaEval's ``instruction_difficulty.csv`` is not read: AlpacaEval uses it only to predict
win rates against another baseline from saved weights, not for this number.

AlpacaEval looks an instruction's difficulty up by its *index*, the row's position in the
annotations it is given: for a complete run, the instruction's position in the 805
instructions of its evaluation set. evalframe takes that index from, in order:

- the evaluation set, when ``DIR`` holds ``alpaca_eval.json`` (the dataset's file of
  instructions, a JSON list of records with ``instruction``): the position of the
  instruction (the ``question`` column) there;
- otherwise, the input's own order: a group holding as many instructions as the table has
  indices (805) gives the order, as AlpacaEval's files list them; every such group must
  agree, and the other groups' instructions (``text_davinci_001`` answered 803) are
  found in that order by text. AlpacaEval itself, given an 803-row file, would take the
  positions 0..802 and pair the rows after a missing instruction with the next
  instruction's difficulty; evalframe does not.

An instruction that the table (or the evaluation set) does not hold is an error naming it.

Without ``glm_data`` there are neither difficulties nor gamed baselines, and the models
given are fitted together instead (at least two besides the baseline; the baseline against
itself is left out): one logistic fit of every model's preferences,
``logit = a_model + s * tanh(std_delta_len) + d_instruction``, with a strength per model, a
length slope ``s`` shared by every model and an effect per instruction (AlpacaEval derived
its difficulty table the same way, ``notebooks/instruction_difficulty.ipynb``, but with a
slope per model and a cross-validated L1 penalty; here the instruction effects carry a
Gaussian penalty ``d^2 / 2``, a N(0, 1) prior, and the fit is deterministic, Newton's
method to convergence). The shared slope is the regularisation: it is the judge's taste for
length, which AlpacaEval pins with the gamed baselines' rows (the baseline itself made
verbose or concise, whose strength is zero by construction); here the models pin it
together, so no model's own length can explain away its strength. A slope per model
without that anchor (AlpacaEval's ``length_controlled_noreg``) reads a concise model's
losses as length: on the real AlpacaEval 2.0 files it puts gpt-3.5-turbo-1106 at 35, where
AlpacaEval's leaderboard says 19.3. A model's win rate is then ``100 * mean(sigmoid(a_model
+ d_i))`` over its rows, its standard error as above. The numbers depend on the models
given (more is better); with a single model the instruction effects would absorb its
preferences, so that is refused. The signature says which was used:
``lc:glm_data(index=eval_set)``, ``lc:glm_data(index=input_order)`` or
``lc:estimated(models=N)``.

>>> import polars as pl
>>> rows = pl.DataFrame({
...     "model_b": ["m"] * 6 + ["n"] * 6, "model_a": ["base"] * 12,
...     "question": [f"q{i}" for i in range(6)] * 2,
...     "answer_a": ["abcd"] * 12,
...     "answer_b": ["a", "abcdefgh", "ab", "abcdefghijkl", "abc", "abcdef"] * 2,
...     "preference": [1.1, 1.8, 1.2, 1.9, 1.3, 1.6, 1.2, 1.4, 1.1, 1.7, 1.2, 1.5],
... })
>>> table = length_controlled(rows, ["model_b"])
>>> table.select("model_b", pl.col("length_controlled_winrate").round(2), "signature")
shape: (2, 3)
┌─────────┬───────────────────────────┬────────────────────────┐
│ model_b ┆ length_controlled_winrate ┆ signature              │
│ ---     ┆ ---                       ┆ ---                    │
│ str     ┆ f64                       ┆ str                    │
╞═════════╪═══════════════════════════╪════════════════════════╡
│ m       ┆ 41.19                     ┆ lc:estimated(models=2) │
│ n       ┆ 25.0                      ┆ lc:estimated(models=2) │
└─────────┴───────────────────────────┴────────────────────────┘
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
from scipy import special

from evalframe.errors import EvalframeError
from evalframe.stats.intervals import normal_quantile

__all__ = [
    "COLUMNS",
    "CS",
    "EVAL_SET_FILE",
    "GAMED_FILE",
    "GlmData",
    "check_glm_data",
    "fit_glm",
    "fit_joint",
    "l1_logistic",
    "length_controlled",
    "read_glm_data",
]

#: The columns the report adds, in order.
COLUMNS = ("length_controlled_winrate", "lc_standard_error", "lc_ci_low", "lc_ci_high")
#: The gamed baselines' rows (required in ``glm_data``).
GAMED_FILE = "df_gamed.csv"
#: The evaluation set's instructions, in AlpacaEval's order (optional in ``glm_data``).
EVAL_SET_FILE = "alpaca_eval.json"
#: The grid of inverse penalties the cross-validation chooses from (scikit-learn's ``Cs=10``).
CS = tuple(float(c) for c in np.logspace(-4, 4, 10))
#: Cross-validation folds.
N_SPLITS = 5
#: AlpacaEval's ``regularize_to_baseline_lambda``: the gamed rows weigh ``LAMBDA / 2``.
LAMBDA = 0.2
#: The Gaussian penalty on the estimated instruction effects (``d^2 / 2``: a N(0, 1) prior).
DIFFICULTY_PENALTY = 1.0
#: The columns of ``df_gamed.csv`` that are read.
GAMED_COLUMNS = ("index", "preference", "std_delta_len", "instruction_difficulty",
                 "not_gamed_baseline")

_ROW = "__lc_row"


# ------------------------------------------------------------------ AlpacaEval's tables


@dataclass(frozen=True)
class GlmData:
    """AlpacaEval's tables, as read from a ``glm_data`` folder (:func:`read_glm_data`)."""

    #: The folder they were read from.
    directory: str
    #: Each index's difficulty (the first ``df_gamed.csv`` row of that index).
    difficulty: dict[int, float]
    #: The gamed rows with a preference: features (``tanh(std_delta_len)``,
    #: ``instruction_difficulty``, ``not_gamed_baseline``), shares and weights.
    features: np.ndarray
    share: np.ndarray
    weight: np.ndarray
    #: The evaluation set's instructions in order (``alpaca_eval.json``), or None.
    instructions: tuple[str, ...] | None


def check_glm_data(directory: str | os.PathLike[str]) -> Path:
    """The folder ``directory``, once its files are known to be there and readable.

    ``df_gamed.csv`` must be a readable file; ``alpaca_eval.json`` may be absent, but when
    present it must be readable. Their content is read by :func:`read_glm_data`.

    >>> check_glm_data("/nonexistent")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    evalframe.errors.EvalframeError: glm_data='/nonexistent' is not a folder; expected one ...
    """
    folder = Path(os.path.expanduser(os.fspath(directory)))
    if not folder.is_dir():
        raise EvalframeError(
            f"glm_data={os.fspath(directory)!r} is not a folder; expected one holding "
            f"{GAMED_FILE} (from the Hugging Face dataset tatsu-lab/alpaca_eval)"
        )
    for name, required in ((GAMED_FILE, True), (EVAL_SET_FILE, False)):
        path = folder / name
        if not required and not path.exists():
            continue
        try:
            with path.open("rb") as handle:
                handle.read(1)
        except OSError as error:
            reason = error.strerror or error
            raise EvalframeError(
                f"glm_data: cannot read {str(path)!r}: {reason} (download {name} from the "
                "Hugging Face dataset tatsu-lab/alpaca_eval into this folder)"
            ) from error
    return folder


def read_glm_data(directory: str | os.PathLike[str]) -> GlmData:
    """Read ``df_gamed.csv`` (and ``alpaca_eval.json`` when present) from ``directory``.

    Raises :class:`~evalframe.errors.EvalframeError` naming the file, the column and the
    row of a value that cannot be read.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "df_gamed.csv").write_text(
    ...     "model,index,preference,std_delta_len,instruction_difficulty,not_gamed_baseline\\n"
    ...     "g,0,0.25,1.5,-0.5,False\\ng,1,,0.0,0.5,False\\n")
    >>> data = read_glm_data(folder)
    >>> data.difficulty, data.share.tolist(), data.weight.tolist()
    ({0: -0.5, 1: 0.5}, [0.25], [0.1])
    """
    folder = check_glm_data(directory)
    path = folder / GAMED_FILE
    try:
        table = pl.read_csv(path, infer_schema=False)
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as error:
        raise EvalframeError(f"{str(path)!r} is not a readable CSV file: {error}") from error
    absent = [name for name in GAMED_COLUMNS if name not in table.columns]
    if absent:
        raise EvalframeError(
            f"{str(path)!r} lacks the column(s) {absent}; AlpacaEval's df_gamed.csv has "
            f"{list(GAMED_COLUMNS)} (and model); found {table.columns}"
        )
    index = _numbers(table, "index", path, pl.Int64)
    share = _numbers(table, "preference", path, pl.Float64, missing=True)
    delta = _numbers(table, "std_delta_len", path, pl.Float64)
    difficulty = _numbers(table, "instruction_difficulty", path, pl.Float64)
    labels = table["not_gamed_baseline"].str.strip_chars().str.to_lowercase()
    wrong = ~labels.is_in(["true", "false"]).fill_null(False)
    if wrong.any():
        row = int(wrong.arg_true()[0])
        raise EvalframeError(
            f"{str(path)!r}, column 'not_gamed_baseline', row {row + 1}: "
            f"{table['not_gamed_baseline'][row]!r} is not True or False"
        )
    not_gamed = (labels == "true").to_numpy().astype(float)
    outside = ~np.isnan(share) & ((share < 0) | (share > 1))
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise EvalframeError(
            f"{str(path)!r}, column 'preference', row {row + 1}: {float(share[row])!r} is not a "
            "share in [0, 1] (df_gamed.csv holds preference - 1)"
        )
    first: dict[int, float] = {}
    for key, value in zip(index.tolist(), difficulty.tolist(), strict=True):
        first.setdefault(int(key), float(value))
    kept = ~np.isnan(share)
    features = np.column_stack([np.tanh(delta), difficulty, not_gamed])[kept]
    weight = (not_gamed + LAMBDA * (1.0 - not_gamed) / 2)[kept]
    return GlmData(
        directory=str(folder), difficulty=first, features=features, share=share[kept],
        weight=weight, instructions=_eval_set(folder / EVAL_SET_FILE),
    )


def _numbers(
    table: pl.DataFrame, column: str, path: Path, dtype: type[pl.DataType],
    missing: bool = False,
) -> np.ndarray:
    """``column`` as numbers; an empty cell (and ``nan``) only where ``missing``."""
    text = table[column].str.strip_chars()
    empty = text.is_null() | text.str.to_lowercase().is_in(["", "nan"])
    values = text.cast(dtype, strict=False)
    bad = values.is_null() & ~empty
    if not missing:
        bad = bad | empty
    if dtype == pl.Float64:
        bad = bad | values.is_infinite().fill_null(False)
    if bad.any():
        row = int(bad.arg_true()[0])
        raise EvalframeError(
            f"{str(path)!r}, column {column!r}, row {row + 1}: {table[column][row]!r} is not "
            f"{'an integer' if dtype == pl.Int64 else 'a finite number'}"
        )
    return values.cast(pl.Float64).fill_null(float("nan")).to_numpy()


def _eval_set(path: Path) -> tuple[str, ...] | None:
    """The instructions of the evaluation set file, in order (None when absent)."""
    if not path.exists():
        return None
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise EvalframeError(f"{str(path)!r} is not a readable JSON file: {error}") from error
    if not isinstance(records, list):
        raise EvalframeError(f"{str(path)!r}: expected a JSON list of records with "
                             "'instruction'")
    instructions = []
    for row, record in enumerate(records):
        text = record.get("instruction") if isinstance(record, dict) else None
        if not isinstance(text, str):
            raise EvalframeError(f"{str(path)!r}, record {row}: no text 'instruction'")
        instructions.append(text)
    if len(set(instructions)) != len(instructions):
        seen: set[str] = set()
        twice = next(text for text in instructions if text in seen or seen.add(text))
        raise EvalframeError(f"{str(path)!r}: the instruction {twice[:60]!r} is listed twice")
    return tuple(instructions)


# ------------------------------------------------------------------ the fit


def _smooth(beta: np.ndarray, x: np.ndarray, p: np.ndarray, w: np.ndarray, c: float):
    """``C * sum w (log(1 + e^z) - p z)``, its gradient and Hessian, at ``beta``."""
    z = x @ beta
    s = special.expit(z)
    value = c * float(np.sum(w * (np.logaddexp(0.0, z) - p * z)))
    gradient = c * (x.T @ (w * (s - p)))
    hessian = c * ((x.T * (w * s * (1.0 - s))) @ x)
    return value, gradient, hessian


def l1_logistic(
    x: np.ndarray, p: np.ndarray, w: np.ndarray, c: float, start: np.ndarray | None = None,
    *, tol: float = 1e-12, max_iter: int = 500,
) -> np.ndarray:
    """Minimise ``sum|beta| + c * sum w * (log(1 + exp(x beta)) - p * x beta)``.

    An orthant-wise Newton method: on the coefficients that are not zero, or whose
    zero is not optimal (gradient beyond 1 in size), a Newton step on the smooth part
    plus the signs; a coefficient that would change sign stops at zero; the step is halved
    until the objective falls. Stops when a step moves no coefficient by more than
    ``tol * (1 + max|beta|)``.

    >>> import numpy as np
    >>> x = np.array([[1.0], [1.0], [1.0], [1.0]])
    >>> p = np.array([1.0, 1.0, 1.0, 0.0])
    >>> # optimum: 1 + C (4 sigmoid(b) - 3) = 0, sigmoid(b) = (3 - 1/C) / 4 = 0.749975
    >>> float(np.round(l1_logistic(x, p, np.ones(4), 1e4)[0], 6))
    1.098479
    >>> l1_logistic(x, p, np.ones(4), 1e-4).tolist()                # penalty wins
    [0.0]
    """
    beta = np.zeros(x.shape[1]) if start is None else np.array(start, dtype=float)
    value, gradient, hessian = _smooth(beta, x, p, w, c)
    total = value + float(np.abs(beta).sum())
    for _ in range(max_iter):
        nonzero = beta != 0
        sign = np.where(nonzero, np.sign(beta), -np.sign(gradient))
        active = nonzero | (np.abs(gradient) > 1.0)
        if not active.any():
            return beta
        idx = np.flatnonzero(active)
        slope = gradient[idx] + sign[idx]
        residual = _residual(beta, gradient)
        try:
            step = -np.linalg.solve(hessian[np.ix_(idx, idx)], slope)
        except np.linalg.LinAlgError:
            step = -np.linalg.lstsq(hessian[np.ix_(idx, idx)], slope, rcond=None)[0]
        direction = np.zeros_like(beta)
        direction[idx] = step
        t = 1.0
        while True:
            trial = beta + t * direction
            trial[np.sign(trial) == -sign] = 0.0  # a coefficient does not cross zero
            trial[~active] = 0.0
            trial_value, trial_gradient, trial_hessian = _smooth(trial, x, p, w, c)
            trial_total = trial_value + float(np.abs(trial).sum())
            if trial_total <= total + 1e-4 * t * float(slope @ step):
                break
            # near the optimum the objective's change is below its rounding: a step that
            # brings the optimality conditions closer is taken
            rounding = trial_total - total <= 1e-13 * (1.0 + abs(total))
            if rounding and _residual(trial, trial_gradient) < residual:
                break
            if t < 1e-10:
                return beta  # no descent left
            t /= 2
        moved = float(np.max(np.abs(trial - beta)))
        beta, gradient, hessian, total = trial, trial_gradient, trial_hessian, trial_total
        if moved <= tol * (1.0 + float(np.max(np.abs(beta)))):
            return beta
    return beta


def _residual(beta: np.ndarray, gradient: np.ndarray) -> float:
    """How far ``beta`` is from optimal: the largest entry of the smallest subgradient."""
    zero = np.maximum(np.abs(gradient) - 1.0, 0.0)
    return float(np.max(np.abs(np.where(beta != 0, gradient + np.sign(beta), zero))))


def fit_glm(
    features: np.ndarray, share: np.ndarray, weight: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """AlpacaEval's cross-validated fit: the coefficients and the ``C`` chosen.

    ``features`` are the training rows in order (gamed rows first, then the model's rows
    with a preference), ``share`` their targets in [0, 1], ``weight`` their weights (1 when
    None). See the module docstring for the folds, the score and the grid.

    >>> import numpy as np
    >>> x = np.column_stack([np.tanh(np.linspace(-2, 2, 10)), np.ones(10)])
    >>> p = np.array([0.9, 0.8, 0.9, 0.7, 0.6, 0.5, 0.4, 0.4, 0.2, 0.1])
    >>> beta, c = fit_glm(x, p)
    >>> np.round(beta, 4).tolist(), round(c, 4)
    ([-1.5921, 0.2704], 166.8101)
    """
    x = np.asarray(features, dtype=float)
    p = np.asarray(share, dtype=float)
    w = np.ones(len(p)) if weight is None else np.asarray(weight, dtype=float)
    n = len(p)
    if n < N_SPLITS:
        raise EvalframeError(
            f"the length-controlled GLM is cross-validated over {N_SPLITS} folds: it needs "
            f"at least {N_SPLITS} rows with a preference, got {n}"
        )
    fold = (n - 1 - np.arange(n)) % N_SPLITS
    scores = np.zeros(len(CS))
    for k in range(N_SPLITS):
        train, test = fold != k, fold == k
        beta = None
        for j, c in enumerate(CS):
            beta = l1_logistic(x[train], p[train], w[train], c, beta)
            q = np.clip(special.expit(x[test] @ beta), 1e-15, 1 - 1e-15)
            loss = -(p[test] * np.log(q) + (1 - p[test]) * np.log(1 - q))
            scores[j] -= float(np.mean(w[test] * loss))
    best = CS[int(np.argmax(scores))]
    return l1_logistic(x, p, w, best), best


def fit_joint(
    group: np.ndarray, instruction: np.ndarray, length: np.ndarray, share: np.ndarray,
    n_groups: int, n_instructions: int, *, penalty: float = DIFFICULTY_PENALTY,
    tol: float = 1e-10,
) -> tuple[np.ndarray, float, np.ndarray]:
    """The joint fit over several models: each model's strength, the shared length slope
    and each instruction's effect.

    Maximises the soft-label log-likelihood of ``logit = a[group] + s * length +
    d[instruction]`` (``length`` is the row's ``tanh(std_delta_len)``) minus ``penalty *
    sum(d^2) / 2`` by Newton's method (the instruction block, diagonal, eliminated), the
    step halved until the objective falls, until no parameter moves by more than ``tol``
    (relative); returns ``(a, s, d)``. An instruction without rows has ``d`` 0.

    >>> import numpy as np
    >>> group = np.repeat([0, 1, 2], 3); instruction = np.tile([0, 1, 2], 3)
    >>> length = np.array([0.3, -0.2, 0.1, -0.4, 0.2, 0.0, 0.1, 0.3, -0.3])
    >>> share = np.array([0.9, 0.2, 0.5, 0.8, 0.1, 0.6, 0.85, 0.15, 0.4])  # 0 easy, 1 hard
    >>> a, s, d = fit_joint(group, instruction, length, share, 3, 3)
    >>> bool(d[0] > d[2] > d[1])
    True
    """
    size = n_groups + 1  # the strengths, then the slope
    a = np.zeros(n_groups)
    slope = 0.0
    d = np.zeros(n_instructions)

    def objective(a: np.ndarray, slope: float, d: np.ndarray) -> tuple[float, np.ndarray]:
        z = a[group] + slope * length + d[instruction]
        value = float(np.sum(np.logaddexp(0.0, z) - share * z)) + penalty * float(d @ d) / 2
        return value, z

    value, z = objective(a, slope, d)
    for _ in range(500):
        prob = special.expit(z)
        error = prob - share
        v = prob * (1 - prob)
        first = np.append(np.bincount(group, error, n_groups), float(error @ length))
        second = np.bincount(instruction, error, n_instructions) + penalty * d
        block = np.zeros((size, size))
        rows = np.arange(n_groups)
        block[rows, rows] = np.bincount(group, v, n_groups)
        block[rows, -1] = block[-1, rows] = np.bincount(group, v * length, n_groups)
        block[-1, -1] = float(v @ length**2)
        coupling = np.zeros((size, n_instructions))
        np.add.at(coupling, (group, instruction), v)
        coupling[-1] = np.bincount(instruction, v * length, n_instructions)
        diagonal = np.bincount(instruction, v, n_instructions) + penalty
        reduced = block - (coupling / diagonal) @ coupling.T
        try:
            upper = np.linalg.solve(reduced, first - coupling @ (second / diagonal))
        except np.linalg.LinAlgError as failure:
            raise EvalframeError(
                "the joint fit of the models' strengths and the length slope is singular: "
                "the length differences do not vary"
            ) from failure
        lower = (second - coupling.T @ upper) / diagonal
        t = 1.0
        while True:
            trial = a - t * upper[:-1], slope - t * float(upper[-1]), d - t * lower
            new_value, new_z = objective(*trial)
            if new_value <= value or t < 1e-10:
                break
            t /= 2
        moved = t * max(float(np.max(np.abs(upper))), float(np.max(np.abs(lower))))
        (a, slope, d), value, z = trial, new_value, new_z
        scale = 1.0 + max(float(np.max(np.abs(a))), abs(slope), float(np.max(np.abs(d))))
        if moved <= tol * scale:
            break
    return a, slope, d


# ------------------------------------------------------------------ per group


def length_controlled(
    frame: pl.DataFrame | pl.LazyFrame,
    keys: Sequence[str],
    *,
    preference: str = "preference",
    glm_data: str | os.PathLike[str] | GlmData | None = None,
    ci: float = 0.95,
) -> pl.DataFrame:
    """The length-controlled win rate of each group of ``keys`` (one model each).

    Parameters
    ----------
    frame
        AlpacaEval annotations as evalframe reads them: ``question`` (the instruction),
        ``answer_a`` (the baseline's, AlpacaEval's ``output_1``), ``answer_b`` (the model's,
        ``output_2``), the ``preference`` column (1 = baseline, 2 = model, 1.5 or 0 = draw,
        null or NaN = not judged), and, when present, ``model_a`` / ``model_b`` (one pair
        per group; equal names: the baseline against itself).
    keys
        The group columns; every group is one model against one baseline.
    preference
        The preference column.
    glm_data
        A folder holding AlpacaEval's ``df_gamed.csv`` (and optionally ``alpaca_eval.json``),
        or its :class:`GlmData`; None: estimated from the groups given (module docstring).
    ci
        The level of ``lc_ci_low`` / ``lc_ci_high``.

    Returns
    -------
    pl.DataFrame
        The keys, :data:`COLUMNS` and ``signature`` (the ``lc:`` entry), one row per group
        in the order of first appearance; null where a group has no preference at all.
    """
    if glm_data is not None and not isinstance(glm_data, GlmData):
        glm_data = read_glm_data(glm_data)
    groups = _groups(frame, list(keys), preference)
    if glm_data is not None:
        predicted, text = _with_tables(groups, glm_data)
    else:
        predicted, text = _estimated(groups)
    z = normal_quantile(ci)
    records = []
    for group in groups:
        values = predicted.get(group.name)
        if values is None:
            records.append((*group.key, None, None, None, None, text))
            continue
        rate = 100.0 * float(np.mean(values))
        n = len(values)
        if n < 2:
            records.append((*group.key, rate, None, None, None, text))
            continue
        error = 100.0 * float(np.std(values, ddof=1)) / math.sqrt(n)
        low, high = (min(max(rate + sign * z * error, 0.0), 100.0) for sign in (-1, 1))
        records.append((*group.key, rate, error, low, high, text))
    schema = frame.collect_schema()
    columns = {**{key: schema[key] for key in keys}, **dict.fromkeys(COLUMNS, pl.Float64),
               "signature": pl.String}
    return pl.DataFrame(records, schema=columns, orient="row")


@dataclass(frozen=True, eq=False)
class _Group:
    """One model's rows: what the GLM needs, in the input's order."""

    key: tuple
    name: str
    rows: np.ndarray
    questions: list[str]
    delta: np.ndarray
    share: np.ndarray
    baseline: bool
    model_a: str | None

    @property
    def judged(self) -> bool:
        """Whether any row has a preference."""
        return bool(np.any(~np.isnan(self.share)))

    def length(self) -> np.ndarray:
        """``tanh(std_delta_len)`` of every row."""
        spread = float(np.std(self.delta, ddof=1)) if len(self.delta) > 1 else math.nan
        if not math.isfinite(spread) or spread == 0:
            raise EvalframeError(
                f"group {self.name}: the answers' length differences (answer_a minus "
                f"answer_b) do not vary ({len(self.delta)} row(s)); AlpacaEval divides them "
                "by their standard deviation"
            )
        return np.tanh(self.delta / spread)


def _groups(frame: pl.DataFrame | pl.LazyFrame, keys: list[str], preference: str) -> list[_Group]:
    """The input split by ``keys``, each group checked and measured."""
    lazy = frame.lazy()
    schema = lazy.collect_schema()
    needed = ["question", "answer_a", "answer_b", preference]
    absent = [name for name in needed if name not in schema]
    if absent:
        raise EvalframeError(
            f"the length-controlled win rate needs the column(s) {absent} (the instruction, "
            "the baseline's and the model's answers, AlpacaEval's preference); available: "
            f"{list(schema)}"
        )
    for name in ("question", "answer_a", "answer_b"):
        if schema[name] not in (pl.String, pl.Null):
            raise EvalframeError(f"column {name!r} has dtype {schema[name]}; expected text")
    named = [name for name in ("model_a", "model_b") if name in schema]
    value = pl.col(preference).cast(pl.Float64)
    value = pl.when(value == 0).then(pl.lit(1.5)).otherwise(value)
    share = pl.when(value.is_nan()).then(None).otherwise(value) - 1.0
    table = lazy.with_row_index(_ROW).select(
        *keys, _ROW, "question",
        (pl.col("answer_a").str.len_chars().cast(pl.Float64)
         - pl.col("answer_b").str.len_chars().cast(pl.Float64)).alias("__delta"),
        pl.col("answer_a").is_null().alias("__null_a"),
        pl.col("answer_b").is_null().alias("__null_b"),
        share.alias("__share"),
        *(pl.col(name).cast(pl.String).alias(f"__{name}") for name in named),
    ).collect()
    _refuse_nulls(table)
    outside = table.filter(pl.col("__share").is_not_null()
                           & ~pl.col("__share").is_between(0.0, 1.0))
    if outside.height:
        row = outside.row(0, named=True)
        raise EvalframeError(
            f"column {preference!r}: {outside.height} row(s) hold a value AlpacaEval's GLM "
            f"cannot fit (expected 1 to 2, 1.5 or 0 for a draw, or null); first: row "
            f"{row[_ROW]} ({row['__share'] + 1.0!r})"
        )
    parts = table.partition_by(keys, maintain_order=True, as_dict=True) if keys else {
        (): table}
    groups = []
    for key, part in parts.items():
        name = ", ".join(f"{k}={v!r}" for k, v in zip(keys, key, strict=True)) or "all rows"
        pair = [part[f"__{n}"].unique().to_list() for n in named]
        many = [(n, values) for n, values in zip(named, pair, strict=True) if len(values) > 1]
        if many:
            column, values = many[0]
            raise EvalframeError(
                f"group {name} holds {len(values)} values of {column!r} ({values[:4]}); the "
                "length-controlled win rate is fitted per model against one baseline: "
                f"group by {column!r} (e.g. report(..., by='model'))"
            )
        questions = part["question"].to_list()
        if len(set(questions)) != len(questions):
            seen: set[str] = set()
            twice = next(q for q in questions if q in seen or seen.add(q))
            raise EvalframeError(
                f"group {name}: the instruction {twice[:60]!r} is judged twice; AlpacaEval "
                "judges each instruction once per model (group by model)"
            )
        first = {n: values[0] for n, values in zip(named, pair, strict=True)}
        baseline = len(first) == 2 and first["model_a"] == first["model_b"]
        groups.append(_Group(
            key=tuple(key), name=name, rows=part[_ROW].to_numpy(), questions=questions,
            delta=part["__delta"].to_numpy(), share=part["__share"].fill_null(
                float("nan")).to_numpy(), baseline=baseline, model_a=first.get("model_a"),
        ))
    return groups


def _refuse_nulls(table: pl.DataFrame) -> None:
    for column, label in (("question", "question"), ("__null_a", "answer_a"),
                          ("__null_b", "answer_b")):
        found = table.filter(pl.col(column).is_null() if column == "question"
                             else pl.col(column))
        if found.height:
            raise EvalframeError(
                f"column {label!r}: {found.height} row(s) are null; the length-controlled "
                f"win rate needs every instruction and both answers; first: row "
                f"{found[_ROW][0]}"
            )


def _with_tables(groups: list[_Group], data: GlmData) -> tuple[dict, str]:
    """Each model's predictions from its own fit with AlpacaEval's tables."""
    if data.instructions is not None:
        order, source = data.instructions, "eval_set"
    else:
        order, source = _input_order(groups, data), "input_order"
    position = {text: where for where, text in enumerate(order)}
    predicted: dict[str, np.ndarray] = {}
    for group in groups:
        if group.baseline:
            predicted[group.name] = np.full(len(group.delta), 0.5)
        if group.baseline or not group.judged:
            continue
        level = np.array([
            _difficulty(group, row, question, position.get(question), data, source)
            for row, question in zip(group.rows.tolist(), group.questions, strict=True)
        ])
        judged = ~np.isnan(group.share)
        own = np.column_stack([group.length(), level, np.ones(len(level))])[judged]
        beta, _ = fit_glm(np.vstack([data.features, own]),
                          np.concatenate([data.share, group.share[judged]]),
                          np.concatenate([data.weight, np.ones(len(own))]))
        predicted[group.name] = special.expit(beta[1] * level + beta[2])
    return predicted, f"lc:glm_data(index={source})"


def _difficulty(group: _Group, row: int, question: str, where: int | None, data: GlmData,
                source: str) -> float:
    """The difficulty of the instruction at index ``where`` (an error naming it if none)."""
    if where is None:
        origin = (f"the evaluation set {EVAL_SET_FILE}" if source == "eval_set"
                  else "the instructions of the input's complete groups")
        raise EvalframeError(
            f"group {group.name}, row {row}: the instruction {question[:60]!r} is not in "
            f"{origin}, so it has no AlpacaEval index"
        )
    if where not in data.difficulty:
        raise EvalframeError(
            f"group {group.name}, row {row}: the instruction {question[:60]!r} (index {where}) "
            f"has no difficulty in {GAMED_FILE} (indices {min(data.difficulty)}.."
            f"{max(data.difficulty)})"
        )
    return data.difficulty[where]


def _input_order(groups: list[_Group], data: GlmData) -> list[str]:
    """AlpacaEval's instruction order, read from the groups holding every instruction."""
    size = len(data.difficulty)
    if set(data.difficulty) != set(range(size)):
        raise EvalframeError(
            f"{GAMED_FILE}'s indices are not 0..{size - 1}, so a row's position cannot be its "
            f"index; put the evaluation set {EVAL_SET_FILE} in the glm_data folder"
        )
    complete = [group for group in groups if len(group.questions) == size]
    if not complete:
        raise EvalframeError(
            f"no group holds all {size} instructions of {GAMED_FILE}, so their AlpacaEval "
            f"index (the position in the evaluation set) is unknown; put the evaluation set "
            f"{EVAL_SET_FILE} (Hugging Face dataset tatsu-lab/alpaca_eval) in the glm_data "
            "folder"
        )
    order = complete[0].questions
    for other in complete[1:]:
        if other.questions != order:
            raise EvalframeError(
                f"groups {complete[0].name} and {other.name} list the instructions in "
                f"different orders; AlpacaEval's index is the position in its evaluation set: "
                f"put {EVAL_SET_FILE} in the glm_data folder"
            )
    return order


def _estimated(groups: list[_Group]) -> tuple[dict, str]:
    """Each model's predictions from the joint fit over every model given."""
    baselines = sorted({group.model_a for group in groups if group.model_a is not None})
    if len(baselines) > 1:
        raise EvalframeError(
            f"the groups have {len(baselines)} baselines ({baselines[:4]}); without glm_data "
            "the models are fitted together against one baseline: report each baseline on "
            "its own, or give glm_data"
        )
    fitted = [group for group in groups if not group.baseline and group.judged]
    if len(fitted) < 2:
        raise EvalframeError(
            f"without glm_data the length-controlled win rate is estimated from the models "
            f"given together, which needs at least 2 models besides the baseline; got "
            f"{len(fitted)}: give glm_data=DIR (AlpacaEval's df_gamed.csv) or the "
            "annotations of more models"
        )
    texts = sorted({question for group in fitted for question in group.questions})
    code = {text: where for where, text in enumerate(texts)}
    parts: dict[str, list[np.ndarray]] = {"group": [], "instruction": [], "length": [],
                                          "share": []}
    for number, group in enumerate(fitted):
        judged = ~np.isnan(group.share)
        parts["group"].append(np.full(int(judged.sum()), number))
        parts["instruction"].append(np.array([code[q] for q in group.questions])[judged])
        parts["length"].append(group.length()[judged])
        parts["share"].append(group.share[judged])
    joined = {name: np.concatenate(values) for name, values in parts.items()}
    strength, _, effect = fit_joint(joined["group"], joined["instruction"], joined["length"],
                                    joined["share"], len(fitted), len(texts))
    predicted = {
        group.name: special.expit(strength[number] + effect[[code[q] for q in group.questions]])
        for number, group in enumerate(fitted)
    }
    for group in groups:
        if group.baseline:
            predicted[group.name] = np.full(len(group.delta), 0.5)
    return predicted, f"lc:estimated(models={len(fitted)})"
