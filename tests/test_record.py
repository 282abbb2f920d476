"""`blaslog record` end to end without a GPU: a fake workload (tests/record/workload.py) writes each library's log
lines to the files the environment names, launched as N ranks by a fake launcher (tests/record/launcher.py) that
sets RANK, LOCAL_RANK and WORLD_SIZE as torchrun does. blaslog record runs as a process of its own here, as a
person runs it (signals, process groups)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from blaslog import api
from blaslog._hook import sitecustomize as hook
from blaslog.cli import cli
from blaslog.errors import InputError
from blaslog.record import LIBRARIES, child_environment, logging_environment, parse_libs, prepare_folder, watch
from tests.conftest import ROOT, SEED

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.name != "posix", reason="blaslog record needs POSIX")]

HERE = ROOT / "tests" / "record"
WORKLOAD = [sys.executable, str(HERE / "workload.py")]
LAUNCH = [sys.executable, str(HERE / "launcher.py")]


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CUBLAS", "ROCBLAS_", "HIPBLASLT_", "MKL_", "NVIDIA_TF32", "BLASLOG_", "PYTHONPATH"))
    }
    env.update(extra)
    return env


def record(
    out: Path,
    *command: str,
    options: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    check_status: int | None = 0,
) -> subprocess.CompletedProcess[str]:
    """`blaslog record --out OUT OPTIONS -- COMMAND` as a process."""
    completed = subprocess.run(
        [sys.executable, "-m", "blaslog", "record", "--out", str(out), *options, "--", *command],
        capture_output=True,
        text=True,
        env=env or _env(),
        timeout=120,
        check=False,
    )
    if check_status is not None:
        assert completed.returncode == check_status, completed.stderr
    return completed


def manifest(folder: Path) -> dict:
    return json.loads((folder / "run.json").read_text())


def text(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


# ---- recording ---------------------------------------------------------------------------------------------------


def test_one_log_per_rank_and_a_manifest(tmp_path):
    out = tmp_path / "tp2"
    done = record(
        out,
        *LAUNCH,
        "--nproc",
        "2",
        *WORKLOAD,
        "--torch",
        "on",
        env=_env(CUBLAS_WORKSPACE_CONFIG=":4096:8", PYTORCH_TUNABLEOP_ENABLED="0", MKL_CBWR="AVX2", UNRELATED="x"),
    )
    assert "rank 0: training with tp 2" in done.stdout and "rank 1: done" in done.stdout  # passed through
    assert "recorded" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["rank0.cublaslt.log.gz", "rank1.cublaslt.log.gz", "run.json"]
    assert text(out / "rank1.cublaslt.log.gz").count("[Trace][cublasLtMatmul]") == 4
    doc = manifest(out)
    assert doc["kind"] == "blaslog-run" and doc["exit_status"] == 0 and doc["command"][1].endswith("launcher.py")
    assert doc["host"] and doc["start"] <= doc["end"]
    assert doc["logging"] == {
        "level": 2,
        "libraries": ["cublaslt", "rocblas", "hipblaslt"],
        "compressed": True,
        "variables": {"CUBLASLT_LOG_LEVEL": "2", "ROCBLAS_LAYER": "2", "HIPBLASLT_LOG_MASK": "33"},
    }
    assert doc["environment"] == {
        "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
        "MKL_CBWR": "AVX2",  # MKL's declaration names its prefix, though MKL is not logged here
        "PYTORCH_TUNABLEOP_ENABLED": "0",
    }
    assert doc["world_size"] == 2
    assert [(f["file"], f["rank"], f["rank_from"]) for f in doc["files"]] == [
        ("rank0.cublaslt.log.gz", 0, "hook (RANK)"),
        ("rank1.cublaslt.log.gz", 1, "hook (RANK)"),
    ]
    rank1 = doc["ranks"]["1"]
    assert rank1["files"] == ["rank1.cublaslt.log.gz"] and rank1["local_rank"] == 1 and rank1["world_size"] == 2
    assert rank1["gpu"] == "NVIDIA Fake GPU (sm 9.0)"
    assert rank1["versions"] == {"torch": "2.5.1+fake", "cuda (torch)": "12.4", "cudnn (torch)": 90100}
    assert rank1["settings"]["torch.backends.cuda.matmul.allow_tf32"] is True
    assert rank1["settings"]["torch.float32_matmul_precision"] == "high"
    assert rank1["settings"]["torch.deterministic_algorithms"] is False
    assert rank1["environment"]["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8" and rank1["environment"]["MKL_CBWR"] == "AVX2"
    assert "UNRELATED" not in rank1["environment"]
    assert not (out / ".blaslog").exists()


def test_a_plain_script_is_rank_0(tmp_path):
    out = tmp_path / "tp1"
    record(out, *WORKLOAD, options=("--no-compress",))
    assert sorted(p.name for p in out.iterdir()) == ["rank0.cublaslt.log", "run.json"]
    assert manifest(out)["files"][0]["rank_from"] == "the only process"
    assert manifest(out)["logging"]["compressed"] is False


def test_the_commands_exit_status_is_blaslogs(tmp_path):
    done = record(tmp_path / "run", *LAUNCH, "--nproc", "2", *WORKLOAD, "--exit", "3", check_status=3)
    assert manifest(tmp_path / "run")["exit_status"] == 3
    assert "exit status 3" in done.stderr


def test_a_command_that_is_not_there_is_127_with_the_folder_written(tmp_path):
    record(tmp_path / "run", "no-such-command-blaslog", check_status=127)
    doc = manifest(tmp_path / "run")
    assert doc["exit_status"] == 127 and "could not be started" in doc["error"]


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_reaches_the_command_and_the_folder_is_still_written(tmp_path, sig):
    out, marks = tmp_path / "run", tmp_path / "marks"
    marks.mkdir()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "blaslog",
            "record",
            "--out",
            str(out),
            "--",
            *LAUNCH,
            "--nproc",
            "2",
            *WORKLOAD,
            "--wait-signal",
            str(marks),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    deadline = time.monotonic() + 60
    while not all((marks / f"ready.{r}").exists() for r in (0, 1)):
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()
        time.sleep(0.05)
    process.send_signal(getattr(signal, sig))
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert (marks / f"{sig}.0").exists() and (marks / f"{sig}.1").exists()
    doc = manifest(out)
    assert doc["exit_status"] == 130 and doc["forwarded_signals"] == [sig]
    assert [f["file"] for f in doc["files"]] == ["rank0.cublaslt.log.gz", "rank1.cublaslt.log.gz"]
    assert f"{sig} passed on to the command" in stderr


def test_an_existing_sitecustomize_still_runs(tmp_path):
    user = tmp_path / "usersite"
    user.mkdir()
    (user / "sitecustomize.py").write_text("import os\nos.environ['USER_SITECUSTOMIZE'] = 'yes'\n")
    marks = tmp_path / "marks"
    marks.mkdir()
    record(tmp_path / "run", *LAUNCH, "--nproc", "2", *WORKLOAD, "--marker", str(marks), env=_env(PYTHONPATH=str(user)))
    ran = [p.read_text() for p in marks.iterdir()]
    assert ran == ["yes", "yes"]
    files = [f["file"] for f in manifest(tmp_path / "run")["files"]]
    assert files == ["rank0.cublaslt.log.gz", "rank1.cublaslt.log.gz"]


def test_an_existing_folder_is_not_overwritten_without_force(tmp_path):
    out = tmp_path / "run"
    record(out, *WORKLOAD)
    done = record(out, *WORKLOAD, check_status=2)
    assert "exists" in done.stderr and "--force" in done.stderr
    record(out, *WORKLOAD, "--exit", "4", options=("--force",), check_status=4)
    assert manifest(out)["exit_status"] == 4
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    assert "not a run folder" in record(other, *WORKLOAD, options=("--force",), check_status=2).stderr
    assert (other / "notes.txt").read_text() == "mine"


def test_level_5_and_cublas(tmp_path):
    out = tmp_path / "run"
    record(out, *WORKLOAD, options=("--level", "5", "--libs", "cublaslt,cublas"))
    assert sorted(p.name for p in out.glob("*.gz")) == ["rank0.cublas.log.gz", "rank0.cublaslt.log.gz"]
    assert "[Api][cublasLtMatmulDescCreate]" in text(out / "rank0.cublaslt.log.gz")
    doc = manifest(out)
    assert doc["logging"]["variables"] == {"CUBLASLT_LOG_LEVEL": "5", "CUBLAS_LOGINFO_DBG": "1"}
    assert doc["ranks"]["0"]["versions"]["cuBLAS (log)"] == "12.9.3"
    parsed = api.parse(str(out))
    assert {r.log_format for r in parsed.gemms} >= {"cublaslt", "cublas"}


def test_amd_libraries(tmp_path):
    out = tmp_path / "run"
    record(out, *LAUNCH, "--nproc", "2", *WORKLOAD, "--platform", "amd", options=("--level", "3"))
    assert sorted(p.name for p in out.glob("rank1.*")) == [
        "rank1.hipblaslt.log.gz",
        "rank1.rocblas-bench.log.gz",
        "rank1.rocblas-trace.log.gz",
    ]
    assert manifest(out)["logging"]["variables"] == {
        "ROCBLAS_LAYER": "3",
        "CUBLASLT_LOG_LEVEL": "3",
        "HIPBLASLT_LOG_MASK": "39",
    }
    inputs = api.read_run_files([str(out)])
    assert {(r.input.rank, r.input.how) for r in inputs.runs} == {(0, "manifest"), (1, "manifest")}
    assert all(len(r.calls) == 4 for r in inputs.runs)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ranks of other processes are read from /proc")
def test_a_process_without_the_hook_gets_its_rank_from_its_environment(tmp_path):
    out = tmp_path / "run"
    record(out, *LAUNCH, "--nproc", "2", "sh", str(HERE / "worker.sh"))
    doc = manifest(out)
    assert [(f["file"], f["rank"], f["rank_from"]) for f in doc["files"]] == [
        ("rank0.cublaslt.log.gz", 0, "environment (RANK)"),
        ("rank1.cublaslt.log.gz", 1, "environment (RANK)"),
    ]


# ---- run folders as inputs -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> tuple[Path, Path]:
    """A TP=2 run (rank 1 planted with algoId 0, TF32 on in torch) and a TP=1 run (NVIDIA_TF32_OVERRIDE=0,
    TF32 off in torch)."""
    base = tmp_path_factory.mktemp("runs")
    record(base / "tp2", *LAUNCH, "--nproc", "2", *WORKLOAD, "--plant-rank", "1", "--torch", "on")
    record(base / "tp1", *WORKLOAD, "--torch", "off", env=_env(NVIDIA_TF32_OVERRIDE="0"))
    return base / "tp2", base / "tp1"


def test_diff_of_two_recorded_runs_shows_the_settings_first(runner, two_runs, monkeypatch):
    tp2, _ = two_runs
    monkeypatch.chdir(tp2.parent)
    result = runner.invoke(cli, ["diff", "tp2", "tp1", "--caps", str(SEED / "caps.json")])
    assert result.exit_code == 1, result.stderr
    assert result.stdout.startswith("Settings that differ\n")
    settings = result.stdout.split("\n\n", 1)[0]
    rows = [line.split() for line in settings.splitlines()[3:]]
    assert rows == [
        ["world", "size", "2", "1"],
        ["env", "NVIDIA_TF32_OVERRIDE", "unset", "0"],
        ["torch.backends.cuda.matmul.allow_tf32", "True", "False"],
        ["torch.float32_matmul_precision", "high", "highest"],
    ]
    assert "PRECISION x2" in result.stdout and "rank 1:" in result.stdout
    assert "algoId 0 vs 21" in result.stdout
    assert result.stderr.index("settings that differ between tp2 and tp1") < result.stderr.index("compared:")
    document = json.loads(runner.invoke(cli, ["diff", "tp2", "tp1", "-f", "json", "-q"]).stdout)
    assert [row["setting"] for row in document["settings"]["differ"]] == [
        "world size",
        "env NVIDIA_TF32_OVERRIDE",
        "torch.backends.cuda.matmul.allow_tf32",
        "torch.float32_matmul_precision",
    ]
    assert [(r["file"], r["rank"], r["how"]) for r in document["ranks"]] == [
        ("tp2/rank0.cublaslt.log.gz", 0, "manifest"),
        ("tp2/rank1.cublaslt.log.gz", 1, "manifest"),
    ]
    assert [f["class"] for f in document["findings"]] == ["unknown"]  # no caps in the folders


def test_caps_come_from_the_run_folders(runner, two_runs, tmp_path):
    tp2, tp1 = (Path(shutil.copytree(p, tmp_path / p.name)) for p in two_runs)
    shutil.copy(SEED / "caps.json", tp1 / "caps.json")
    result = runner.invoke(cli, ["diff", str(tp2), str(tp1)])
    assert result.exit_code == 1 and "PRECISION x2" in result.stdout
    assert f"caps from the run folders: {tp1}/caps.json" in result.stderr
    conflicting = json.loads((SEED / "caps.json").read_text())
    conflicting["entries"][0]["numericalImplFlags"] = "0x40202"
    (tp2 / "caps.json").write_text(json.dumps(conflicting))
    result = runner.invoke(cli, ["diff", str(tp2), str(tp1)])
    assert "caps: algoId 0 COMPUTE_32F_FAST_TF32 has numerical impl flags 0x40202 in" in result.stderr
    assert f"using {tp2}/caps.json's" in result.stderr
    assert result.exit_code == 0  # the first run's caps say algoId 0 and 21 do the same arithmetic


def test_check_summary_and_parse_read_a_run_folder(runner, two_runs):
    tp2, _ = two_runs
    summary = runner.invoke(cli, ["summary", str(tp2), "-f", "json"])
    assert summary.exit_code == 0, summary.stderr
    assert sum(s["calls"] for s in json.loads(summary.stdout)["signatures"]) == 8
    check = runner.invoke(cli, ["check", str(tp2)])
    assert check.exit_code == 0, check.stderr
    parsed = runner.invoke(cli, ["parse", str(tp2), "-f", "jsonl"])
    items = [json.loads(line) for line in parsed.stdout.splitlines() if '"type": "item"' in line]
    assert parsed.exit_code == 0 and len(items) == 8
    assert str(tp2 / "run.json") not in parsed.stderr


def test_a_glob_of_one_library_in_run_folders_keeps_the_settings(two_runs):
    tp2, tp1 = two_runs
    report = api.diff(str(tp2 / "*.cublaslt.log.gz"), str(tp1 / "*.cublaslt.log.gz"))
    assert report.sections[0][0] == "Settings that differ"


# ---- --probe against the C stub of libcublasLt ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def stub(tmp_path_factory) -> Path:
    from tests.native.test_probe import _build

    return _build(tmp_path_factory, "record-stub")


def test_probe_writes_caps_that_diff_uses(tmp_path, stub, runner):
    env = _env(BLASLOG_CUBLASLT=str(stub))
    record(tmp_path / "tp2", *LAUNCH, "--nproc", "2", *WORKLOAD, "--plant-rank", "1", options=("--probe",), env=env)
    record(tmp_path / "tp1", *WORKLOAD, env=env)
    doc = manifest(tmp_path / "tp2")
    assert doc["probe"]["status"] == "ok" and doc["probe"]["configurations"] == 2 and doc["probe"]["probed"] == 2
    assert doc["probe"]["version"] == "12.9.3" and doc["probe"]["caps"] == "caps.json"
    caps = json.loads((tmp_path / "tp2" / "caps.json").read_text())
    assert {(e["algoId"], e["numericalImplFlags"]) for e in caps["entries"]} == {(0, "0x80201"), (21, "0x40202")}
    result = runner.invoke(cli, ["diff", str(tmp_path / "tp2"), str(tmp_path / "tp1")])
    assert result.exit_code == 1 and "PRECISION x2" in result.stdout and "0x80201" in result.stdout


def test_a_probe_that_cannot_run_is_a_note(tmp_path, stub):
    env = _env(BLASLOG_CUBLASLT=str(tmp_path / "missing" / "libcublasLt.so.12"))
    done = record(tmp_path / "run", *WORKLOAD, "--exit", "5", options=("--probe",), env=env, check_status=5)
    doc = manifest(tmp_path / "run")
    assert doc["probe"]["status"] == "failed" and "not probed" in doc["probe"]["note"]
    assert any(note.startswith("probe: not probed") for note in doc["notes"]) and "probe: not probed" in done.stderr
    assert not (tmp_path / "run" / "caps.json").exists()
    assert [f["file"] for f in doc["files"]] == ["rank0.cublaslt.log.gz"]


def test_a_crashing_probe_is_a_note_with_what_was_probed(tmp_path, stub):
    env = _env(BLASLOG_CUBLASLT=str(stub), STUB_CRASH_ALGO="0")
    record(tmp_path / "run", *LAUNCH, "--nproc", "2", *WORKLOAD, "--plant-rank", "1", options=("--probe",), env=env)
    probe = manifest(tmp_path / "run")["probe"]
    assert probe["status"] in ("partial", "failed") and "crashed" in probe["note"]


# ---- the pieces ----------------------------------------------------------------------------------------------------


def test_libraries_and_their_variables(tmp_path):
    assert parse_libs(None) == ("cublaslt", "rocblas", "hipblaslt")
    assert parse_libs("cublas, CUBLASLT,cublas") == ("cublas", "cublaslt")
    with pytest.raises(InputError, match="--libs cudnn: not a library blaslog records; choose from cublaslt,cublas"):
        parse_libs("cudnn")
    env = logging_environment(tmp_path, list(LIBRARIES), 5)
    assert env["CUBLASLT_LOG_FILE"] == str(tmp_path / "pid%i.cublaslt.log")
    assert env["CUBLAS_LOGDEST_DBG"] == str(tmp_path / "process.cublas.log")
    assert env["ROCBLAS_LAYER"] == "7" and env["HIPBLASLT_LOG_MASK"] == "63" and env["CUBLASLT_LOG_LEVEL"] == "5"
    child = child_environment(
        {"PYTHONPATH": "/mine", "CUBLASLT_LOG_MASK": "16", "HIPBLASLT_LOG_LEVEL": "5"},
        tmp_path,
        ["cublaslt", "hipblaslt"],
        2,
    )
    assert child["PYTHONPATH"].split(os.pathsep)[1:] == ["/mine"]
    assert Path(child["PYTHONPATH"].split(os.pathsep)[0], "sitecustomize.py").is_file()
    assert "CUBLASLT_LOG_MASK" not in child and "HIPBLASLT_LOG_LEVEL" not in child
    assert json.loads(child["BLASLOG_RECORD_FILES"]) == [
        ["CUBLASLT_LOG_FILE", "cublaslt", True],
        ["HIPBLASLT_LOG_FILE", "hipblaslt", True],
    ]


def test_each_library_says_what_the_hook_notes(tmp_path):
    """The hook notes the settings and shared objects each library's declaration names (LogSwitch.settings,
    .objects), those of libraries not logged too, beside the runtime's and PyTorch's own; a spoiled WATCH value
    gives no names, never a failure in the recorded process."""
    (tmp_path / hook.WATCH).parent.mkdir()
    (tmp_path / hook.WATCH).write_text(json.dumps(watch()))
    prefixes, objects = hook.read_watch(str(tmp_path))
    assert {"CUBLASLT_", "CUBLAS_", "ROCBLAS_", "HIPBLASLT_", "MKL_"} <= set(prefixes)
    assert {"libcublasLt", "libcublas", "librocblas", "libhipblaslt", "libmkl_rt"} <= set(objects)
    environ = {"MKL_CBWR": "COMPATIBLE", "CUBLAS_WORKSPACE_CONFIG": ":4096:8", "HOME": "/root", "OMP_X": "1"}
    assert hook.relevant_environment(environ, prefixes) == {
        "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
        "MKL_CBWR": "COMPATIBLE",
    }
    assert hook.relevant_environment(environ) == {}  # no library's prefixes: PyTorch's own only
    assert hook.relevant_environment({"PYTORCH_TUNABLEOP_ENABLED": "1"}) == {"PYTORCH_TUNABLEOP_ENABLED": "1"}
    assert hook.read_watch(str(tmp_path / "elsewhere")) == ((), ())
    spoiled = {
        None: ((), ()),
        "": ((), ()),
        "[": ((), ()),
        "[1]": ((), ()),
        "[" * 100_000: ((), ()),  # a RecursionError in json, not a ValueError
        '{"settings": "MKL_"}': ((), ()),
        '{"settings": [1, "A B", "X_\\n", "P_", "PA_", "path_"], "objects": {}}': (("PA_",), ()),
        '{"settings": ["A", "P"], "objects": ["libx", "x", "lib/x", "libcublasLt"]}': ((), ("libx", "libcublasLt")),
    }
    for text, expected in spoiled.items():
        assert hook.watched(text) == expected, text


def test_the_settings_that_differ_leave_out_every_library_s_logging():
    """What `blaslog record` sets to turn a library's logging on (every LogSwitch's variables, MKL's too) is no
    setting that differs; a library's variable that can change its arithmetic is."""
    from blaslog.formats import loggings

    logging = {name: str(number) for number, name in enumerate(sorted(set().union(*(s.names() for s in loggings()))))}
    assert {"MKL_VERBOSE", "MKL_VERBOSE_OUTPUT_FILE", "CUBLASLT_LOG_LEVEL", "ROCBLAS_LAYER"} <= set(logging)
    first = {"environment": {**logging, "MKL_CBWR": "AVX2"}}
    second = {"environment": {"MKL_CBWR": "COMPATIBLE"}}
    assert api.settings_diff(first, second) == [
        {"setting": "env MKL_CBWR", "sharded": "AVX2", "unsharded": "COMPATIBLE"}
    ]


