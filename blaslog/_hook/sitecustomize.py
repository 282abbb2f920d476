"""blaslog's start-up hook for `blaslog record` (see blaslog/_hook/__init__.py).

Run as ``sitecustomize`` (the hook's folder first on PYTHONPATH) in every Python process of a recorded command:

1. learns the process's rank from the launcher's variables (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK,
   SLURM_PROCID, then LOCAL_RANK) and sets the libraries' log-file variables to ``rank3.pid%i.cublaslt.log``
   in the run folder before any BLAS library is loaded (without a rank, blaslog record's ``pid%i`` names stay);
2. writes ``.blaslog/proc/<pid>.json`` in the run folder: pid, rank, relevant environment; again at exit with
   torch's matmul settings, the GPU and the BLAS libraries mapped into the process;
3. runs the sitecustomize that was found later on sys.path, as if this one were not there.

Standard library only, syntax for Python 3.8 and later (the command may run another Python than blaslog's),
and every step is guarded: the hook never stops the process it runs in.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, MutableMapping

FOLDER = "BLASLOG_RECORD_DIR"
"""The run folder (absolute)."""
HOOK = "BLASLOG_RECORD_HOOK"
"""This hook's folder, as put on PYTHONPATH."""
FILES = "BLASLOG_RECORD_FILES"
"""JSON: [log-file variable, the library key in the file name, whether the library expands `%i`], one per file
(["CUBLASLT_LOG_FILE", "cublaslt", true])."""

RANK_VARIABLES = ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", "LOCAL_RANK")
"""Launchers' rank variables, most trusted first (LOCAL_RANK is global only on one node)."""
WORLD_VARIABLES = ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS")
"""Launchers' world-size variables."""

RELEVANT_NAMES = (
    "NVIDIA_TF32_OVERRIDE",
    "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
    "XLA_FLAGS",
    "JAX_DEFAULT_MATMUL_PRECISION",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
)
"""Environment variables that can change which GEMM algorithm runs, or which GPU."""
RELEVANT_PREFIXES = ("TORCH_BLAS_PREFER_", "PYTORCH_TUNABLEOP_")
"""Prefixes of such variables that are PyTorch's (each BLAS library's are in WATCH)."""
RUNTIMES = ("libcudart", "libamdhip64")
"""The GPU runtimes' shared objects (each BLAS library's are in WATCH)."""
WATCH = os.path.join(".blaslog", "watch.json")
"""In the run folder, written by blaslog record before the command starts: {"settings": prefixes of the variables
that can change a library's arithmetic, "objects": the names of the libraries' shared objects}, as each library's
declaration says (``blaslog.formats.LogSwitch``), noted beside the runtime's and PyTorch's own (RELEVANT_PREFIXES,
RUNTIMES). A file, not a variable: whatever reaches a process that knows the folder (a launcher may pass on only
some variables), it reads the same."""
_PREFIX = re.compile(r"[A-Z][A-Z0-9]+_")
"""A library's prefix: two letters or more and an underscore (`P` would take PATH, `A` AWS_*)."""
_OBJECT = re.compile(r"lib[A-Za-z0-9_]+")


MAX_RANK = 1 << 20
"""Ranks are below this and world sizes at most this: what the hook writes and every reader of a run folder
accepts (a launcher's `RANK=` of 30 digits, or `²`, is no rank)."""
_NUMBER = re.compile(r"[0-9]{1,7}")


def rank_number(text: str | None) -> int | None:
    """A launcher variable's value as a rank or world size (ASCII digits, at most MAX_RANK), else None."""
    value = (text or "").strip()
    if _NUMBER.fullmatch(value) is None or int(value) > MAX_RANK:
        return None
    return int(value)


def rank_from_environ(environ: Mapping[str, str]) -> tuple[int | None, str | None]:
    """(rank, variable) from the launchers' variables, or (None, None)."""
    for name in RANK_VARIABLES:
        value = rank_number(environ.get(name))
        if value is not None and value < MAX_RANK:
            return value, name
    return None, None


def world_size_from_environ(environ: Mapping[str, str]) -> int | None:
    """The world size the launcher announced, or None."""
    for name in WORLD_VARIABLES:
        value = rank_number(environ.get(name))
        if value:
            return value
    return None


