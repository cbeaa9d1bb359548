"""Streaming import of request traces into batch-model instances (format v1).

Formats: ``azure`` (the Azure LLM inference traces 2023 and 2024, CSV ``TIMESTAMP,ContextTokens,
GeneratedTokens``, CC-BY-4.0), and generic ``csv`` / ``jsonl`` with a column mapping
(``arrival``, ``prompt``, ``output`` column names and a time unit).

The file is read row by row (``csv`` module / one JSON object per line); what is kept is held in
compact typed arrays (24 bytes per request), so memory grows with the requests imported, never with
Python objects per row, and ``limit`` stops the read early. The instance is written as columnar JSON.

Clipping rules, applied in this order to every well-formed row and counted in ``meta.import.counts``:

1. window: with ``start``/``end`` (seconds after the arrival of the file's first well-formed row, before
   rate scaling; the Azure traces are in time order), rows
   with arrival outside ``[start, end)`` are dropped (``outside_window``);
2. zero lengths: a prompt or output of 0 tokens is raised to 1 (``prompt_raised_to_1``,
   ``output_raised_to_1``), since every request processes at least one token (semantics.py);
3. ``max_context`` T: a prompt above T tokens keeps its last T tokens (``prompt_truncated``) and the
   output stops when the context holds T tokens, i.e. output <= T - prompt + 1 so that the peak KV
   footprint prompt + output - 1 is at most T (``output_truncated``);
4. ``memory`` M: a request whose peak footprint prompt + output - 1 exceeds M can never run and is
   dropped (``dropped_exceeds_memory``);
5. ``limit`` N: reading stops after N kept requests (``limit_reached`` true/false).

Arrivals are then sorted (stable), shifted so that the first kept request arrives at 0, and divided by
``rate_scale`` (X = 2 doubles the arrival rate). Malformed rows (missing field, not a number,
negative, a timestamp that does not parse) raise :class:`InputError` naming the line and the column,
or, with ``skip_bad``, are skipped and counted (``skipped_malformed``, with the first few listed).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import re
from array import array
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .errors import InputError
from .instance import MAX_INT

FORMATS = ("azure", "csv", "jsonl")
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "iso": None}
AZURE_COLUMNS = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
AZURE_LICENCE = "CC-BY-4.0"
AZURE_ATTRIBUTION = ("Azure LLM inference traces (Azure/AzurePublicDataset), CC-BY-4.0. Cite: Patel et al., "
                     "'Splitwise: Efficient Generative LLM Inference Using Phase Splitting', ISCA 2024 (2023 "
                     "traces); Stojkovic et al., 'DynamoLLM', HPCA 2025 (2024 traces).")
#: malformed rows listed in the metadata with --skip-bad (the count is always complete)
LIST_BAD = 20
_FRACTION = re.compile(r"\.(\d{7,})")


@dataclass
class ImportSpec:
    """What to read and how: the column mapping, the window and the clipping limits."""

    fmt: str
    arrival: str = "TIMESTAMP"
    prompt: str = "ContextTokens"
    output: str = "GeneratedTokens"
    time_unit: str = "iso"
    start: float | None = None
    end: float | None = None
    limit: int | None = None
    rate_scale: float = 1.0
    max_context: int | None = None
    memory: int = 100_000
    cost_model: str | dict = "infermax-llama2-7b-a100"
    token_budget: int | None = None
    skip_bad: bool = False
    licence: str | None = None
    attribution: str | None = None
    name: str | None = None

    @classmethod
    def for_format(cls, fmt: str, **kw) -> "ImportSpec":
        if fmt not in FORMATS:
            raise InputError(f"FORMAT: must be one of {', '.join(FORMATS)}, got {fmt!r}")
        kw = {k: v for k, v in kw.items() if v is not None}
        if fmt == "azure":  # the column mapping is the format's; the flags may still rename columns
            kw.setdefault("licence", AZURE_LICENCE)
            kw.setdefault("attribution", AZURE_ATTRIBUTION)
        else:
            missing = [f"--{k.replace('_', '-')}" for k in ("arrival", "prompt", "output") if not kw.get(k)]
            if missing:
                raise InputError(f"{', '.join(missing)}: required for format {fmt!r} (the column names)")
            kw.setdefault("time_unit", "s")
        spec = cls(fmt=fmt, **kw)
        spec.check()
        return spec

    def check(self) -> None:
        if self.time_unit not in TIME_UNITS:
            raise InputError(f"--time-unit: must be one of {', '.join(TIME_UNITS)}, got {self.time_unit!r}")
        for flag, v in (("--limit", self.limit), ("--max-context", self.max_context), ("--memory", self.memory),
                        ("--token-budget", self.token_budget)):
            if v is not None and not 1 <= v <= MAX_INT:
                raise InputError(f"{flag}: must be a positive integer up to {MAX_INT}, got {v}")
        if not (self.rate_scale > 0 and math.isfinite(self.rate_scale)):
            raise InputError(f"--rate-scale: must be a positive number, got {self.rate_scale}")
        for flag, v in (("--start", self.start), ("--end", self.end)):
            if v is not None and not (v >= 0 and math.isfinite(v)):
                raise InputError(f"{flag}: must be a number of seconds >= 0, got {v}")
        if self.end is not None and self.end <= (self.start or 0.0):
            raise InputError(f"--end: must be greater than --start ({self.start or 0.0:g} s), got {self.end:g}")


@dataclass
class _Counts:
    rows_read: int = 0
    skipped_malformed: int = 0
    outside_window: int = 0
    prompt_raised_to_1: int = 0
    output_raised_to_1: int = 0
    prompt_truncated: int = 0
    output_truncated: int = 0
    dropped_exceeds_memory: int = 0
    imported: int = 0
    limit_reached: bool = False
    malformed: list = field(default_factory=list)


def parse_timestamp(text: str) -> float:
    """ISO-8601 date-time -> POSIX seconds (naive times are read as UTC). Digits beyond microseconds
    (the 2023 traces carry 7) are cut, a sub-microsecond error."""
    s = _FRACTION.sub(lambda m: "." + m.group(1)[:6], text.strip())
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    dt = datetime.fromisoformat(s)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


class _Hashing(io.TextIOBase):
    """The lines of a file opened in binary, decoded as UTF-8 (a byte-order mark at the start dropped), hashing
    their bytes on the way (the provenance digest, in one pass); a line that is not UTF-8 is refused by its number."""

    def __init__(self, fh, source: str):
        self.fh, self.source, self.sha = fh, source, hashlib.sha256()

    def __iter__(self):
        for number, raw in enumerate(self.fh, 1):
            self.sha.update(raw)
            try:
                yield raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as e:
                raise InputError(f"line {number}: not UTF-8 text ({e.reason} at byte {e.start + 1} of the line)",
                                 source=self.source) from None


def _rows_csv(fh, spec: ImportSpec, source: str):
    """(line number, {column: text}) for each data row; the header must name the mapped columns."""
    reader = csv.reader(fh)
    try:
        header = next(reader)
    except StopIteration:
        raise InputError("empty file, expected a CSV header", source=source) from None
    header = [h.strip() for h in header]
    want = (spec.arrival, spec.prompt, spec.output)
    missing = [c for c in want if c not in header]
    if missing:
        raise InputError(f"line 1: missing column(s) {', '.join(missing)}; the header has {', '.join(header)}",
                         source=source)
    idx = [header.index(c) for c in want]
    for row in reader:
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        yield reader.line_num, {c: (row[i] if i < len(row) else None) for c, i in zip(want, idx)}


def _rows_jsonl(fh, spec: ImportSpec, source: str):
    for lineno, line in enumerate(fh, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            yield lineno, e
            continue
        except RecursionError:
            yield lineno, ValueError("JSON nested too deeply")
            continue
        if not isinstance(obj, dict):
            yield lineno, ValueError(f"expected a JSON object, got {type(obj).__name__}")
            continue
        yield lineno, {c: obj.get(c) for c in (spec.arrival, spec.prompt, spec.output)}


def _length(value, column: str) -> int:
    if isinstance(value, bool) or value is None:
        raise ValueError(f"column {column}: expected a token count (integer >= 0), got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"column {column}: expected a token count (integer >= 0), got {value!r}") from None
    if not math.isfinite(x) or x < 0 or not x.is_integer():
        raise ValueError(f"column {column}: expected a token count (integer >= 0), got {value!r}")
    return int(x)


def _time(value, column: str, unit: str) -> float:
    try:
        if unit == "iso":
            if not isinstance(value, str):
                raise ValueError
            return parse_timestamp(value)
        if isinstance(value, bool) or value is None:
            raise ValueError
        x = float(value) * TIME_UNITS[unit]
        if not math.isfinite(x) or x < 0:
            raise ValueError
        return x
    except (TypeError, ValueError):
        what = "an ISO-8601 date-time" if unit == "iso" else f"a time in {unit} (number >= 0)"
        raise ValueError(f"column {column}: expected {what}, got {value!r}") from None


def read_trace(path: str | os.PathLike, spec: ImportSpec, progress=None) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                                   _Counts, str]:
    """Stream the trace; return sorted (arrival s, prompt, output) arrays, the counts and the sha256."""
    source = str(path)
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise InputError("no such trace file", source=source) from None
    except (IsADirectoryError, PermissionError, OSError) as e:
        raise InputError(f"cannot read trace file: {e}", source=source) from None
    arrival, prompt, output = array("d"), array("q"), array("q")
    counts = _Counts()
    first = None
    with fh:
        lines = _Hashing(fh, source)
        rows = _rows_csv(lines, spec, source) if spec.fmt in ("azure", "csv") else _rows_jsonl(lines, spec, source)
        try:
            for lineno, row in rows:
                counts.rows_read += 1
                if progress and counts.rows_read % 1_000_000 == 0:
                    progress(counts.rows_read)
                try:
                    if isinstance(row, Exception):
                        raise ValueError(f"not JSON: {row}")
                    t = _time(row[spec.arrival], spec.arrival, spec.time_unit)
                    p = _length(row[spec.prompt], spec.prompt)
                    o = _length(row[spec.output], spec.output)
                except ValueError as e:
                    if not spec.skip_bad:
                        raise InputError(f"line {lineno}: {e} (pass --skip-bad to skip malformed rows)",
                                         source=source) from None
                    counts.skipped_malformed += 1
                    if len(counts.malformed) < LIST_BAD:
                        counts.malformed.append(f"line {lineno}: {e}")
                    continue
                if first is None:
                    first = t
                rel = t - first
                if (spec.start is not None and rel < spec.start) or (spec.end is not None and rel >= spec.end):
                    counts.outside_window += 1
                    continue
                if p == 0:
                    p, counts.prompt_raised_to_1 = 1, counts.prompt_raised_to_1 + 1
                if o == 0:
                    o, counts.output_raised_to_1 = 1, counts.output_raised_to_1 + 1
                if spec.max_context is not None:
                    if p > spec.max_context:
                        p, counts.prompt_truncated = spec.max_context, counts.prompt_truncated + 1
                    if p + o - 1 > spec.max_context:
                        o, counts.output_truncated = spec.max_context - p + 1, counts.output_truncated + 1
                if p + o - 1 > spec.memory:
                    counts.dropped_exceeds_memory += 1
                    continue
                arrival.append(rel)
                prompt.append(p)
                output.append(o)
                if spec.limit is not None and len(arrival) >= spec.limit:
                    counts.limit_reached = True
                    break
        except csv.Error as e:
            raise InputError(f"line {counts.rows_read + 2}: malformed CSV ({e})", source=source) from None
    if not arrival:
        raise InputError(f"no request left after import ({counts.rows_read} rows read, "
                         f"{counts.skipped_malformed} malformed, {counts.outside_window} outside the window, "
                         f"{counts.dropped_exceeds_memory} above memory)", source=source)
    a = np.frombuffer(arrival, dtype=np.float64)
    order = np.argsort(a, kind="stable")
    a = a[order]
    a = (a - a[0]) / spec.rate_scale
    counts.imported = len(a)
    digest = lines.sha.hexdigest() if not counts.limit_reached else ""
    return a, np.frombuffer(prompt, dtype=np.int64)[order], np.frombuffer(output, dtype=np.int64)[order], counts, digest


def import_trace(path: str | os.PathLike, spec: ImportSpec, argv: list[str] | None = None,
                 progress=None) -> tuple[dict, dict]:
    """The v1 instance of a trace (batch model, provenance in ``meta``) as (top-level fields, request
    columns as numpy arrays); :func:`lpbench.outputs.write_instance_columns` writes it in one stream."""
    arrival, prompt, output, counts, digest = read_trace(path, spec, progress)
    if len(arrival) and float(arrival[-1]) > MAX_INT:    # what validate would refuse in the written file
        raise InputError(f"--rate-scale: the imported arrivals reach {float(arrival[-1]):.6g} s, above the instance "
                         f"format's limit {MAX_INT} (rate scale {spec.rate_scale:g}; use a larger one or a --end)")
    counts_d = {k: v for k, v in counts.__dict__.items() if k != "malformed"}
    meta = {
        "source": {"file": Path(path).name, "format": spec.fmt,
                   "sha256": digest or "(not computed: --limit stopped the read early)",
                   "licence": spec.licence or "unknown (pass --licence)",
                   "attribution": spec.attribution or "unknown (pass --attribution)"},
        "import": {"tool": "lpbench import", "argv": argv or [],
                   "columns": {"arrival": spec.arrival, "prompt": spec.prompt, "output": spec.output},
                   "time_unit": spec.time_unit, "start": spec.start, "end": spec.end, "limit": spec.limit,
                   "rate_scale": spec.rate_scale, "max_context": spec.max_context, "counts": counts_d},
    }
    if counts.malformed:
        meta["import"]["malformed_first"] = counts.malformed
    head = {"name": spec.name or Path(path).stem, "memory": int(spec.memory), "model": "batch",
            "cost_model": spec.cost_model, "meta": meta}
    if spec.token_budget:
        head["limits"] = {"token_budget": int(spec.token_budget)}
    return head, {"arrival": np.round(arrival, 6), "prompt": prompt, "output": output}
