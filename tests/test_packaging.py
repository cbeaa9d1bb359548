"""A wheel carries the shipped cost-model and solver profiles (setup.py copies them into lpbench/_shipped), and
lpbench reads that copy when it is installed from one; a checkout reads the repository's files."""
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from lpbench import tomlfile

ROOT = Path(__file__).resolve().parents[1]


def test_a_checkout_reads_its_own_profiles_and_an_installed_wheel_its_copy(tmp_path, monkeypatch):
    """In a checkout (a pyproject.toml beside the package) the repository's files, even with a stale copy in
    lpbench/_shipped; in site-packages the wheel's copy."""
    (tmp_path / "_shipped" / "models").mkdir(parents=True)
    (tmp_path / "_shipped" / "solvers.toml").write_text("")
    monkeypatch.setattr(tomlfile, "PACKAGED", tmp_path / "_shipped")
    assert tomlfile.shipped("models") == ROOT / "models"
    assert tomlfile.shipped("solvers.toml") == ROOT / "solvers.toml"
    site = tmp_path / "site-packages" / "lpbench"
    site.mkdir(parents=True)
    monkeypatch.setattr(tomlfile, "__file__", str(site / "tomlfile.py"))
    assert tomlfile.shipped("models") == tmp_path / "_shipped" / "models"
    assert tomlfile.shipped("solvers.toml") == tmp_path / "_shipped" / "solvers.toml"


def test_identical_profiles_beside_the_installed_copy_are_not_called_shadowing(tmp_path, monkeypatch):
    """Running an installed lpbench from its own checkout: ./models and ./solvers.toml equal the wheel's copies, so
    no shadowing warning; a changed file is still named."""
    import warnings

    from lpbench.errors import LpbenchWarning

    monkeypatch.setattr(tomlfile, "_NOTED", set())
    mine, theirs = tmp_path / "a.toml", tmp_path / "b.toml"
    mine.write_text("x = 1\n")
    theirs.write_text("x = 1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tomlfile.note_shadowing("profile 'a'", mine, theirs)
    mine.write_text("x = 2\n")
    with pytest.warns(LpbenchWarning, match="shadows the shipped"):
        tomlfile.note_shadowing("profile 'a'", mine, theirs)


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
    assert "lpbench/_shipped/commit" in names


def test_an_installed_copy_names_the_commit_it_was_built_from(tmp_path, monkeypatch):
    """Bench rows record git_commit: in a checkout its HEAD; installed from a wheel, the commit recorded at build
    time, not that of whatever checkout the virtual environment sits in."""
    from lpbench.bench import store

    assert store.git_commit()  # this checkout
    site = tmp_path / "site-packages" / "lpbench" / "bench"
    site.mkdir(parents=True)
    monkeypatch.setattr(store, "__file__", str(site / "store.py"))
    monkeypatch.setattr(store, "PACKAGED", tmp_path / "_shipped")
    assert store.git_commit() is None
    (tmp_path / "_shipped").mkdir()
    (tmp_path / "_shipped" / "commit").write_text("0123abc-dirty\n")
    assert store.git_commit() == "0123abc-dirty"