def watched(text: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(prefixes, shared objects) of WATCH's text: the strings of its two lists that are a library's prefix and a
    shared object's name (anything else in it is left out; text that is no such JSON gives none)."""
    try:
        found = json.loads(text or "{}")
    except Exception:  # ValueError, RecursionError (`[[[[...`): never the process's failure
        return (), ()
    if not isinstance(found, dict):
        return (), ()

    def names(key: str, pattern: re.Pattern[str]) -> tuple[str, ...]:
        items = found.get(key)
        if not isinstance(items, list):
            return ()
        return tuple(item for item in items if isinstance(item, str) and pattern.fullmatch(item))

    return names("settings", _PREFIX), names("objects", _OBJECT)


def read_watch(folder: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What the run folder's WATCH says (none where it cannot be read)."""
    try:
        with open(os.path.join(folder, WATCH), encoding="utf-8") as handle:
            return watched(handle.read(1 << 16))
    except Exception:
        return (), ()


def relevant_environment(environ: Mapping[str, str], prefixes: tuple[str, ...] = ()) -> dict[str, str]:
    """The variables of `environ` that can change the arithmetic of a GEMM (and which GPU runs it): RELEVANT_NAMES,
    and those that begin with RELEVANT_PREFIXES or `prefixes` (the libraries')."""
    starts = RELEVANT_PREFIXES + prefixes
    return {k: v for k, v in sorted(environ.items()) if k in RELEVANT_NAMES or k.startswith(starts)}


def stem(rank: int | None, pid: int | str) -> str:
    """The file-name stem of a process's logs: `rank3.pid1234` (`pid` may be `%i`), or `pid1234` without a rank."""
    return f"rank{rank}.pid{pid}" if rank is not None else f"pid{pid}"


def _write_json(path: str, document: dict[str, Any]) -> None:
    """Write `document` to `path` through a temporary file, so that a reader never sees half of it."""
    part = f"{path}.{os.getpid()}.part"
    with open(part, "w") as handle:
        json.dump(document, handle, indent=1, sort_keys=True, default=str)
    os.replace(part, path)


def mapped_libraries(objects: tuple[str, ...] = ()) -> dict[str, dict[str, str | None]]:
    """The BLAS libraries (`objects`: their shared objects' names) and runtimes (RUNTIMES) mapped into this process:
    {name: {"path", "version"}} (Linux)."""
    found: dict[str, dict[str, str | None]] = {}
    names = "|".join(re.escape(name) for name in sorted(set(objects + RUNTIMES), key=len, reverse=True))
    pattern = re.compile(r"/(" + names + r")\.so[^/\s]*$")
    try:
        with open("/proc/self/maps") as handle:
            for line in handle:
                match = pattern.search(line.rstrip("\n"))
                if match and match.group(1) not in found:
                    path = line.split(None, 5)[-1].strip()
                    found[match.group(1)] = {"path": path, "version": _version_of(path)}
    except OSError:
        pass
    return found


def _version_of(path: str) -> str | None:
    """The version in a library's real file name (libcublasLt.so.12.9.1.4), else its wheel's version, or None."""
    real = os.path.basename(os.path.realpath(path))
    match = re.search(r"\.so\.(\d+\.\d+[\d.]*)$", real)
    if match:
        return match.group(1)
    match = re.search(r"[/\\]site-packages[/\\]nvidia[/\\](cublas|cuda_runtime)[/\\]", path)
    if match:
        try:
            from importlib import metadata

            wanted = "nvidia-" + match.group(1).replace("_", "-")
            for dist in metadata.distributions():
                name = (dist.metadata["Name"] or "").lower()
                if name == wanted or name.startswith(wanted + "-cu"):
                    return dist.version
        except Exception:
            return None
    return None


def torch_facts() -> tuple[dict[str, Any], dict[str, Any], str | None, dict[str, int]]:
    """What torch (when the program imported it) says about versions, the GPU and its matmul settings."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {}, {}, None, {}
    versions: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    gpu: str | None = None
    dist: dict[str, int] = {}

    def get(key: str, target: dict[str, Any], read: Callable[[], Any]) -> None:
        try:
            value = read()
        except Exception:
            return
        if value is not None:
            target[key] = value if isinstance(value, (bool, int, float, str)) else str(value)

    get("torch", versions, lambda: torch.__version__)
    get("cuda (torch)", versions, lambda: torch.version.cuda)
    get("hip (torch)", versions, lambda: torch.version.hip)
    get("cudnn (torch)", versions, lambda: torch.backends.cudnn.version())
    get("torch.backends.cuda.matmul.allow_tf32", settings, lambda: torch.backends.cuda.matmul.allow_tf32)
    get("torch.backends.cudnn.allow_tf32", settings, lambda: torch.backends.cudnn.allow_tf32)
    get("torch.float32_matmul_precision", settings, lambda: torch.get_float32_matmul_precision())
    get(
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
        settings,
        lambda: torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
    )
    get(
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
        settings,
        lambda: torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
    )
    get("torch.deterministic_algorithms", settings, lambda: torch.are_deterministic_algorithms_enabled())
    get("torch.backends.cuda.preferred_blas_library", settings, lambda: torch.backends.cuda.preferred_blas_library())
    try:
        # only when CUDA is already up: starting it at exit could hang or fail the process
        if torch.cuda.is_initialized():
            device = torch.cuda.current_device()
            gpu = str(torch.cuda.get_device_name(device))
            major, minor = torch.cuda.get_device_capability(device)
            gpu += f" (sm {major}.{minor})"
    except Exception:
        pass
    try:
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            dist = {"rank": int(torch.distributed.get_rank()), "world_size": int(torch.distributed.get_world_size())}
    except Exception:
        pass
    return versions, settings, gpu, dist


class _Process:
    """This process's record in the run folder."""

    def __init__(self, folder: str, files: dict[str, str]) -> None:
        import socket  # here, not at the top: blaslog.ranks imports this module for MAX_RANK

        self.prefixes, self.objects = read_watch(folder)

        self.path = os.path.join(folder, ".blaslog", "proc", f"{os.getpid()}.json")
        rank, source = rank_from_environ(os.environ)
        self.document = {
            "pid": os.getpid(),
            "ppid": os.getppid(),
            "host": socket.gethostname(),
            "rank": rank,
            "rank_from": source,
            "local_rank": rank_number(os.environ.get("LOCAL_RANK")),
            "world_size": world_size_from_environ(os.environ),
            "argv": list(getattr(sys, "argv", []) or []),
            "executable": sys.executable,
            "started": time.time(),
            "files": files,
            "environment": relevant_environment(os.environ, self.prefixes),
        }

    def save(self) -> None:
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            _write_json(self.path, self.document)
        except Exception:
            pass

    def at_exit(self) -> None:
        if os.getpid() != self.document["pid"]:
            return  # a fork's child that exits normally: not this process
        try:
            versions, settings, gpu, dist = torch_facts()
            libraries = mapped_libraries(self.objects)
            for name, library in libraries.items():
                if library.get("version"):
                    versions.setdefault(name, library["version"])
            self.document.update(
                {
                    "ended": time.time(),
                    "argv": list(sys.argv),
                    "versions": versions,
                    "settings": settings,
                    "gpu": gpu,
                    "libraries": libraries,
                    "distributed": dist,
                    "environment": relevant_environment(os.environ, self.prefixes),
                }
            )
        except Exception:
            pass
        self.save()


def name_log_files(folder: str, variables: list[list[Any]], environ: MutableMapping[str, str]) -> dict[str, str]:
    """With a rank, point each log-file variable at `<folder>/rank3.pid%i.<library>.log` (environ changed in place),
    or `rank3.pid1234.<library>.log` for a library that does not put the process id in place of `%i`; the names.

    The libraries read these variables from the process's environment, which its children inherit: with `%i` a
    child that logs gets a file of its own, named by its own pid and its parent's rank. Without a rank the names
    blaslog record set are kept (`pid%i.cublaslt.log`: the library names the file by its pid)."""
    rank, _ = rank_from_environ(environ)
    if rank is None:
        return {}
    files = {}
    for variable, key, pid_names in variables:
        name = f"{stem(rank, '%i' if pid_names else os.getpid())}.{key}.log"
        environ[variable] = os.path.join(folder, name)
        files[key] = name
    return files


def chain(hook_folder: str | None) -> None:
    """Run the sitecustomize found on sys.path after `hook_folder`, as Python would have without the hook."""
    import importlib.machinery
    import importlib.util

    mine = os.path.normcase(os.path.abspath(hook_folder)) if hook_folder else None
    path = [p for p in sys.path if mine is None or os.path.normcase(os.path.abspath(p or ".")) != mine]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


def main() -> None:
    """What the hook does when Python imports it as sitecustomize."""
    folder = os.environ.get(FOLDER)
    hook_folder = os.environ.get(HOOK)
    if folder:
        try:
            variables = json.loads(os.environ.get(FILES) or "[]")
            process = _Process(folder, name_log_files(folder, variables, os.environ))
            process.save()
            import atexit

            atexit.register(process.at_exit)
        except Exception:
            pass
    if hook_folder:
        # the hook's folder off sys.path: nothing else is to be imported from it
        mine = os.path.normcase(os.path.abspath(hook_folder))
        sys.path[:] = [p for p in sys.path if os.path.normcase(os.path.abspath(p or ".")) != mine]
    try:
        chain(hook_folder)
    except Exception:
        import traceback

        traceback.print_exc()  # the program's own sitecustomize failed: show it, as Python would


if __name__ == "sitecustomize":
    main()
