"""Paper-style tables and figures from a results store (``lpbench.bench.store.read_run``).

The names below are what the CLI offers; they live here, apart from :mod:`.tables` and :mod:`.plots`, so
that building the parser does not import pandas and matplotlib (about 0.5 s on every ``lpbench`` command)."""

TABLE_KINDS = ("latency", "ratio", "gap", "solves", "csp51")   # the keys of tables.TABLES, in this order
TABLE_FORMATS = ("md", "latex", "csv")
PLOT_KINDS = ("ratio", "latency", "memory", "gantt")
