"""The ctypes binding driven end to end against a C stub of libcublasLt (built here with gcc)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from blaslog import LibraryNotFound, NativeError, native
from blaslog.cli import cli
from blaslog.errors import ProbeCrashed
from tests.conftest import SEED

HERE = Path(__file__).parent


def _build(tmp_path_factory, name: str, *flags: str) -> Path:
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler to build the libcublasLt stub")
    out = tmp_path_factory.mktemp(name) / "libcublasLt.so.12"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-O1", *flags, "-o", str(out), str(HERE / "stub_cublaslt.c")], check=True
    )
    return out


@pytest.fixture(scope="module")
def stub(tmp_path_factory) -> Path:
    return _build(tmp_path_factory, "stub")


@pytest.fixture
def with_stub(stub, monkeypatch):
    monkeypatch.setenv("BLASLOG_CUBLASLT", str(stub))
    for name in ("STUB_CREATE_FAIL", "STUB_CRASH_ALGO"):
        monkeypatch.delenv(name, raising=False)
    return stub


SEED_CONFIG = {
    "computeType": "COMPUTE_32F_FAST_TF32",
    "scaleType": "R_32F",
    "Atype": "R_32F",
    "Btype": "R_32F",
    "Ctype": "R_32F",
    "Dtype": "R_32F",
}


def test_probe_reads_flags_tiles_stages_and_version(with_stub):
    result = native.probe([dict(SEED_CONFIG, algoId=0), dict(SEED_CONFIG, algoId=21)], gpu_info=False)
    assert result.version == 120903 and result.version_text == "12.9.3"
    assert result.library == str(with_stub)
    algo0, algo21 = result.entries
    assert algo0["numericalImplFlags"] == "0x80201" and algo0["decoded"] == ["FMA", "ACCUMULATOR_32F", "INPUT_32F"]
    assert algo21["numericalImplFlags"] == "0x40202" and algo21["decoded"] == ["HMMA", "ACCUMULATOR_32F", "INPUT_TF32"]
    assert algo0["tiles"] == ["MATMUL_TILE_128x32"] and algo0["stages"] == []
    assert algo21["tiles"] == ["MATMUL_TILE_64x64", "MATMUL_TILE_64x32"]
    assert algo21["stages"] == ["MATMUL_STAGES_16x6", "MATMUL_STAGES_32x6", "MATMUL_STAGES_32x5"]
    assert algo21["splitKSupport"] == 1 and algo21["reductionSchemeMask"] == "0x7"
    assert algo21["customOptionMax"] == 3 and algo0["minAlignmentA"] == 4


def test_unknown_algo_is_an_error_with_the_status_name(with_stub):
    result = native.probe([dict(SEED_CONFIG, algoId=99), dict(SEED_CONFIG, algoId=21)], gpu_info=False)
    assert len(result.entries) == 1
    ((config, error),) = result.errors
    assert config["algoId"] == 99 and "CUBLAS_STATUS_INVALID_VALUE" in error and "cublasLtMatmulAlgoInit" in error


def test_create_failure_says_found_but_cuda_could_not_start(with_stub, monkeypatch):
    monkeypatch.setenv("STUB_CREATE_FAIL", "1")
    with pytest.raises(NativeError, match=r"found at .* but CUDA could not start.*CUBLAS_STATUS_NOT_INITIALIZED"):
        native.probe([dict(SEED_CONFIG, algoId=0)], gpu_info=False)


def test_a_crash_in_the_library_is_contained(with_stub, monkeypatch):
    monkeypatch.setenv("STUB_CRASH_ALGO", "21")
    with pytest.raises(ProbeCrashed, match=r"SIGSEGV.*algoId 21") as info:
        native.probe([dict(SEED_CONFIG, algoId=0), dict(SEED_CONFIG, algoId=21)], gpu_info=False)
    assert [e["algoId"] for e in info.value.partial.entries] == [0]


def test_missing_symbol(tmp_path_factory, monkeypatch):
    lib = _build(tmp_path_factory, "nosym", "-DOMIT_ALGO_INIT")
    monkeypatch.setenv("BLASLOG_CUBLASLT", str(lib))
    result = native.probe([dict(SEED_CONFIG, algoId=0)], gpu_info=False)
    ((_, error),) = result.errors
    assert "cublasLtMatmulAlgoInit is missing" in error and "12.9.3" in error


def test_not_found_names_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setenv("BLASLOG_CUBLASLT", str(tmp_path / "libcublasLt.so.12"))
    with pytest.raises(LibraryNotFound, match="no such file"):
        native.probe([dict(SEED_CONFIG, algoId=0)])


def test_import_loads_nothing():
    import subprocess
    import sys

    code = (
        "import blaslog, blaslog.native, blaslog.cli; "
        "print('libcublasLt' in open('/proc/self/maps').read(), blaslog.native._loader.load.cache_info().currsize)"
    )
    if not Path("/proc/self/maps").exists():
        pytest.skip("needs /proc")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "0"]


def test_cli_probe_one_algorithm(with_stub, runner):
    result = runner.invoke(
        cli,
        [
            "probe",
            "--algo-id",
            "21",
            "--compute-type",
            "COMPUTE_32F_FAST_TF32",
            "--scale-type",
            "R_32F",
            "--types",
            "R_32F,R_32F,R_32F,R_32F",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "libcublasLt 12.9.3" in result.stdout
    assert "0x40202: tensor-core MMA (HMMA) with TF32 inputs and FP32 accumulation" in result.stdout
    assert "tiles: MATMUL_TILE_64x64, MATMUL_TILE_64x32" in result.stdout


def test_cli_probe_from_logs_writes_caps_that_diff_uses(with_stub, runner, tmp_path):
    caps = tmp_path / "caps.json"
    result = runner.invoke(
        cli, ["probe", "--from", str(SEED / "sharded.log"), "--from", str(SEED / "unsharded.log"), "--out", str(caps)]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(caps.read_text())
    assert document["kind"] == "blaslog-caps" and document["library_version"] == "12.9.3"
    assert sorted((e["algoId"], e["numericalImplFlags"]) for e in document["entries"]) == [
        (0, "0x80201"),
        (21, "0x40202"),
    ]
    diff = runner.invoke(
        cli, ["diff", str(SEED / "sharded.log"), str(SEED / "unsharded.log"), "--caps", str(caps), "-f", "json", "-q"]
    )
    assert diff.exit_code == 1
    assert json.loads(diff.stdout)["findings"][0]["class"] == "precision"


def test_cli_probe_failure_exits_2_without_traceback(with_stub, runner, monkeypatch):
    monkeypatch.setenv("STUB_CREATE_FAIL", "1")
    result = runner.invoke(cli, ["probe", "--algo-id", "0"])
    assert result.exit_code == 2
    assert "CUDA could not start" in result.stderr and "Traceback" not in result.stderr


def test_cli_probe_crash_reports_and_keeps_what_it_learned(with_stub, runner, monkeypatch, tmp_path):
    monkeypatch.setenv("STUB_CRASH_ALGO", "21")
    caps = tmp_path / "caps.json"
    result = runner.invoke(
        cli, ["probe", "--from", str(SEED / "sharded.log"), "--from", str(SEED / "unsharded.log"), "--out", str(caps)]
    )
    assert "crashed the probe (signal SIGSEGV)" in result.stderr
    assert [e["algoId"] for e in json.loads(caps.read_text())["entries"]] == [0]


def _real_library():
    from blaslog.native import _loader

    for candidate in _loader.candidates():
        if "/" in candidate and Path(candidate).exists():
            return candidate
    return None


@pytest.mark.skipif(_real_library() is None, reason="the nvidia-cublas wheel is not installed")
def test_real_library_version_and_no_gpu_path(monkeypatch):
    """With the real libcublasLt: the version call works; without a GPU, the probe says CUDA could not start."""
    monkeypatch.setenv("BLASLOG_CUBLASLT", _real_library())
    try:
        result = native.probe([dict(SEED_CONFIG, algoId=21)], gpu_info=False)
    except NativeError as exc:
        assert "CUDA could not start" in str(exc) and "CUBLAS_STATUS_NOT_INITIALIZED" in str(exc)
    else:  # a GPU is present
        assert result.version >= 110000


@pytest.mark.gpu
def test_gpu_probe_seed_algorithms():
    """On a GPU: algoId 0 and 21 with COMPUTE_32F_FAST_TF32 report what the seed report read by hand."""
    result = native.probe([dict(SEED_CONFIG, algoId=0), dict(SEED_CONFIG, algoId=21)])
    flags = {e["algoId"]: int(e["numericalImplFlags"], 16) for e in result.entries}
    assert flags[0] & 0xFF == 0x1 and flags[0] & 0xFF0000 == 0x80000  # FMA, FP32 inputs
    assert flags[21] & 0xFF == 0x2 and flags[21] & 0xFF0000 == 0x40000  # HMMA, TF32 inputs
    assert result.gpu.get("name")
