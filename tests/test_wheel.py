"""The built wheel carries the grammars and works from a fresh virtual environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, SEED


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
    )
    if build.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{build.stdout}\n{build.stderr}")
    (path,) = out.glob("blaslog-*.whl")
    return path


def test_wheel_contains_the_grammars(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for grammar in ("cublaslt", "cublas", "kv", "rocblas", "hipblaslt", "bench", "flowmap"):
        assert f"blaslog/grammars/{grammar}.lark" in names
    assert "blaslog/data/cublaslt_enums.json" in names
    assert "blaslog/py.typed" in names  # PEP 561: the package's own types are its typing
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_wheel_carries_the_compiled_extension_where_a_compiler_is(wheel):
    """hatch_build.py compiles blaslog/_speedups.c into the wheel (tagged for this platform), or leaves a pure
    Python wheel where no compiler is."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None or not Path(sysconfig.get_paths()["include"], "Python.h").is_file():
        pytest.skip(f"no C compiler ({compiler}) or no Python headers here")
    names = zipfile.ZipFile(wheel).namelist()
    assert "blaslog/_speedups" + sysconfig.get_config_var("EXT_SUFFIX") in names
    assert not wheel.name.endswith("-py3-none-any.whl")


@pytest.mark.slow
def test_installed_command_parses_a_fixture(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
        capture_output=True,
    )
    # the dependencies (lark, pandas, click, tabulate) come from this interpreter's folders, without a network:
    # a .pth file appends them after the environment's own site-packages, where the wheel went. (Written only
    # now: before the install, pip would see this interpreter's blaslog there and install nothing.)
    import click
    import lark
    import pandas
    import tabulate

    folders = {
        str(Path(m.__file__).resolve().parents[1 if m.__file__.endswith("__init__.py") else 0])
        for m in (click, lark, pandas, tabulate)
    }
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    (site / "_dependencies.pth").write_text("\n".join(sorted(folders)) + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run(
        [str(python), "-c", "import blaslog; print(blaslog.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert str(env_dir) in where.stdout
    result = subprocess.run(
        [str(env_dir / "bin" / "blaslog"), "parse", str(SEED / "sharded.log"), "-f", "csv", "-q"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    header, row = result.stdout.splitlines()[:2]
    columns = dict(zip(header.split(","), row.split(","), strict=False))
    assert (columns["m"], columns["n"], columns["k"], columns["algo_id"]) == ("64", "1024", "8", "0")
