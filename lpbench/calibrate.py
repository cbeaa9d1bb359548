"""Calibrate a cost-model form to measured batch timings (``lpbench calibrate``).

Timings, one measured batch per row, in either layout (detected from the header):

* **lpbench timings v1** (what ``lpbench profile`` writes): ``n_prefill, prefill_tokens,
  prefill_context, n_decode, decode_context, time_s`` -- a batch of ``n_prefill`` prefills that each
  process ``prefill_tokens`` tokens on top of ``prefill_context`` cached ones, plus ``n_decode`` decodes
  (one token each) with ``decode_context`` cached tokens (m of :mod:`lpbench.semantics`), taking
  ``time_s`` seconds. Other columns (device, shape, ...) may be used by ``--where``.
* **splitwise** ``perf_model.csv`` (MIT): each row gives a prefill batch of ``batch_size`` prompts of
  ``prompt_size`` tokens (``prompt_time`` ms) and a decode batch of ``batch_size`` requests
  (``token_time`` ms per iteration, averaged over ``token_size`` generated tokens). Decision: the decode
  batch is placed at the mean cached context over the generation, m = prompt + (token_size - 2)/2
  (decodes run at m = I, ..., I + O - 2 in the batch model), which is exact for forms linear in m.

Repeated measurements of one batch are reduced to their median. Every form is linear in its
coefficients once its integer knob (``b0`` of piecewise/staircase, ``layers``/``phi`` of infermax)
is fixed, so the fit is a bound-constrained linear least-squares problem solved by
``scipy.optimize.lsq_linear`` with every coefficient >= 0 (the physics: no term can make a batch
faster by adding work). The default loss is relative, sum ((t_hat - t)/t)^2, since the goal is
a small relative error on short decode batches and long prefills alike. ``b0`` is chosen on the
training rows from a grid of powers of two and their 1.5 multiples.

Validation: K-fold cross-validation. The distinct batches are dealt, per phase (prefill, decode,
mixed) and in a seeded random order, into K folds; each fold is predicted by the fit on the other
K - 1, so every batch gets one held-out prediction, and the R², MAPE and worst relative error reported
are those of the held-out predictions. (A single 25 % split of the ~30 splitwise batches moved the
held-out MAPE by several points from one seed to another; K-fold uses every batch once.) The shipped
coefficients are the fit on all batches; its in-sample statistics are reported beside. Every prediction is
checked against the form's own ``batch_time`` on the reconstructed batch (one semantics).
"""
from __future__ import annotations

import hashlib
import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from . import costmodels
from .errors import InputError, LpbenchWarning

TIMINGS_COLUMNS = ("n_prefill", "prefill_tokens", "prefill_context", "n_decode", "decode_context", "time_s")
SPLITWISE_COLUMNS = ("prompt_size", "batch_size", "token_size", "prompt_time", "token_time")
FITTABLE = ("linear", "piecewise", "staircase", "infermax")
B0_GRID = sorted({int(k * 2**e) for e in range(2, 15) for k in (1, 1.5)})


@dataclass
class Timings:
    """Distinct batches (medians of repeats): counts and contexts per phase, time in seconds."""

    n_p: np.ndarray
    c_p: np.ndarray
    m_p: np.ndarray
    n_d: np.ndarray
    m_d: np.ndarray
    time: np.ndarray
    repeats: np.ndarray
    layout: str
    rows: int

    def __len__(self) -> int:
        return len(self.time)

    def phase(self) -> np.ndarray:
        """0 prefill-only, 1 decode-only, 2 mixed."""
        return np.where(self.n_d == 0, 0, np.where(self.n_p == 0, 1, 2))

    def batch(self, k: int):
        """(c, m, decode) arrays of batch k, as the cost models take them."""
        n_p, n_d = int(self.n_p[k]), int(self.n_d[k])
        c = np.r_[np.full(n_p, self.c_p[k]), np.ones(n_d)]
        m = np.r_[np.full(n_p, self.m_p[k]), np.full(n_d, self.m_d[k])]
        return c, m, np.r_[np.zeros(n_p, bool), np.ones(n_d, bool)]


def _filters(df: pd.DataFrame, items: list[str] | None, flag: str) -> list[tuple[str, str]]:
    pairs = []
    for item in items or []:
        for part in item.split(","):
            key, sep, value = part.partition("=")
            if not sep or key not in df.columns:
                raise InputError(f"{flag}: expected COLUMN=VALUE with a column of the file "
                                 f"({', '.join(map(str, df.columns))}), got {part!r}")
            pairs.append((key, value))
    return pairs


