"""Instance generators (seeded, deterministic). Each returns plain instance data (a dict in the v1
format) so it can be written, validated and loaded like any file.

Sizes are bounded: at most :data:`MAX_REQUESTS` requests per instance (``generate --B``/``--requests``,
``capacity --requests``, a suite's ``B``), the order of the 10-million-request traces ``lpbench import`` writes
(a JSON file of about 300 MB); above it the input is refused (exit 2) before anything is allocated. An
instance of at least :data:`ANNOUNCE_REQUESTS` requests is announced with one line on stderr (it takes seconds
to minutes to draw, check and write)."""
from __future__ import annotations

import operator
import sys

from ..errors import InputError

#: the most requests one generated instance may have (the fluid generator's bound, ``fluid.MAX_EXPECTED_REQUESTS``)
MAX_REQUESTS = 10_000_000
#: instances at least this large print a progress line on stderr before they are drawn
ANNOUNCE_REQUESTS = 1_000_000


def check_requests(n, flag: str) -> int:
    """``n`` as a request count in [1, MAX_REQUESTS], else InputError naming ``flag``."""
    try:
        k = None if isinstance(n, bool) else operator.index(n)  # an int or a numpy integer
    except TypeError:
        k = None
    if k is None or not 1 <= k <= MAX_REQUESTS:
        raise InputError(f"{flag}: must be a number of requests in [1, {MAX_REQUESTS:,}], got {n!r}"
                         + (" (a larger instance would not fit in memory or in a JSON file)"
                            if k is not None and k > MAX_REQUESTS else ""))
    return k


def announce(name: str, n: int) -> None:
    """One progress line on stderr for a large instance (nothing below ANNOUNCE_REQUESTS requests)."""
    if n >= ANNOUNCE_REQUESTS:
        print(f"lpbench: generating {name} ({n:,} requests; about {max(1, round(7 * n / 1e6))} s to draw, check "
              "and write)", file=sys.stderr, flush=True)
