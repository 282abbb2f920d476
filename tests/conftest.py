"""Shared fixtures: paths to the bundled logs, a CLI runner, parsed results built once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import blaslog

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SEED = FIXTURES / "seed"
GENERATED = FIXTURES / "generated"
NVIDIA = FIXTURES / "nvidia-lib"
BAD = FIXTURES / "bad"


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
            cache[path] = blaslog.parse_file(str(path))
        return cache[path]

    return get
