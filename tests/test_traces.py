"""lpbench import: Azure/CSV/JSONL traces -> v1 instances (lpbench/traces.py)."""
import json
import tracemalloc
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from lpbench.cli import main
from lpbench.errors import InputError
from lpbench.instance import load_instance, parse_instance
from lpbench.traces import ImportSpec, read_trace

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "lpbench/schema/instance-v1.schema.json").read_text())
CONV = ROOT.parent / "shared/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv"

AZURE = """TIMESTAMP,ContextTokens,GeneratedTokens
2023-11-16 18:15:46.6805900,374,44
2023-11-16 18:15:47.6805900,0,10
2023-11-16 18:15:48.1805900,5000,0
2023-11-16 18:15:50.6805900,300,900
2023-11-16 18:15:45.6805900,20,30
"""


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def run(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_azure_import_applies_and_counts_every_clipping_rule(tmp_path, capsys):
    src = write(tmp_path, "t.csv", AZURE)
    out = tmp_path / "t.json"
    rc, stdout, _ = run(["import", "azure", str(src), "--out", str(out), "--max-context", "1000",
                         "--memory", "1000", "--rate-scale", "2", "--cost-model", "unit"], capsys)
    assert rc == 0, stdout
    inst = load_instance(out)
    c = inst.meta["import"]["counts"]
    assert c == {"rows_read": 5, "skipped_malformed": 0, "outside_window": 0, "prompt_raised_to_1": 1,
                 "output_raised_to_1": 1, "prompt_truncated": 1, "output_truncated": 1,
                 "dropped_exceeds_memory": 0, "imported": 5, "limit_reached": False}
    # sorted by arrival, first at 0, times halved by --rate-scale 2 (the first row in time is the last in the file)
    assert inst.arrival.tolist() == pytest.approx([0.0, 0.5, 1.0, 1.25, 2.5])
    assert inst.prompt.tolist() == [20, 374, 1, 1000, 300]
    assert inst.output.tolist() == [30, 44, 10, 1, 701]  # 5000 -> 1000 and output 0 -> 1; 300 + 900 - 1 > 1000
    assert (inst.prompt + inst.output - 1 <= 1000).all()
    assert inst.meta["source"]["licence"] == "CC-BY-4.0"
    assert len(inst.meta["source"]["sha256"]) == 64
    jsonschema.validate(json.loads(out.read_text()), SCHEMA)


def test_window_limit_and_memory_drop(tmp_path):
    src = write(tmp_path, "t.csv", AZURE)
    # the window is measured from the file's first row (18:15:46.68); [1, 4.5) keeps rows 2, 3, 4
    a, p, o, c, _ = read_trace(src, ImportSpec.for_format("azure", start=1.0, end=4.5, memory=1100))
    assert c.outside_window == 2 and c.dropped_exceeds_memory == 2  # 5000 + 1 - 1 and 300 + 900 - 1 > 1100
    assert p.tolist() == [1] and a.tolist() == [0.0]
    a, p, o, c, digest = read_trace(src, ImportSpec.for_format("azure", limit=2))
    assert c.limit_reached and p.tolist() == [374, 1] and digest == ""


def test_corrupt_row_exits_2_naming_line_and_column(tmp_path, capsys):
    src = write(tmp_path, "bad.csv", AZURE.replace("300,900", "300,nine"))
    rc, _, err = run(["import", "azure", str(src), "--out", str(tmp_path / "o.json")], capsys)
    assert rc == 2
    assert "line 5" in err and "GeneratedTokens" in err and "'nine'" in err
    assert not (tmp_path / "o.json").exists()
    src = write(tmp_path, "bad2.csv", AZURE.replace("2023-11-16 18:15:47.6805900", "yesterday"))
    rc, _, err = run(["import", "azure", str(src), "--out", str(tmp_path / "o.json")], capsys)
    assert rc == 2 and "line 3" in err and "TIMESTAMP" in err


def test_skip_bad_counts_what_it_skipped(tmp_path, capsys):
    text = AZURE.replace("300,900", "300,-4") + "2023-11-16 18:15:51.0,12\n"
    src = write(tmp_path, "bad.csv", text)
    rc, stdout, _ = run(["import", "azure", str(src), "--out", str(tmp_path / "o.json"), "--skip-bad"], capsys)
    assert rc == 0 and "skipped_malformed        2" in stdout
    meta = load_instance(tmp_path / "o.json").meta["import"]
    assert meta["counts"]["skipped_malformed"] == 2 and meta["counts"]["imported"] == 4
    assert meta["malformed_first"][0].startswith("line 5: column GeneratedTokens")
    assert meta["malformed_first"][1].startswith("line 7: column GeneratedTokens")  # the short row


def test_generic_csv_and_jsonl_with_column_mapping(tmp_path, capsys):
    src = write(tmp_path, "g.csv", "t_ms,in,out,other\n2500,10,5,x\n1000,20,6,y\n1500,30,7,z\n")
    out = tmp_path / "g.json"
    rc, _, _ = run(["import", "csv", str(src), "--out", str(out), "--arrival", "t_ms", "--prompt", "in",
                    "--output", "out", "--time-unit", "ms", "--licence", "MIT", "--cost-model", "unit"], capsys)
    assert rc == 0
    inst = load_instance(out)
    assert inst.arrival.tolist() == [0.0, 0.5, 1.5] and inst.prompt.tolist() == [20, 30, 10]
    assert inst.meta["source"]["licence"] == "MIT"
    lines = [{"ts": 3, "p": 4, "o": 2}, {"ts": 1, "p": 8, "o": 3, "extra": [1]}]
    src = write(tmp_path, "g.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n\n")
    out2 = tmp_path / "g2.json"
    rc, _, _ = run(["import", "jsonl", str(src), "--out", str(out2), "--arrival", "ts", "--prompt", "p",
                    "--output", "o"], capsys)
    assert rc == 0
    inst = load_instance(out2)
    assert inst.arrival.tolist() == [0.0, 2.0] and inst.output.tolist() == [3, 2]
    src = write(tmp_path, "b.jsonl", '{"ts": 1, "p": 4, "o": 2}\n{"ts": 2, "p": 4}\n')
    rc, _, err = run(["import", "jsonl", str(src), "--out", str(tmp_path / "x.json"), "--arrival", "ts",
                      "--prompt", "p", "--output", "o"], capsys)
    assert rc == 2 and "line 2: column o" in err


def test_bad_flags_and_missing_columns_exit_2(tmp_path, capsys):
    src = write(tmp_path, "g.csv", "a,b\n1,2\n")
    rc, _, err = run(["import", "csv", str(src), "--out", str(tmp_path / "o.json")], capsys)
    assert rc == 2 and "--arrival, --prompt, --output: required" in err
    rc, _, err = run(["import", "azure", str(src), "--out", str(tmp_path / "o.json")], capsys)
    assert rc == 2 and "line 1: missing column(s) TIMESTAMP, ContextTokens, GeneratedTokens" in err
    rc, _, err = run(["import", "azure", str(src), "--out", str(tmp_path / "o.json"), "--end", "0"], capsys)
    assert rc == 2 and "--end" in err


def test_meta_must_be_an_object():
    base = {"memory": 10, "requests": [{"arrival": 0, "prompt": 1, "output": 1}]}
    assert parse_instance({**base, "meta": {"source": {"licence": "MIT"}}}).meta == {"source": {"licence": "MIT"}}
    with pytest.raises(InputError, match="meta: must be an object"):
        parse_instance({**base, "meta": "MIT"})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**base, "meta": 3}, SCHEMA)


