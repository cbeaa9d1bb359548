"""Batch times of two or more cost-model profiles on the same reference batches (not a test).

    python benchmarks/compare_profiles.py measured-llama2-7b-h100 infermax-llama2-7b-a100

Prints each profile's coefficients side by side (when the forms match) and the time in ms of
prefill, decode and mixed batches given as (n_prefill, prefill_tokens, prefill_context, n_decode,
decode_context), the layout of lpbench timings v1.
"""
import argparse

import numpy as np

from lpbench import costmodels

BATCHES = [(1, 128, 0, 0, 0), (1, 512, 0, 0, 0), (1, 2048, 0, 0, 0), (4, 1024, 0, 0, 0), (1, 1024, 3072, 0, 0),
           (0, 0, 0, 1, 1024), (0, 0, 0, 16, 1024), (0, 0, 0, 64, 512), (0, 0, 0, 128, 512),
           (1, 256, 0, 32, 1024), (1, 1024, 1024, 32, 1024)]

ap = argparse.ArgumentParser()
ap.add_argument("profiles", nargs="+")
args = ap.parse_args()
models = {name: costmodels.load_profile(name) for name in args.profiles}
if len({m.form for m in models.values()}) == 1:
    print("coefficients " + " ".join(f"{n:>28}" for n in models))
    for k in next(iter(models.values())).coefficients:
        print(f"  {k:<10} " + " ".join(f"{m.coefficients[k]:>28.6g}" for m in models.values()))
print("batch (n_p, c_p, m_p, n_d, m_d)      " + " ".join(f"{n:>28}" for n in models) + "   ratio")
for n_p, c_p, m_p, n_d, m_d in BATCHES:
    c = np.r_[np.full(n_p, c_p), np.ones(n_d)]
    m = np.r_[np.full(n_p, m_p), np.full(n_d, m_d)]
    dec = np.r_[np.zeros(n_p, bool), np.ones(n_d, bool)]
    t = [1e3 * mod.batch_time(c, m, dec) for mod in models.values()]
    print(f"  {str((n_p, c_p, m_p, n_d, m_d)):<35}" + " ".join(f"{x:>25.2f} ms" for x in t)
          + f"   {t[0] / t[1]:.2f}")
