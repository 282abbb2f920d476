"""Shared fixtures: paths to the bundled logs, a CLI runner, parsed results built once."""

from __future__ import annotations

import atexit
import json
import os
import pkgutil
import shutil
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import blaslog
from blaslog import formats
from blaslog._fast import _c

# the grammar cache (blaslog/formats/_grammars.py) of the tests and of the commands they run: their own folder
if "BLASLOG_CACHE_DIR" not in os.environ:
    os.environ["BLASLOG_CACHE_DIR"] = tempfile.mkdtemp(prefix="blaslog-test-cache-")
    atexit.register(shutil.rmtree, os.environ["BLASLOG_CACHE_DIR"], ignore_errors=True)
# shapes learnt by earlier processes (blaslog/_fast/saved.py) would make the cache's counts depend on the tests run
# before (and on a developer's own setting): off, but in the tests of that file
os.environ["BLASLOG_SAVED_SHAPES"] = "0"

# COLUMNS fits table output to a width even when piped (blaslog.reporters.table.terminal_for): the tests read the
# plain piped text unless they set it themselves (something in the test session sets it after this file is read,
# so it is taken out again for each test)
os.environ.pop("COLUMNS", None)


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    os.unsetenv("COLUMNS")  # GNU readline, once imported, sets COLUMNS with setenv(), unseen by os.environ


ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SEED = FIXTURES / "seed"
GENERATED = FIXTURES / "generated"
NVIDIA = FIXTURES / "nvidia-lib"
BAD = FIXTURES / "bad"


def trace_line(
    a_rows: int, a_cols: int, n: int, algo: str, *, dtype: str = "R_32F", transa: bool = True, stream: str = "0X0"
) -> str:
    """A cuBLASLt [Trace] matmul line (with its newline) for an A layout of a_rows x a_cols and n columns of D."""
    m = a_cols if transa else a_rows
    k = a_rows if transa else a_cols
    trans = " transa=OP_T" if transa else ""
    return (
        f"[2024-01-01 00:00:00][cublasLt][1][Trace][cublasLtMatmul] A=0X1 Adesc=[type={dtype} rows={a_rows} "
        f"cols={a_cols} ld={a_rows}] B=0X2 Bdesc=[type={dtype} rows={k} cols={n} ld={k}] C=0X3 Cdesc=[type={dtype} "
        f"rows={m} cols={n} ld={m}] D=0X3 Ddesc=[type={dtype} rows={m} cols={n} ld={m}] computeDesc=[computeType="
        f"COMPUTE_32F scaleType=R_32F{trans}] algo=[{algo}] workSpace=0X0 workSpaceSizeInBytes=0 beta=0 "
        f"outOfPlace=0 stream={stream}\n"
    )


def layer3_log(folder: Path) -> Path:
    """A ROCBLAS_LAYER=3 log written to `folder`: each call's trace line followed by its bench line."""
    bench = iter((GENERATED / "rocblas_fp16_bench.log").read_text().splitlines())
    mixed = []
    for line in (GENERATED / "rocblas_fp16_trace.log").read_text().splitlines():
        mixed.append(line)
        if line.startswith("rocblas_gemm"):
            mixed.append(next(bench))
    path = folder / "layer3.log"
    path.write_text("\n".join(mixed) + "\n")
    return path


def expected_findings() -> list[dict]:
    """The planted findings of fixtures/generated (EXPECTED.jsonl)."""
    return [json.loads(line) for line in (GENERATED / "EXPECTED.jsonl").read_text().splitlines() if line.strip()]


def pytest_addoption(parser: pytest.Parser) -> None:
    """`pytest --update-golden` rewrites the expected outputs of the golden tests (review the diff); `--speed c`
    or `--speed python` runs the parser's tests one way only (both by default)."""
    parser.addoption("--update-golden", action="store_true", help="rewrite fixtures/bad/*.expected")
    parser.addoption(
        "--speed",
        choices=("both", "c", "python"),
        default="both",
        help="run the parser's test modules with the C extension, in pure Python, or both ways",
    )


DIALECT_TESTS = {
    f"test_{info.name}" for info in pkgutil.iter_modules(formats.__path__) if not info.name.startswith("_")
}
"""Each dialect module's own tests (`tests/test_NAME.py` for `blaslog/formats/NAME.py`, as CONTRIBUTING.md asks of a
new dialect; the dialects older than that rule, cuBLAS, cuBLASLt, rocBLAS and hipBLASLt, are tested by the modules
named below)."""

BOTH_WAYS = DIALECT_TESTS | {
    "test_amd",
    "test_cache_counts",
    "test_cut_and_wrapped",
    "test_dialects",
    "test_negative_cache",
    "test_parse_nvidia",
    "test_recall",
    "test_shape_cache",
    "test_shared_shapes",
}
"""The parser's test modules: each test of them runs with the C extension and in pure Python (where the extension
is built; the one switch is blaslog/_fast/_c.py)."""


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.module.__name__.rpartition(".")[2] not in BOTH_WAYS or "speed" in metafunc.fixturenames:
        return
    wanted = metafunc.config.getoption("--speed")
    ways = [way for way in ("c", "python") if wanted in ("both", way)]
    if _c.speedups is None:  # not built here (or BLASLOG_PURE_PYTHON): Python is the only way
        ways = ["python"]
    metafunc.fixturenames.append("speed")
    metafunc.parametrize("speed", ways, indirect=True)


@pytest.fixture
def speed(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """`c` or `python`: which side of the C/Python switch this test runs on (in this process and in the blaslog
    processes it starts)."""
    way = getattr(request, "param", "c" if _c.speedups is not None else "python")
    if way == "python":
        monkeypatch.setattr(_c, "speedups", None)
        monkeypatch.setenv("BLASLOG_PURE_PYTHON", "1")
    return str(way)


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """True when the golden files are to be rewritten."""
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def runner() -> CliRunner:
    """Click's runner with stdout and stderr kept apart."""
    return CliRunner()


@pytest.fixture(scope="session")
def generated_caps() -> blaslog.Caps:
    """The illustrative caps of fixtures/generated."""
    return blaslog.load_caps(GENERATED / "caps.json")


@pytest.fixture(scope="session")
def seed_caps() -> blaslog.Caps:
    """The caps hand-written from the seed report."""
    return blaslog.load_caps(SEED / "caps.json")


@pytest.fixture(scope="session")
def parsed():
    """Parse a fixture once per session."""
    cache: dict[Path, blaslog.ParseResult] = {}

    def get(path: Path) -> blaslog.ParseResult:
        if path not in cache:
            cache[path] = blaslog.parse(str(path))
        return cache[path]

    return get
