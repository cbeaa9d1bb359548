"""lpbench calibrate: sign-constrained least squares of cost-model forms to batch timings."""
from pathlib import Path

import numpy as np
import pytest

from lpbench import costmodels
from lpbench.calibrate import calibrate, design, read_timings
from lpbench.cli import main
from lpbench.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
SPLITWISE = ROOT.parent / "shared/data/splitwise-perf/perf_model.csv"
HEADER = "n_prefill,prefill_tokens,prefill_context,n_decode,decode_context,time_s,device\n"


def synthetic(tmp_path, model, seed=0, noise=0.0):
    """Timings of prefill, decode and mixed batches priced by ``model`` (x (1 + noise * N(0,1)))."""
    rng = np.random.default_rng(seed)
    rows = []
    for n_p, c_p, m_p, n_d, m_d in [(b, c, 0, 0, 0) for b in (1, 2, 4) for c in (16, 128, 512)] + \
            [(0, 0, 0, b, m) for b in (1, 8, 32) for m in (64, 512, 2048)] + \
            [(1, c, m, b, 300) for c in (64, 256) for m in (0, 128) for b in (4, 16)]:
        c = np.r_[np.full(n_p, c_p), np.ones(n_d)]
        m = np.r_[np.full(n_p, m_p), np.full(n_d, m_d)]
        t = model.batch_time(c, m, np.r_[np.zeros(n_p, bool), np.ones(n_d, bool)])
        for _ in range(3):
            rows.append(f"{n_p},{c_p},{m_p},{n_d},{m_d},{t * (1 + noise * rng.standard_normal())},cpu\n")
    p = tmp_path / "t.csv"
    p.write_text(HEADER + "".join(rows))
    return p


@pytest.mark.parametrize("spec", [
    {"form": "linear", "d0": 0.02, "d1": 3e-6},
    {"form": "piecewise", "c": 0.03, "a": 2e-4, "b0": 64},
    {"form": "staircase", "c": 0.01, "a": 0.03, "b0": 128},
    {"form": "infermax", **costmodels.read_profile("infermax-llama2-7b-a100")["coefficients"]},
])
def test_exact_timings_recover_the_form(tmp_path, spec):
    model = costmodels.build(spec)
    t = read_timings(str(synthetic(tmp_path, model)))
    best, fits = calibrate(t, spec["form"], layers=int(spec.get("layers", 1)))
    assert best.heldout["mape"] < 1e-6 and best.heldout["r2"] > 1 - 1e-9
    fitted = costmodels.build({"form": spec["form"], **best.coefficients})
    for k in range(len(t)):
        assert fitted.batch_time(*t.batch(k)) == pytest.approx(t.time[k], rel=1e-6)
    if spec["form"] in ("piecewise", "staircase"):
        assert best.coefficients["b0"] == spec["b0"]


def test_auto_picks_the_generating_form_and_coefficients_are_nonnegative(tmp_path):
    model = costmodels.load_profile("infermax-llama2-7b-a100")
    t = read_timings(str(synthetic(tmp_path, model, noise=0.02)))
    best, fits = calibrate(t, "auto", layers=32)
    assert best.form == "infermax" and best.heldout["mape"] < 0.05
    assert {f.form for f in fits} == {"linear", "piecewise", "staircase", "infermax"}
    for f in fits:
        assert all(v >= 0 for v in f.coefficients.values())
        assert f.heldout["mape"] >= best.heldout["mape"]


def test_auto_skips_a_form_whose_fit_is_no_valid_cost_model(tmp_path, monkeypatch):
    """--form auto: a candidate that the cost-model check refuses (a one-token batch under MIN_BATCH_TIME, say)
    is skipped with a warning naming it, not the end of the whole calibration; with no valid candidate left,
    one InputError."""
    import lpbench.calibrate as cal
    from lpbench.errors import LpbenchWarning

    model = costmodels.load_profile("infermax-llama2-7b-a100")
    t = read_timings(str(synthetic(tmp_path, model, noise=0.02)))
    real = cal.fit_form

    def refusing(refused):
        def fit(form, *args, **kwargs):
            if form in refused:
                raise InputError("cost_model: the time of a one-token prefill batch must be finite and at least 1e-06")
            return real(form, *args, **kwargs)
        return fit

    monkeypatch.setattr(cal, "fit_form", refusing({"linear"}))
    with pytest.warns(LpbenchWarning, match="form 'linear' skipped: .*at least 1e-06"):
        best, fits = calibrate(t, "auto", layers=32)
    assert best.form == "infermax" and {f.form for f in fits} == {"piecewise", "staircase", "infermax"}
    monkeypatch.setattr(cal, "fit_form", refusing(set(cal.FITTABLE)))
    with pytest.warns(LpbenchWarning), pytest.raises(InputError, match="no fittable form gives a valid cost model"):
        calibrate(t, "auto", layers=32)