def test_the_versions_a_log_names_are_each_library_s(tmp_path):
    from blaslog.record import _log_versions

    (tmp_path / "rank0.mkl.log").write_text(
        "MKL_VERBOSE oneMKL 2024.0 Update 2 Patch 2 Product build 20240823 for Intel(R) 64 architecture\n"
    )
    (tmp_path / "rank0.cublaslt.log").write_text(
        "[2024-01-01 00:00:00][cublasLt][1][Info][cublasLtCreate] cuBLASLt v12.9 device #0\n"
    )
    files = [{"file": "rank0.mkl.log"}, {"file": "rank0.cublaslt.log"}, {"file": "missing.log"}]
    assert _log_versions(tmp_path, files) == {
        "rank0.mkl.log": {"oneMKL (log)": "2024.0 Update 2"},
        "rank0.cublaslt.log": {"cuBLASLt (log)": "12.9"},
    }


def test_the_help_names_every_library(tmp_path):
    """`blaslog --help` and `record --help` list the libraries from their declarations (a library added as one
    module under formats/ is listed without an edit elsewhere)."""
    from click.testing import CliRunner

    from blaslog.formats import library_hints, loggings
    from blaslog.record import DEFAULT_LIBS

    top = " ".join(CliRunner().invoke(cli, ["--help"]).output.split())
    for library, hints in library_hints().items():
        assert library in top and all(" ".join(hint.split()) in top for hint in hints), library
    assert "mkl (MKL_VERBOSE=1)" in top
    text = " ".join(CliRunner().invoke(cli, ["record", "--help"]).output.split())
    assert f"Libraries to log: {', '.join(s.name for s in loggings())}." in text
    assert f"[default: {','.join(DEFAULT_LIBS)}]" in text and "mkl" not in DEFAULT_LIBS


