"""Each cost model against values computed by hand from its formula (see each form's docstring)."""
import numpy as np
import pytest

from lpbench import costmodels
from lpbench.errors import InputError


def t(model, c, m, decode):
    return model.batch_time(np.array(c), np.array(m), np.array(decode, dtype=bool))


def test_unit():
    assert t(costmodels.build({"form": "unit"}), [5, 1], [0, 9], [False, True]) == 1.0


def test_linear_counts_kv_after_the_batch():
    lin = costmodels.build({"form": "linear", "d0": 0.4, "d1": 0.05})
    # prefill 3 tokens (KV 3) + decode at m=5 (KV 6): 0.4 + 0.05 * 9
    assert t(lin, [3, 1], [0, 5], [False, True]) == pytest.approx(0.85)


def test_infermax_7b_one_4096_prefill():
    im = costmodels.load_profile("infermax-llama2-7b-a100")
    # per layer: a_o*4096 + b_o + a_p*4096^2 + b_p + s_p = 10.796427 ms; x 32 layers
    expect = 32 * (0.00191 * 4096 + 0.06486 + 1.6773e-07 * 4096**2 + 0.0926 + 0.001534) * 1e-3
    assert t(im, [4096], [0], [False]) == pytest.approx(expect, rel=1e-12)
    assert t(im, [4096], [0], [False]) == pytest.approx(0.346, abs=0.001)  # notes seed-003 §1.4


def test_infermax_7b_decodes():
    im = costmodels.load_profile("infermax-llama2-7b-a100")
    # single decode at m=100 reads kv = 101: 32*(a_o + b_o + a_d*101 + b_d + s_d) ms = 2.80 ms
    one = 32 * (0.00191 + 0.06486 + 8.513e-06 * 101 + 0.01921 + 0.00074) * 1e-3
    assert t(im, [1], [100], [True]) == pytest.approx(one, rel=1e-12)
    assert t(im, [1], [100], [True]) == pytest.approx(0.0028, abs=1e-4)
    # 98 decodes at m=1500: about 51 ms (notes seed-003 §1.4)
    assert t(im, [1] * 98, [1500] * 98, [True] * 98) == pytest.approx(0.051, abs=0.0005)


def test_infermax_70b_gqa_factor_and_chunked_prefill():
    im = costmodels.load_profile("infermax-llama3-70b-tp4-a100")
    assert t(im, [4096], [0], [False]) == pytest.approx(0.743, abs=0.001)
    # two prefill chunks (c=100 at m=50, c=20 at m=0) and one decode: phi=0.1 applies to the
    # prefill term (2 prefills) and not to the decode term (1 decode)
    other = 0.002 * 121 + 0.159
    dec = (1.222e-06 * 301 + 0.081) + 3.92e-04
    pre = (4.309e-08 * (100**2 + 2 * 100 * 50 + 20**2) + 0.2112) * 1.1 + 2 * 9.03e-04 + 3.805e-07 * 50
    assert t(im, [100, 20, 1], [50, 0, 300], [False, False, True]) == pytest.approx(80 * (other + dec + pre) * 1e-3)


def test_piecewise_and_staircase():
    pw = costmodels.load_profile("li-llama3-70b-2xa100")
    assert t(pw, [10], [0], [False]) == pytest.approx(0.0455)
    assert t(pw, [60, 40], [0, 0], [False, False]) == pytest.approx(0.0455 + 0.0003 * 36)
    sc = costmodels.build({"form": "staircase", "c": 1.0, "a": 2.0, "b0": 128})
    assert t(sc, [128], [0], [False]) == pytest.approx(3.0)
    assert t(sc, [129], [0], [False]) == pytest.approx(5.0)