def _match(df: pd.DataFrame, pairs) -> np.ndarray:
    ok = np.ones(len(df), bool)
    for key, value in pairs:
        ok &= df[key].astype(str).to_numpy() == value
    return ok


def read_timings(path: str, where: list[str] | None = None, exclude: list[str] | None = None) -> Timings:
    """Read a timings CSV. ``where``: keep rows with COLUMN=VALUE (repeatable flags AND together);
    ``exclude``: drop rows matching all pairs of one ``A=x,B=y`` item (repeatable: any item)."""
    try:
        df = pd.read_csv(path)
    except FileNotFoundError:
        raise InputError("no such timings file", source=path) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a timings CSV", source=path) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise InputError(f"not a CSV file: {e}", source=path) from None
    keep = _match(df, _filters(df, where, "--where"))
    for item in exclude or []:
        keep &= ~_match(df, _filters(df, [item], "--exclude"))
    df = df[keep]
    if set(TIMINGS_COLUMNS) <= set(df.columns):
        layout = "lpbench-timings-v1"
        cols = {k: pd.to_numeric(df[k], errors="coerce") for k in TIMINGS_COLUMNS}
        frame = pd.DataFrame({"n_p": cols["n_prefill"], "c_p": cols["prefill_tokens"], "m_p": cols["prefill_context"],
                              "n_d": cols["n_decode"], "m_d": cols["decode_context"], "time": cols["time_s"]})
    elif set(SPLITWISE_COLUMNS) <= set(df.columns):
        layout = "splitwise"
        b, p, t = (pd.to_numeric(df[k], errors="coerce") for k in ("batch_size", "prompt_size", "token_size"))
        zero = 0 * b
        pre = pd.DataFrame({"n_p": b, "c_p": p, "m_p": zero, "n_d": zero, "m_d": zero,
                            "time": pd.to_numeric(df["prompt_time"], errors="coerce") / 1e3})
        dec = pd.DataFrame({"n_p": zero, "c_p": zero, "m_p": zero, "n_d": b, "m_d": p + (t - 2) / 2,
                            "time": pd.to_numeric(df["token_time"], errors="coerce") / 1e3})
        frame = pd.concat([pre, dec], ignore_index=True)
    else:
        raise InputError(f"unknown timings layout: expected the columns {', '.join(TIMINGS_COLUMNS)} "
                         f"(lpbench profile) or {', '.join(SPLITWISE_COLUMNS)} (splitwise perf_model.csv)",
                         source=path)
    bad = frame.isna().any(axis=1) | (frame[["n_p", "c_p", "m_p", "n_d", "m_d"]] < 0).any(axis=1) \
        | (frame.time <= 0) | (frame.n_p + frame.n_d < 1) | ((frame.n_p > 0) & (frame.c_p < 1))
    if bad.any():
        k = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{int(bad.sum())} row(s) with a missing, negative or empty batch or a time <= 0; "
                         f"first: {frame.iloc[k].to_dict()}", source=path)
    g = frame.groupby(["n_p", "c_p", "m_p", "n_d", "m_d"], sort=True)["time"]
    med = g.median().reset_index()
    reps = g.size().to_numpy()
    if len(med) < 4:
        raise InputError(f"{len(med)} distinct batch(es) after --where/--exclude; calibration needs at least 4 "
                         "(some are held out)", source=path)
    return Timings(*(med[k].to_numpy(float) for k in ("n_p", "c_p", "m_p", "n_d", "m_d", "time")),
                   repeats=reps, layout=layout, rows=int(keep.sum()))


# -- design matrices: time = X @ theta, one column per coefficient of the form ------------------------