def test_rank_variables_in_order():
    assert hook.rank_from_environ({"LOCAL_RANK": "1", "RANK": "5"}) == (5, "RANK")
    assert hook.rank_from_environ({"OMPI_COMM_WORLD_RANK": "3", "SLURM_PROCID": "0"}) == (3, "OMPI_COMM_WORLD_RANK")
    assert hook.rank_from_environ({"SLURM_PROCID": "2"}) == (2, "SLURM_PROCID")
    assert hook.rank_from_environ({"RANK": "x", "LOCAL_RANK": "4"}) == (4, "LOCAL_RANK")
    assert hook.rank_from_environ({}) == (None, None)


def test_prepare_folder_refuses_a_file(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(InputError, match="not a folder"):
        prepare_folder(tmp_path / "f", force=True)
    assert prepare_folder(tmp_path / "new" / "run", force=False).is_dir()


def test_settings_that_differ_by_rank():
    first = {
        "world_size": 2,
        "environment": {"NVIDIA_TF32_OVERRIDE": "0", "CUBLASLT_LOG_LEVEL": "2"},
        "ranks": {
            "0": {
                "gpu": "A100",
                "settings": {"torch.backends.cuda.matmul.allow_tf32": False},
                "versions": {"libcublasLt": "12.9.1"},
            },
            "1": {
                "gpu": "H100",
                "settings": {"torch.backends.cuda.matmul.allow_tf32": False},
                "versions": {"libcublasLt": "12.9.1"},
            },
        },
    }
    second = {
        "world_size": 1,
        "environment": {"CUBLASLT_LOG_LEVEL": "5", "CUBLAS_WORKSPACE_CONFIG": ":16:8"},
        "ranks": {
            "0": {
                "gpu": "A100",
                "settings": {"torch.backends.cuda.matmul.allow_tf32": False},
                "versions": {"libcublasLt": "12.4.5"},
            }
        },
    }
    assert api.settings_diff(first, second) == [
        {"setting": "world size", "sharded": "2", "unsharded": "1"},
        {"setting": "GPU", "sharded": "by rank: 0 A100; 1 H100", "unsharded": "A100"},
        {"setting": "env CUBLAS_WORKSPACE_CONFIG", "sharded": "unset", "unsharded": ":16:8"},
        {"setting": "env NVIDIA_TF32_OVERRIDE", "sharded": "0", "unsharded": "unset"},
        {"setting": "version libcublasLt", "sharded": "12.9.1", "unsharded": "12.4.5"},
    ]


def test_the_hook_does_nothing_when_imported_by_blaslog():
    assert hook.__name__ == "blaslog._hook.sitecustomize"
    assert hook.stem(3, 42) == "rank3.pid42" and hook.stem(None, 42) == "pid42"
    source = Path(hook.__file__).read_text()
    compile(source, hook.__file__, "exec", flags=0, dont_inherit=True)  # no `from __future__` needed
    assert "from blaslog" not in source and "import blaslog" not in source
