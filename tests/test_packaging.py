"""A wheel carries the shipped cost-model and solver profiles (setup.py copies them into lpbench/_shipped), and
lpbench reads that copy when it is installed from one; a checkout reads the repository's files."""
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from lpbench import tomlfile

ROOT = Path(__file__).resolve().parents[1]


def test_shipped_prefers_the_packaged_copy_and_falls_back_to_the_repository(tmp_path, monkeypatch):
    monkeypatch.setattr(tomlfile, "PACKAGED", tmp_path / "_shipped")
    assert tomlfile.shipped("models") == ROOT / "models"
    assert tomlfile.shipped("solvers.toml") == ROOT / "solvers.toml"
    (tmp_path / "_shipped" / "models").mkdir(parents=True)
    (tmp_path / "_shipped" / "solvers.toml").write_text("")
    assert tomlfile.shipped("models") == tmp_path / "_shipped" / "models"
    assert tomlfile.shipped("solvers.toml") == tmp_path / "_shipped" / "solvers.toml"


def test_the_wheel_carries_every_profile(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "solvers.toml"):
        shutil.copy2(ROOT / name, src / name)
    for name in ("lpbench", "models"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "_shipped"))
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(src), "-w", str(tmp_path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    (wheel,) = tmp_path.glob("lpbench-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "lpbench/_shipped/solvers.toml" in names
    profiles = sorted(p.name for p in (ROOT / "models").glob("*.toml"))
    assert profiles and all(f"lpbench/_shipped/models/{p}" in names for p in profiles)
