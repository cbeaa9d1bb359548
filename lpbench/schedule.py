"""Schedules: the common currency of policies and solvers.

A schedule is the ordered list of batches. Batch j has a start time and, for each request it
touches, the tokens processed (c >= 1) -- or an eviction (the request's KV is dropped before the batch
runs; in the batch model it does no work in that batch, in the slot model it may start again in it, as a
fresh run, see :mod:`lpbench.semantics`). Stored columnar (CSR over batches) so
that a 20,000-request trace with millions of token steps stays compact; serialised as JSON::

    {"format": "lpbench-schedule-v1", "instance": NAME, "instance_sha256": "sha256:...",
     "batches": [{"start": 0.0, "requests": [id, ...], "tokens": [c, ...], "evict": [id, ...]}, ...]}

Request ids are the instance's ids (its ``id`` field, else the position in the file).

Several engines (``limits.engines`` = K > 1, :mod:`lpbench.sim.multi`): each batch also names its engine
(``"engine": e``, 0..K-1), and the top-level ``"moves"`` lists the KV transfers between engines, each
``{"request": id, "to": e, "start": t}`` (the rules are in :mod:`lpbench.semantics`, "Several engines").
A one-engine schedule has neither key, so its JSON is unchanged.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .errors import InputError
from .instance import MAX_INT, Instance

FORMAT = "lpbench-schedule-v1"


class Moves(NamedTuple):
    """KV transfers between engines: request ``req[k]`` moves to engine ``to[k]``, starting at ``start[k]``."""
    req: np.ndarray    # int64[nm], sorted request index
    to: np.ndarray     # int64[nm]
    start: np.ndarray  # float64[nm]


@dataclass
class Schedule:
    start: np.ndarray   # float64[nb]
    ptr: np.ndarray     # int64[nb+1], entries of batch j are req[ptr[j]:ptr[j+1]]
    req: np.ndarray     # int64[ne], sorted request index
    tokens: np.ndarray  # int64[ne]
    eptr: np.ndarray    # int64[nb+1], evictions of batch j are evict[eptr[j]:eptr[j+1]]
    evict: np.ndarray   # int64[nev]
    engine: np.ndarray | None = None  # int64[nb]: the engine of each batch (None: one engine)
    moves: Moves | None = None         # KV transfers between engines (None: no request moves)

    @property
    def n_batches(self) -> int:
        return len(self.start)

    def batch(self, j: int):
        a, b = self.ptr[j], self.ptr[j + 1]
        return self.req[a:b], self.tokens[a:b], self.evict[self.eptr[j]:self.eptr[j + 1]]

    def to_dict(self, inst: Instance) -> dict:
        ids = inst.ids
        integral = inst.model == "slot"
        batches = []
        for j in range(self.n_batches):
            r, c, e = self.batch(j)
            b = {"start": int(self.start[j]) if integral else float(self.start[j]),
                 "requests": [ids[i] for i in r.tolist()], "tokens": c.tolist()}
            if len(e):
                b["evict"] = [ids[i] for i in e.tolist()]
            if self.engine is not None:
                b["engine"] = int(self.engine[j])
            batches.append(b)
        out = {"format": FORMAT, "instance": inst.name, "instance_sha256": inst.content_hash(), "batches": batches}
        if self.moves is not None:
            out["moves"] = [{"request": ids[i], "to": int(e), "start": float(t)}
                            for i, e, t in zip(self.moves.req.tolist(), self.moves.to.tolist(), self.moves.start.tolist())]
        return out

    @classmethod
    def from_dict(cls, data, inst: Instance) -> "Schedule":
        """Parse schedule JSON against ``inst``; malformed input raises InputError (not a violation)."""
        if not isinstance(data, dict) or not isinstance(data.get("batches"), list):
            raise InputError("batches: a schedule must be an object with a 'batches' array")
        if data.get("format", FORMAT) != FORMAT:
            raise InputError(f"format: expected {FORMAT!r} (or no format key), got {data['format']!r}")
        made_for = data.get("instance_sha256")
        if made_for is not None and not isinstance(made_for, str):
            raise InputError(f"instance_sha256: must be a string (the instance's content hash), got {made_for!r}")
        if made_for is not None and made_for != inst.content_hash():
            raise InputError(f"instance_sha256: this schedule was made for another instance "
                             f"({data.get('instance')!r}, {str(made_for)[:19]}...), not for {inst.name!r} "
                             f"({inst.content_hash()[:19]}...)")
        index = inst.index_of()
        builder = ScheduleBuilder()
        problems: list[str] = []
        K = inst.limits.K
        engines: list[int] = []
        for j, b in enumerate(data["batches"]):
            path = f"batches[{j}]"
            if not isinstance(b, dict):
                problems.append(f"{path}: must be an object, got {b!r}")
                continue
            for key in b:
                if key not in ("start", "requests", "tokens", "evict", "engine"):
                    problems.append(f"{path}.{key}: unknown key; expected start, requests, tokens, evict, engine")
            engine = b.get("engine", 0)
            if isinstance(engine, bool) or not isinstance(engine, int) or not 0 <= engine < K:
                problems.append(f"{path}.engine: must be an integer in 0..{K - 1} (limits.engines = {K}), got {engine!r}")
                continue
            engines.append(engine)
            start = b.get("start")
            if isinstance(start, bool) or not isinstance(start, (int, float)) or not math.isfinite(start):
                problems.append(f"{path}.start: must be a finite number, got {start!r}")
                continue
            reqs, toks, ev = b.get("requests", []), b.get("tokens", []), b.get("evict", [])
            if not isinstance(reqs, list) or not isinstance(toks, list) or not isinstance(ev, list):
                problems.append(f"{path}: requests, tokens and evict must be arrays")
                continue
            if len(reqs) != len(toks):
                problems.append(f"{path}.tokens: must have one entry per request ({len(reqs)}), got {len(toks)}")
                continue
            r_idx, e_idx = [], []
            for k, rid in enumerate(reqs):
                if not _known(rid, index):
                    problems.append(f"{path}.requests[{k}]: unknown request id {rid!r}")
                else:
                    r_idx.append(index[rid])
            for k, c in enumerate(toks):
                if isinstance(c, bool) or not isinstance(c, int):
                    problems.append(f"{path}.tokens[{k}]: must be an integer, got {c!r}")
                elif not -MAX_INT <= c <= MAX_INT:  # would overflow int64; no real batch is this large
                    problems.append(f"{path}.tokens[{k}]: must be at most {MAX_INT} in magnitude, got {c}")
            for k, rid in enumerate(ev):
                if not _known(rid, index):
                    problems.append(f"{path}.evict[{k}]: unknown request id {rid!r}")
                else:
                    e_idx.append(index[rid])
            if len(problems) >= 50:
                break
            if not problems:
                builder.add(float(start), np.array(r_idx, dtype=np.int64), np.array(toks, dtype=np.int64),
                            np.array(e_idx, dtype=np.int64))
        moves = _parse_moves(data.get("moves"), index, K, problems) if "moves" in data else None
        if problems:
            raise InputError(problems[:50])
        sched = builder.build()
        if K > 1 or any(engines) or moves is not None:
            sched.engine = np.array(engines, dtype=np.int64)
            sched.moves = moves
        return sched


def _known(rid, index: dict) -> bool:
    """Whether ``rid`` is a request id of the instance: a string or an integer (ids are never booleans or
    floats, though ``True == 1`` and ``1.0 == 1`` as dict keys)."""
    return isinstance(rid, (str, int)) and not isinstance(rid, bool) and rid in index


def _parse_moves(moves, index: dict, K: int, problems: list[str]) -> Moves | None:
    if not isinstance(moves, list):
        problems.append(f"moves: must be an array of {{request, to, start}} objects, got {moves!r}"[:200])
        return None
    req, to, start = [], [], []
    for k, mv in enumerate(moves):
        path = f"moves[{k}]"
        if not isinstance(mv, dict) or set(mv) != {"request", "to", "start"}:
            problems.append(f"{path}: must be an object with exactly request, to, start, got {mv!r}"[:200])
            continue
        rid, e, t = mv["request"], mv["to"], mv["start"]
        if not _known(rid, index):
            problems.append(f"{path}.request: unknown request id {rid!r}")
        elif isinstance(e, bool) or not isinstance(e, int) or not 0 <= e < K:
            problems.append(f"{path}.to: must be an integer in 0..{K - 1} (limits.engines = {K}), got {e!r}")
        elif isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
            problems.append(f"{path}.start: must be a finite number, got {t!r}")
        else:
            req.append(index[rid])
            to.append(e)
            start.append(float(t))
    return Moves(np.array(req, dtype=np.int64), np.array(to, dtype=np.int64), np.array(start, dtype=np.float64))


class ScheduleBuilder:
    """Append batches one at a time (or runs of one repeated batch), then :meth:`build` the columnar
    Schedule."""

    _EMPTY = np.zeros(0, dtype=np.int64)

    def __init__(self):
        self.starts: list[float] = []
        # (requests, tokens, evictions, copies): one batch, or a run of ``copies`` identical batches
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []

    def add(self, start: float, req, tokens, evict=None) -> None:
        self.starts.append(float(start))
        self.parts.append((np.asarray(req, dtype=np.int64), np.asarray(tokens, dtype=np.int64),
                           self._EMPTY if evict is None else np.asarray(evict, dtype=np.int64), 1))

    def add_run(self, starts, req, tokens) -> None:
        """Append ``len(starts)`` batches that process the same ``req`` and ``tokens`` (no evictions)."""
        self.starts.extend(np.asarray(starts, dtype=np.float64).tolist())
        self.parts.append((np.asarray(req, dtype=np.int64), np.asarray(tokens, dtype=np.int64), self._EMPTY,
                           len(starts)))

    def build(self) -> Schedule:
        parts = self.parts
        copies = np.fromiter((p[3] for p in parts), dtype=np.int64, count=len(parts))
        n_batches = int(copies.sum())

        def pointers(lens):
            ptr = np.zeros(n_batches + 1, dtype=np.int64)
            np.cumsum(np.repeat(lens, copies), out=ptr[1:])
            return ptr

        def data(k, keep=None):  # the parts' k-th arrays, a run's tiled ``copies`` times
            arrays = [p[k] if p[3] == 1 else np.tile(p[k], p[3]) for p in (parts if keep is None else keep)]
            return np.concatenate(arrays).astype(np.int64, copy=False) if arrays else np.zeros(0, dtype=np.int64)

        # requests and tokens have the same lengths; evictions happen in few batches (never in a run)
        ptr = pointers(np.fromiter((len(p[0]) for p in parts), dtype=np.int64, count=len(parts)))
        eptr = pointers(np.fromiter((len(p[2]) for p in parts), dtype=np.int64, count=len(parts)))
        return Schedule(np.asarray(self.starts, dtype=np.float64), ptr, data(0), data(1), eptr,
                        data(2, [p for p in parts if len(p[2])]))
