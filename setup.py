"""A wheel carries the repository's cost-model profiles (``models/``) and solver profiles (``solvers.toml``) as
package data under ``lpbench/_shipped/`` (read through :func:`lpbench.tomlfile.shipped`); a checkout or an
editable install reads them where they are. The wheel also records the commit it was built from
(``lpbench/_shipped/commit``), which bench rows name. Everything else is in pyproject.toml."""
import importlib.util
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildPyWithProfiles(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "lpbench" / "_shipped"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(ROOT / "models", target / "models", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy2(ROOT / "solvers.toml", target / "solvers.toml")
        (target / "commit").write_text(_commit() + "\n")  # what bench rows record as git_commit


def _commit() -> str:
    """The checkout's commit as lpbench itself reads it (``lpbench/provenance.py``, loaded by its path: lpbench's
    dependencies need not be installed at build time), or "" when not built from a git checkout."""
    spec = importlib.util.spec_from_file_location("_lpbench_provenance", ROOT / "lpbench" / "provenance.py")
    provenance = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(provenance)
    return provenance.checkout_commit(ROOT) or ""


setup(cmdclass={"build_py": BuildPyWithProfiles})