def test_design_is_the_forms_batch_time(tmp_path):
    t = read_timings(str(synthetic(tmp_path, costmodels.load_profile("infermax-llama2-7b-a100"))))
    rng = np.random.default_rng(1)
    for form, knobs in (("linear", {}), ("piecewise", {"b0": 48}), ("staircase", {"b0": 96}),
                        ("infermax", {"layers": 3, "phi": 0.1})):
        X, names = design(form, t, knobs)
        theta = rng.uniform(0.1, 1.0, len(names))
        model = costmodels.build({"form": form, **dict(zip(names, theta)), **knobs})
        for k in range(len(t)):
            assert X[k] @ theta == pytest.approx(model.batch_time(*t.batch(k)), rel=1e-12)


def test_cli_writes_a_listed_profile(tmp_path, capsys, monkeypatch):
    src = synthetic(tmp_path, costmodels.build({"form": "piecewise", "c": 0.03, "a": 2e-4, "b0": 64}), noise=0.01)
    monkeypatch.setenv("LPBENCH_MODELS", str(tmp_path / "models"))
    out = tmp_path / "models" / "mine.toml"
    assert main(["calibrate", str(src), "--form", "auto", "--out", str(out), "--where", "device=cpu"]) == 0
    printed = capsys.readouterr().out
    assert "held-out MAPE" in printed and "<- chosen" in printed
    text = out.read_text()
    assert text.startswith("# Calibrated by: lpbench ") and "heldout_mape = " in text
    model = costmodels.load_profile("mine")
    assert model.form in ("piecewise", "staircase", "infermax")
    assert main(["list", "models"]) == 0 and "mine" in capsys.readouterr().out
    assert main(["calibrate", str(src), "--out", str(out)]) == 2  # never silently overwritten
    assert "already exists" in capsys.readouterr().err


def test_bad_timings_exit_2(tmp_path, capsys):
    p = tmp_path / "bad.csv"
    p.write_text("a,b\n1,2\n")
    assert main(["calibrate", str(p)]) == 2 and "unknown timings layout" in capsys.readouterr().err
    p.write_text(HEADER + "1,10,0,0,0,-1,cpu\n")
    assert main(["calibrate", str(p)]) == 2 and "time <= 0" in capsys.readouterr().err
    src = synthetic(tmp_path, costmodels.build({"form": "linear", "d0": 0.02, "d1": 3e-6}))
    assert main(["calibrate", str(src), "--where", "device=gpu"]) == 2
    assert "at least 4" in capsys.readouterr().err
    assert main(["calibrate", str(src), "--where", "nope=1"]) == 2
    with pytest.raises(InputError, match="cannot be calibrated"):
        design("tiled", read_timings(str(src)), {})


SHIPPED = sorted((ROOT / "models").glob("splitwise-*.toml"))


@pytest.mark.skipif(not SPLITWISE.exists(), reason="splitwise timings not in ../shared/data")
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_splitwise_profiles_reproduce_and_meet_10_percent(path):
    """Each shipped profile is what its recorded command computes, with held-out MAPE <= 10 %."""
    prof = costmodels.read_profile(path.stem)
    fit = prof["fit"]
    t = read_timings(str(SPLITWISE), fit["where"], fit["exclude"])
    best, _ = calibrate(t, prof["form"], fit["folds"], fit["seed"], fit["loss"] == "relative",
                        int(prof["coefficients"].get("layers", 1)), prof["coefficients"].get("phi", 0.0))
    assert best.heldout["mape"] == pytest.approx(fit["heldout_mape"], rel=1e-9)
    assert best.heldout["mape"] <= 0.10
    for k, v in prof["coefficients"].items():
        assert best.coefficients[k] == pytest.approx(v, rel=1e-6, abs=1e-15)
