"""Compressed and re-encoded logs are read like plain ones (by their magic bytes, whatever their name); a cut
stream is an `input` finding that fails the run at the default --fail-on, saying how much was read."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from pathlib import Path

import pytest
from click.testing import CliRunner

from blaslog.cli import cli

LOG = Path(__file__).resolve().parents[1] / "fixtures" / "generated" / "lt_fp16_tp4_rank0.log"


def _zstd(data: bytes) -> bytes:
    zstandard = pytest.importorskip("zstandard")
    return zstandard.ZstdCompressor().compress(data)


ENCODINGS = {
    "gzip": gzip.compress,
    "bzip2": lambda data: bz2.compress(data, 1),  # 100 kB blocks: a cut leaves whole blocks to read
    "xz": lzma.compress,
    "zstd": _zstd,
    "utf-16": lambda data: data.decode("utf-8").encode("utf-16"),
    "utf-16-le (no BOM)": lambda data: data.decode("utf-8").encode("utf-16-le"),
}


def _summary(path: Path) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["summary", str(path), "-f", "json", "-q"])
    return result.exit_code, json.loads(result.stdout) if result.stdout else {}


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_read_like_the_plain_file(tmp_path, encoding):
    path = tmp_path / "run.log"  # the name says nothing: the bytes do
    path.write_bytes(ENCODINGS[encoding](LOG.read_bytes()))
    status, doc = _summary(path)
    assert status == 0
    assert doc["overview"]["gemm_calls"] == 78 and doc["summary"]["files"][0]["lines"] == 1630


@pytest.mark.parametrize("encoding", ["gzip", "bzip2", "xz", "zstd"])
def test_a_cut_stream_is_an_input_finding(tmp_path, encoding):
    data = ENCODINGS[encoding](LOG.read_bytes())
    path = tmp_path / "cut.log"
    path.write_bytes(data[: len(data) * 2 // 3])
    result = CliRunner().invoke(cli, ["check", str(path), "-f", "json", "-q"])
    assert result.exit_code == 1, result.output
    (finding,) = [f for f in json.loads(result.stdout)["findings"] if f["kind"] == "input_cut_short"]
    assert finding["class"] == "input" and "ends early: only" in finding["title"]
    assert "the input ends early" in result.stderr


def test_a_stream_cut_before_any_record_says_so(tmp_path):
    path = tmp_path / "cut.log"
    path.write_bytes(gzip.compress(LOG.read_bytes())[:40])
    result = CliRunner().invoke(cli, ["check", str(path), "-q"])
    assert result.exit_code == 2
    assert "the input ends early" in result.stderr and "no GEMM record could be read" in result.stderr