def test_tiled_eq7_by_hand():
    tl = costmodels.build({"form": "tiled", "nu_lin": 1, "T_col": 2, "nu_nlin": 10, "N": 2, "nu_gemv": 1,
                           "d": 4, "T_row_v": 2, "T_col_v": 2, "S": 1, "nu_gemm": 1, "T_row": 2, "T_red": 2})
    # n = 4 tokens: linear ceil(4/2) = 2, non-linear 4/10 = 0.4
    # decode at m=3 (i=4): t_datt = (4/2)ceil(4/2) + ceil(4/2)(4/2) = 8, times N=2 -> 16
    # prefill c=3 at m=0 (3 keys): [ceil(3/2)ceil(3/2)(4/2) + (4/2)ceil(3/2)ceil(3/2)] = 16, times N/(S nu) = 2 -> 32
    assert t(tl, [1, 3], [3, 0], [True, False]) == pytest.approx(2 + 0.4 + 16 + 32)


def test_inline_spec_errors_name_the_field():
    with pytest.raises(InputError) as e:
        costmodels.build({"form": "linear", "d0": 1, "d2": 3})
    assert "cost_model.d2: unknown coefficient for form 'linear'; expected d0, d1" in e.value.problems
    assert "cost_model.d1: missing coefficient required by form 'linear'" in e.value.problems
    with pytest.raises(InputError, match="cost_model.form: unknown cost-model form 'cubic'"):
        costmodels.build({"form": "cubic"})
    with pytest.raises(InputError, match="unknown profile 'nope'"):
        costmodels.build("nope")
    # a name longer than the system allows for a file name: the same message, not an OSError (CLI audit, 2026-12-03)
    with pytest.raises(InputError, match="cost_model: unknown profile 'mmm.*expected one of"):
        costmodels.build("m" * 300)


def test_every_profile_loads_and_names_its_source():
    for name in costmodels.profile_names():
        prof = costmodels.read_profile(name)
        assert prof.get("source"), name
        model = costmodels.load_profile(name)
        assert t(model, [16, 1], [0, 40], [False, True]) > 0


@pytest.mark.parametrize("spec", ["infermax-llama2-7b-a100", "li-llama3-70b-2xa100",
                                  {"form": "linear", "d0": 0.4, "d1": 0.05}, {"form": "unit"},
                                  {"form": "staircase", "c": 0.02, "a": 0.01, "b0": 128},
                                  {"form": "infermax", "a_o": 0.002, "b_o": 0.06, "a_d": 8e-6, "b_d": 0.02,
                                   "s_d": 7e-4, "a_p": 1.7e-7, "b_p": 0.09, "s_p": 0.0015, "m_p": 3e-6,
                                   "layers": 80, "phi": 0.1}])
def test_bulk_forms_are_batch_time_bit_for_bit(spec):
    """batch_times and repeat_times return exactly (==, not approx) what batch_time returns batch by
    batch: the simulator and the verifier use them in its place."""
    model = costmodels.build(spec) if isinstance(spec, dict) else costmodels.load_profile(spec)
    rng = np.random.default_rng(0)
    lens = rng.integers(1, 9, 40)
    ptr = np.r_[0, np.cumsum(lens)]
    c = rng.integers(1, 5000, ptr[-1])
    m = rng.integers(0, 200_000, ptr[-1])
    decode = rng.random(ptr[-1]) < 0.6
    c[decode] = 1
    one_by_one = [model.batch_time(c[a:b], m[a:b], decode[a:b]) for a, b in zip(ptr[:-1], ptr[1:])]
    as_float = [model.batch_time(c[a:b] * 1.0, m[a:b] * 1.0, decode[a:b]) for a, b in zip(ptr[:-1], ptr[1:])]
    assert one_by_one == as_float  # integer inputs may take an exact integer path: the same floats
    assert model.batch_times(c, m, decode, ptr).tolist() == one_by_one
    for n_pre in (0, 1, 3):  # decodes only, and with prefill chunks
        c = np.r_[rng.integers(1, 3000, n_pre), np.ones(37, dtype=np.int64)]
        m0 = rng.integers(0, 100_000, n_pre + 37)
        decode = np.r_[np.zeros(n_pre, dtype=bool), np.ones(37, dtype=bool)]
        run = [model.batch_time(c, m0 + s * c, decode) for s in range(50)]
        assert model.repeat_times(c, m0, decode, 50).tolist() == run
