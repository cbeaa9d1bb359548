"""A wheel carries the repository's cost-model profiles (``models/``) and solver profiles (``solvers.toml``) as
package data under ``lpbench/_shipped/`` (read through :func:`lpbench.tomlfile.shipped`); a checkout or an
editable install reads them where they are. Everything else is in pyproject.toml."""
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


setup(cmdclass={"build_py": BuildPyWithProfiles})