def design(form: str, t: Timings, knobs: dict) -> tuple[np.ndarray, list[str]]:
    """Columns of the form's batch time, linear in the coefficients once ``knobs`` are fixed."""
    ones = np.ones(len(t))
    tokens = t.n_p * t.c_p + t.n_d  # b = Σ c
    if form == "linear":  # seed 001 eq. (1): d0 + d1 Σ (m + c)
        return np.column_stack([ones, t.n_p * (t.m_p + t.c_p) + t.n_d * (t.m_d + 1)]), ["d0", "d1"]
    if form == "piecewise":  # seed 002 eq. (2.3): c + a max(0, b - b0)
        return np.column_stack([ones, np.maximum(0.0, tokens - knobs["b0"])]), ["c", "a"]
    if form == "staircase":  # seed 002 v3 Assumption 1: c + a ceil(b / b0)
        return np.column_stack([ones, np.ceil(tokens / knobs["b0"])]), ["c", "a"]
    if form == "infermax":  # seed 003 §3.2, per layer in ms, times layers * 1e-3 s
        scale = knobs["layers"] * 1e-3
        gqa_d = 1.0 + knobs["phi"] * (t.n_d > 1)
        gqa_p = 1.0 + knobs["phi"] * (t.n_p > 1)
        has_d, has_p = (t.n_d > 0).astype(float), (t.n_p > 0).astype(float)
        cols = {"a_o": tokens, "b_o": ones,
                "a_d": t.n_d * (t.m_d + 1) * gqa_d, "b_d": has_d * gqa_d, "s_d": t.n_d,
                "a_p": t.n_p * (t.c_p ** 2 + 2 * t.c_p * t.m_p) * gqa_p, "b_p": has_p * gqa_p, "s_p": t.n_p,
                "m_p": t.n_p * t.m_p}
        return scale * np.column_stack(list(cols.values())), list(cols)
    raise InputError(f"--form: {form!r} cannot be calibrated; expected one of: {', '.join(FITTABLE)}, auto")


def _nonneg_lsq(X: np.ndarray, y: np.ndarray, relative: bool) -> np.ndarray:
    from scipy.optimize import lsq_linear

    w = 1.0 / y if relative else np.ones_like(y)
    A = X * w[:, None]
    scale = np.linalg.norm(A, axis=0)
    live = scale > 0  # a coefficient whose feature is 0 on every training batch is not identified: 0
    theta = np.zeros(X.shape[1])
    if live.any():
        res = lsq_linear(A[:, live] / scale[live], y * w, bounds=(0.0, np.inf), method="bvls")
        theta[live] = np.maximum(res.x, 0.0) / scale[live]  # bvls may return -1e-19 for an active bound
    return theta


def folds(t: Timings, k: int, seed: int) -> np.ndarray:
    """Fold index (0..k-1) of every batch: each phase dealt round-robin in a seeded random order."""
    rng = np.random.default_rng(seed)
    fold = np.zeros(len(t), int)
    for ph in (0, 1, 2):
        idx = np.flatnonzero(t.phase() == ph)
        fold[rng.permutation(idx)] = np.arange(len(idx)) % k
    return fold


def stats(pred: np.ndarray, y: np.ndarray) -> dict:
    rel = np.abs(pred - y) / y
    sst = float(((y - y.mean()) ** 2).sum())
    return {"batches": int(len(y)), "r2": 1.0 - float(((pred - y) ** 2).sum()) / sst if sst > 0 else math.nan,
            "mape": float(rel.mean()), "worst_rel_error": float(rel.max())}


@dataclass
class Fit:
    form: str
    coefficients: dict
    train: dict
    heldout: dict
    knobs: dict


def _fit_once(form: str, t: Timings, train: np.ndarray, relative: bool, layers: int, phi: float):
    """(theta, design X, knobs) fitted on the ``train`` batches; b0 by training error."""
    y = t.time
    if form in ("piecewise", "staircase"):
        best = None
        for b0 in B0_GRID:
            X, _ = design(form, t, {"b0": b0})
            th = _nonneg_lsq(X[train], y[train], relative)
            r = X[train] @ th - y[train]
            loss = float(((r / y[train]) ** 2).sum()) if relative else float((r ** 2).sum())
            if best is None or loss < best[0] - 1e-15:
                best = (loss, th, X, {"b0": b0})
        return best[1:]
    knobs = {"layers": layers, "phi": phi} if form == "infermax" else {}
    X, _ = design(form, t, knobs)
    return _nonneg_lsq(X[train], y[train], relative), X, knobs


def fit_form(form: str, t: Timings, fold: np.ndarray, relative: bool = True, layers: int = 1,
             phi: float = 0.0) -> Fit:
    """Fit one form on all batches (the shipped coefficients) and K times without one fold (the
    held-out predictions)."""
    y = t.time
    held = np.empty(len(t))
    for f in np.unique(fold):
        theta, X, _ = _fit_once(form, t, fold != f, relative, layers, phi)
        held[fold == f] = (X @ theta)[fold == f]
    theta, X, knobs = _fit_once(form, t, np.ones(len(t), bool), relative, layers, phi)
    _, names = design(form, t, knobs)
    coef = {**dict(zip(names, (float(v) for v in theta))), **knobs}
    model = costmodels.build({"form": form, **coef})
    pred = X @ theta
    for k in range(len(t)):  # the design matrix is the form's own batch_time (one semantics)
        direct = model.batch_time(*t.batch(k))
        if not math.isclose(direct, pred[k], rel_tol=1e-9, abs_tol=1e-12):
            raise AssertionError(f"calibrate: design of {form!r} disagrees with batch_time on batch {k}: "
                                 f"{pred[k]} != {direct}")
    return Fit(form, coef, stats(pred, y), stats(held, y), knobs)


