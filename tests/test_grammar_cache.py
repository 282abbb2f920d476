"""The saved parsers (blaslog/formats/_grammars.py): used when safe, rebuilt when not, never trusted blindly."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from blaslog.formats import _grammars

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "fixtures" / "generated" / "lt_fp32_tp4" / "blaslt_321674.log"
LINE = (
    "[2026-06-06 15:31:41][cublasLt][321674][Api][cublasLtMatmulDescCreate] matmulDesc=0X7FFC7F88AB00 "
    "computeType=COMPUTE_32F scaleType=R_32F"
)


def _fresh(monkeypatch: pytest.MonkeyPatch, folder: Path | str) -> None:
    monkeypatch.setenv("BLASLOG_CACHE_DIR", str(folder))
    _grammars.load_grammar.cache_clear()


def _saved(folder: Path) -> list[Path]:
    return sorted(folder.glob("grammar-*.pickle"))


def test_a_built_parser_is_saved_privately_and_loaded_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cache"
    _fresh(monkeypatch, folder)
    built = _grammars.load_grammar("cublaslt.lark")
    (saved,) = _saved(folder)
    assert folder.stat().st_mode & 0o777 == 0o700 and saved.stat().st_mode & 0o077 == 0
    assert not list(folder.glob(".grammar-*"))  # no temporary file left behind
    stamp = saved.stat().st_mtime_ns
    _fresh(monkeypatch, folder)
    loaded = _grammars.load_grammar("cublaslt.lark")
    assert loaded is not built and saved.stat().st_mtime_ns == stamp  # read, not written again
    assert loaded.parse(LINE) == built.parse(LINE)


def test_each_rule_and_grammar_has_its_own_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh(monkeypatch, tmp_path)
    _grammars.load_grammar("cublaslt.lark")
    _grammars.load_grammar("rocblas.lark", "trace")
    assert len(_saved(tmp_path)) == 2


def test_a_changed_grammar_gets_a_new_key(tmp_path: Path) -> None:
    source = ROOT / "grammars"
    copy = tmp_path / "grammars"
    shutil.copytree(source, copy)
    before = _grammars._key(copy, "cublaslt.lark", "start")
    assert before == _grammars._key(source, "cublaslt.lark", "start")
    assert before != _grammars._key(copy, "cublaslt.lark", "other")
    with open(copy / "kv.lark", "a") as handle:
        handle.write("\n// changed\n")  # an imported grammar changes the key of every grammar
    assert _grammars._key(copy, "cublaslt.lark", "start") != before


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_file_others_could_write_is_not_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh(monkeypatch, tmp_path)
    _grammars.load_grammar("cublaslt.lark")
    (saved,) = _saved(tmp_path)
    saved.write_bytes(b"not a pickle")
    saved.chmod(0o666)
    assert _grammars._load(saved) is None  # not even opened as a pickle: someone else could have written it
    _fresh(monkeypatch, tmp_path)
    assert _grammars.load_grammar("cublaslt.lark").parse(LINE)  # built again, and saved over it
    assert saved.stat().st_mode & 0o077 == 0 and saved.read_bytes() != b"not a pickle"


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_folder_others_can_write_to_is_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    _fresh(monkeypatch, shared)
    assert _grammars.cache_folder() is None
    assert _grammars.load_grammar("cublaslt.lark").parse(LINE)
    assert not _saved(shared)


def test_a_broken_file_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh(monkeypatch, tmp_path)
    _grammars.load_grammar("cublaslt.lark")
    (saved,) = _saved(tmp_path)
    saved.write_bytes(saved.read_bytes()[:100])  # cut short, as a killed writer would leave it without the rename
    _fresh(monkeypatch, tmp_path)
    assert _grammars.load_grammar("cublaslt.lark").parse(LINE)
    assert len(saved.read_bytes()) > 100


@pytest.mark.parametrize("off", ["", "0", "off"])
def test_the_cache_can_be_switched_off(off: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLASLOG_CACHE_DIR", off)
    assert _grammars.cache_folder() is None


def test_an_unwritable_cache_costs_only_the_build(tmp_path: Path) -> None:
    """A cache folder that cannot be made (a file is in its way) leaves the command's output as it was."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    env = {**os.environ, "BLASLOG_CACHE_DIR": str(blocker / "cache")}
    run = [sys.executable, "-m", "blaslog", "parse", "-f", "jsonl", str(LOG)]
    without = subprocess.run(run, env=env, capture_output=True, text=True, check=False)
    env["BLASLOG_CACHE_DIR"] = str(tmp_path / "ok")
    first = subprocess.run(run, env=env, capture_output=True, text=True, check=False)
    second = subprocess.run(run, env=env, capture_output=True, text=True, check=False)
    assert without.returncode == first.returncode == second.returncode == 0
    assert without.stdout == first.stdout == second.stdout
    assert without.stdout.count("\n") == 79  # 78 GEMMs and the summary line
    assert without.stderr == first.stderr == second.stderr
    assert _saved(tmp_path / "ok")
