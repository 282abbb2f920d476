"""One read, pieces read by a process pool (`-j N`) and pieces read by Dask (`--scheduler local`) give the same JSON,
byte for byte, on logs mutated as real logs are: wrapped at a terminal's width, tagged by a launcher, CRLF line ends,
the last line cut, compressed. A wrapped log is the case where the pieces must carry the width the lines before
them were seen cut at (Dask dropped it, and `--scheduler` lost records of a wrapped log that the local read kept).

The logs are real ones: the cuBLASLt logs the GPU validation kit wrote on an H200 (fixtures/gpu), and the corpus
of real logs of every dialect (fixtures/real), each concatenated as one input. Skipped, saying so, without
`blaslog[dask]`."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip(
    "distributed",
    reason="Dask's distributed scheduler is not installed: pip install 'blaslog[dask]' (or '.[test]') to run this",
)

import blaslog._parallel as parallel
from blaslog import cluster
from blaslog.cli import cli
from tests.conftest import FIXTURES

JOBS = 3
"""Pieces of the pool's reading."""
DASK_PIECES = 4
"""About as many pieces of Dask's reading (cluster.PIECE_BYTES is set so)."""
COMMANDS = {
    "parse": ["parse", "-f", "json", "--kind", "all"],  # rows of pieces: the streamed pieces, Dask's rendered rows
    "summary": ["summary", "-f", "json"],  # runs of pieces merged: the pool's and Dask's merge tree
}


def _sources() -> dict[str, bytes]:
    h200 = sorted((FIXTURES / "gpu" / "h200").rglob("*.cublaslt.log")) + sorted(
        (FIXTURES / "gpu" / "h200" / "tp_simulation").rglob("*.log")
    )
    corpus = sorted((FIXTURES / "real").glob("*.log"))
    return {
        "h200": b"".join(path.read_bytes() for path in h200),
        "corpus": b"".join(_ended(path.read_bytes()) for path in corpus),
    }


def _ended(data: bytes) -> bytes:
    return data if data.endswith(b"\n") else data + b"\n"


def _wrapped(width: int) -> Callable[[bytes], bytes]:
    """A terminal (or a CI log viewer) that cut every line at `width` characters."""

    def wrap(data: bytes) -> bytes:
        text = data.decode("utf-8", "replace")
        return "".join(
            line[i : i + width] + "\n" for line in text.splitlines() for i in range(0, max(len(line), 1), width)
        ).encode("utf-8")

    return wrap


def _tagged(tag: str) -> Callable[[bytes], bytes]:
    """A launcher that put its tag before every line (torchrun's `[rank3]:`, srun --label's `0: `)."""

    def put(data: bytes) -> bytes:
        return b"".join(tag.encode() + line for line in data.splitlines(keepends=True))

    return put


def _crlf(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def _cut(data: bytes) -> bytes:
    """The writer killed: the last line ends half way, without a line end."""
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    return data[: last + (len(data) - last) // 2]


def _zstd(data: bytes) -> bytes:
    zstandard = pytest.importorskip("zstandard", reason="no zstd compressor: pip install zstandard")
    return zstandard.ZstdCompressor().compress(data)  # type: ignore[no-any-return]


# (source, what was done to it, in order, file suffix)
CASES: dict[str, tuple[str, list[Callable[[bytes], bytes]], str]] = {
    "h200": ("h200", [], ".log"),
    "h200-wrapped-100": ("h200", [_wrapped(100)], ".log"),
    "h200-tagged-wrapped-132": ("h200", [_tagged("[rank3]:"), _wrapped(132)], ".log"),
    "h200-srun-tagged-crlf-cut": ("h200", [_tagged("0: "), _crlf, _cut], ".log"),
    "h200-wrapped-80-gz": ("h200", [_wrapped(80), gzip.compress], ".log.gz"),
    "h200-tagged-zst": ("h200", [_tagged("[rank1]: "), _zstd], ".log.zst"),
    "corpus": ("corpus", [], ".log"),
    "corpus-wrapped-120": ("corpus", [_wrapped(120)], ".log"),
    "corpus-tagged-crlf": ("corpus", [_tagged("[rank0]:"), _crlf], ".log"),
    "corpus-wrapped-100-cut-zst": ("corpus", [_wrapped(100), _cut, _zstd], ".log.zst"),
}


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    sources = _sources()
    folder = tmp_path_factory.mktemp("pieces")
    out = {}
    for case, (source, steps, suffix) in CASES.items():
        data = sources[source]
        for step in steps:
            data = step(data)
        out[case] = folder / f"{case}{suffix}"
        out[case].write_bytes(data)
    return out


@pytest.fixture(scope="module")
def dask_local():
    """`--scheduler local`'s LocalCluster (made by the first command that asks for it), closed at the end."""
    yield
    cluster.close()


def _invoke(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", list(CASES))
def test_one_read_the_pool_and_dask_give_the_same_json(case, command, logs, dask_local, monkeypatch):
    path = str(logs[case])
    args = [*COMMANDS[command], path]
    one = _invoke([*args, "-j", "1"])
    assert one[0] in (0, 1), one
    found = json.loads(one[1])
    assert (len(found["records"]) if command == "parse" else found["overview"]["gemm_calls"]) > 0
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)  # cut however small
    monkeypatch.setattr(cluster, "PIECE_BYTES", max(logs[case].stat().st_size // DASK_PIECES, 1))
    if case.endswith(("gz", "zst")):
        assert not parallel.splittable(path)  # read whole however it is asked: still the same
    else:
        assert len(parallel.cut(path, JOBS)) == JOBS  # really cut
        assert len(cluster.plan([path], threads=2)[0].pieces) >= DASK_PIECES
    assert _invoke([*args, "-j", str(JOBS)]) == one
    assert _invoke([*args, "--scheduler", "local", "-j", "2"]) == one


@pytest.mark.parametrize("case", [case for case in CASES if "wrapped" in case and not case.endswith(("gz", "zst"))])
def test_a_wrapped_log_has_pieces_that_are_read_with_the_width_seen_before_them(case, logs, monkeypatch):
    """The pieces of a wrapped log read side by side do not all learn its width on their own: read without a
    guess, those after the width was seen are misread (to read again with it), which is what makes the pieces
    above agree (not a vacuous test); each read with the guess its reader takes from the bytes before it, none is
    (the log is wrapped throughout: the guess is right)."""
    path = str(logs[case])
    width = int(case.split("-")[-1])
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    pieces = parallel.cut(path, 8)
    reads = [parallel.read_piece(piece, parallel.run_of) for piece in pieces]
    redo = parallel.misread(reads)
    assert redo and 0 not in redo
    assert {reads[i - 1].wrap_width for i in redo} == {width}
    guessed = [parallel.read_piece(piece, parallel.run_of) for piece in parallel.guessed(pieces)]
    assert parallel.misread(guessed) == []
    assert [read.read_with for read in guessed] == [0] + [width] * (len(pieces) - 1)
