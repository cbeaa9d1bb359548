"""lpbench profile (tiny shape on CPU) feeding lpbench calibrate --form auto; skipped without torch."""
import csv

import pytest

from lpbench.cli import main
from lpbench.profile import COLUMNS, grid

torch = pytest.importorskip("torch")


def test_tiny_cpu_profile_then_calibrate_auto(tmp_path, capsys):
    out = tmp_path / "t.csv"
    assert main(["profile", "--shape", "tiny", "--device", "cpu", "--out", str(out), "--warmup", "1",
                 "--repeats", "2"]) == 0
    rows = list(csv.DictReader(out.open()))
    assert tuple(rows[0]) == COLUMNS
    assert len(rows) == 2 * len(grid("tiny"))
    assert all(float(r["time_s"]) > 0 for r in rows)
    kinds = {(int(r["n_prefill"]) > 0, int(r["n_decode"]) > 0) for r in rows}
    assert kinds == {(True, False), (False, True), (True, True)}  # prefill, decode and mixed batches
    capsys.readouterr()
    assert main(["calibrate", str(out), "--form", "auto", "--out", str(tmp_path / "tiny.toml")]) == 0
    assert "held-out MAPE" in capsys.readouterr().out
    assert main(["profile", "--shape", "nope", "--out", str(tmp_path / "x.csv")]) == 2


def test_prefill_on_a_cache_matches_the_whole_prefill():
    """The bottom-right causal mask and the KV write: prefilling 5 tokens on top of the cache of the
    first 3 gives the same last-token logits as prefilling all 8 at once."""
    from lpbench.profile import SHAPES, Decoder

    model = Decoder(SHAPES["tiny"], "cpu", torch.float64)
    whole = model.make_batch(1, 8, 0, 0, 0)
    ids = whole[0]["ids"]
    ref = model.iteration(whole)
    head = model.make_batch(1, 3, 0, 0, 0)
    head[0]["ids"] = ids[:, :3]
    model.iteration(head)  # fills the cache of the first 3 tokens
    tail = model.make_batch(1, 5, 3, 0, 0)
    tail[0]["ids"] = ids[:, 3:]
    for li, (k, v) in enumerate(head[0]["cache"]):
        tail[0]["cache"][li][0][:, :, :3] = k
        tail[0]["cache"][li][1][:, :, :3] = v
    assert torch.allclose(model.iteration(tail), ref, atol=1e-9)
