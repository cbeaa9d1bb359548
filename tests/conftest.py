import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@pytest.fixture
def write_json(tmp_path):
    def _write(data, name="inst.json"):
        p = tmp_path / name
        p.write_text(data if isinstance(data, str) else json.dumps(data))
        return str(p)

    return _write
