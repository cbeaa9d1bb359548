"""Batch regression jobs: suites (TOML) x executors (local pool, Dask) -> Parquet results store -> compare.

Sits above :mod:`lpbench.solve`: a bench row is what ``solve_instance`` / ``run_policies`` return, flattened.
"""
