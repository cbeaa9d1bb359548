"""Paper-style tables and figures from a results store (``lpbench.bench.store.read_run``)."""
