"""Shared fixtures: paths to the bundled logs, a CLI runner, parsed results built once."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import blaslog

# the grammar cache (blaslog/formats/_grammars.py) of the tests and of the commands they run: their own folder
if "BLASLOG_CACHE_DIR" not in os.environ:
    os.environ["BLASLOG_CACHE_DIR"] = tempfile.mkdtemp(prefix="blaslog-test-cache-")
    atexit.register(shutil.rmtree, os.environ["BLASLOG_CACHE_DIR"], ignore_errors=True)

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
    """`pytest --update-golden` rewrites the expected outputs of the golden tests (review the diff)."""
    parser.addoption("--update-golden", action="store_true", help="rewrite fixtures/bad/*.expected")


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