def test_read_memory_is_bounded_by_the_kept_requests(tmp_path):
    """200,000 rows: the reader's peak Python allocation stays near 3 x 8 bytes per request (typed arrays
    plus the sort), far below one Python object per value (a list of rows would need > 40 MB)."""
    n = 200_000
    rng = np.random.default_rng(0)
    t = np.cumsum(rng.exponential(0.01, n))
    with open(tmp_path / "big.csv", "w") as fh:
        fh.write("t,p,o\n")
        fh.writelines(f"{x:.4f},{p},{o}\n" for x, p, o in zip(t, rng.integers(1, 4000, n), rng.integers(1, 500, n)))
    tracemalloc.start()
    a, p, o, c, _ = read_trace(tmp_path / "big.csv", ImportSpec.for_format("csv", arrival="t", prompt="p", output="o"))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert c.imported == n and np.all(np.diff(a) >= 0)
    assert peak < 16e6, f"peak {peak / 1e6:.1f} MB for {n} rows"


@pytest.mark.skipif(not CONV.exists(), reason="Azure 2023 trace not in ../shared/data")
def test_azure_conversation_trace_imports_whole(tmp_path, capsys):
    out = tmp_path / "conv.json"
    rc, stdout, _ = run(["import", "azure", str(CONV), "--out", str(out)], capsys)
    assert rc == 0, stdout
    rc, stdout, _ = run(["validate", str(out)], capsys)
    assert rc == 0 and "19366 requests" in stdout
    inst = load_instance(out)
    assert inst.arrival[0] == 0 and np.all(np.diff(inst.arrival) >= 0)
    assert 3500 < inst.arrival[-1] < 3600  # one hour of traffic
    assert inst.meta["source"]["licence"] == "CC-BY-4.0"
    # the file is already in time order: request i of the instance is row i + 2 of the CSV
    assert inst.prompt[:2].tolist() == [374, 396] and inst.output[:2].tolist() == [44, 109]