def check_knobs(layers: int, phi: float) -> None:
    """--layers and --phi as the infermax form takes them, checked before the design matrix (``--phi 1e300``
    overflowed there with a numpy warning before the coefficient check refused it)."""
    from .costmodels import MAX_COEFFICIENT

    if isinstance(layers, bool) or not isinstance(layers, int) or not 1 <= layers <= 10_000:
        raise InputError(f"--layers: must be an integer in [1, 10000] (transformer layers), got {layers!r}")
    if not (isinstance(phi, (int, float)) and math.isfinite(phi) and 0 <= phi <= MAX_COEFFICIENT):
        raise InputError(f"--phi: must be a finite number in [0, {MAX_COEFFICIENT:g}] (the GQA batching overhead), "
                         f"got {phi!r}")


def calibrate(t: Timings, form: str, k: int = 4, seed: int = 0, relative: bool = True,
              layers: int = 1, phi: float = 0.0) -> tuple[Fit, list[Fit]]:
    """The fit of ``form`` (or, for ``auto``, of the fittable form with the lowest held-out MAPE)
    and every fit tried."""
    if not 2 <= k <= len(t):
        raise InputError(f"--folds: must be between 2 and the {len(t)} distinct batches, got {k}")
    check_knobs(layers, phi)
    fold = folds(t, k, seed)
    if form != "auto":
        fits = [fit_form(form, t, fold, relative, layers, phi)]
    else:  # a candidate whose fit is no valid cost model (e.g. a one-token batch under MIN_BATCH_TIME) is skipped
        fits = []
        for f in FITTABLE:
            try:
                fits.append(fit_form(f, t, fold, relative, layers, phi))
            except InputError as e:
                warnings.warn(f"calibrate: form {f!r} skipped: {' '.join(e.lines())}", LpbenchWarning, stacklevel=2)
        if not fits:
            raise InputError("--form auto: no fittable form gives a valid cost model on these timings (see the "
                             "warnings above)")
    return min(fits, key=lambda f: f.heldout["mape"]), fits


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, float):
        return repr(float(v)) if math.isfinite(v) else '"nan"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return '"' + _one_line(str(v).replace("\\", "\\\\").replace('"', '\\"')) + '"'


def _one_line(text: str) -> str:
    """``text`` with line breaks and other control characters written as \\uXXXX (a TOML escape in a string; in a
    comment, where TOML forbids them, the same keeps the comment on its line)."""
    return "".join(c if c >= " " and c != "\x7f" else f"\\u{ord(c):04x}" for c in text)


def profile_toml(fit: Fit, t: Timings, path: str, command: str, description: str, where, exclude,
                 folds: int, seed: int, loss: str, note: str | None = None) -> str:
    """The profile file: coefficients, and the fit statistics in a [fit] table and a comment."""
    h = fit.heldout
    source = (f"lpbench calibrate ({loss} least squares, coefficients >= 0) on {Path(path).name} ({t.layout} "
              f"layout, sha256 {sha256(path)[:16]}); see [fit] and the command above.")
    lines = [f"# Calibrated by: {_one_line(command)}"]
    if note:
        lines.append(f"# Note: {_one_line(note)}")
    lines += [f"# held-out ({folds}-fold cross-validation over {len(t)} distinct batches): R2 = {h['r2']:.4f}, "
              f"MAPE = {100 * h['mape']:.2f} %, worst relative error = {100 * h['worst_rel_error']:.2f} %",
              f"description = {_toml_value(description)}", f"source = {_toml_value(source)}",
              f"form = {_toml_value(fit.form)}", "", "[coefficients]"]
    lines += [f"{name} = {_toml_value(v)}" for name, v in fit.coefficients.items()]
    lines += ["", "[fit]", f"data = {_toml_value(Path(path).name)}", f"layout = {_toml_value(t.layout)}",
              f"where = {_toml_value(list(where or []))}", f"exclude = {_toml_value(list(exclude or []))}",
              f"loss = {_toml_value(loss)}", f"folds = {folds}", f"seed = {seed}", f"rows = {t.rows}",
              f"distinct_batches = {len(t)}"]
    for which, st in (("insample", fit.train), ("heldout", fit.heldout)):
        lines += [f"{which}_{name} = {_toml_value(v)}" for name, v in st.items()]
    return "\n".join(lines) + "\n"
