"""`blaslog record`: run a command with the BLAS libraries' logging on, and leave a run folder.

A run folder is what every other command reads as one run (``blaslog diff runs/tp4 runs/tp1``)::

    runs/tp4/
      run.json                  the manifest: command, times, exit status, host, environment, ranks, files
      rank0.cublaslt.log.gz     one log per rank and library
      rank1.cublaslt.log.gz
      pid4242.cublaslt.log.gz   a process whose rank could not be learnt
      caps.json                 with --probe: what libcublasLt says each logged algorithm does

How each process's log is named:

* Python processes run blaslog's start-up hook (:mod:`blaslog._hook.sitecustomize`, put first on PYTHONPATH),
  which learns the rank from the launcher's variables (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID,
  LOCAL_RANK) and sets the log-file variables to ``rank3.pid%i.<library>.log`` before any library loads (the
  process's own pid for a library without `%i`); it also writes what it learns (rank, versions, torch's matmul
  settings) into ``.blaslog/proc/<pid>.json``.
* Other processes get the names set here: ``pid%i.<library>.log`` for the libraries that put the process id in
  place of ``%i`` (cuBLASLt, hipBLASLt), one shared ``process.<library>.log`` for the others (cuBLAS, rocBLAS).
  While the command runs, ``/proc`` is watched for processes of this run, whose launcher variables give their
  rank (Linux).

When the command ends the logs are renamed ``rank3.cublaslt.log`` (the pid stays in the name of a second process
of one rank), empty ones removed, the rest gzip-compressed, and run.json written (again after the probe).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from blaslog._hook import sitecustomize as hook
from blaslog.errors import BlaslogError, InputError
from blaslog.ranks import MANIFEST, natural_key

DEFAULT_LEVEL = 2
"""cuBLASLt level 2: one [Trace] line per GEMM, with its algorithm."""

HOOK_FOLDER = str(Path(hook.__file__).resolve().parent)
"""The folder put first on the recorded command's PYTHONPATH."""

CAPS = "caps.json"
"""The probe's caps file in a run folder."""

GRACE = 10.0
"""Seconds the run's processes that outlive the command (children left running) are waited for before the logs
are listed."""

PROC = os.path.join(".blaslog", "proc")
"""Where the hook writes one JSON file per process (merged into run.json, then removed)."""


@dataclass(frozen=True, slots=True)
class Library:
    """How one library's logging is turned on and where it writes."""

    name: str
    """`cublaslt`, `cublas`, `rocblas` or `hipblaslt` (the --libs value)."""
    files: tuple[tuple[str, str], ...]
    """(environment variable, key in the file name) of each log file it writes."""
    pid_names: bool
    """True when the library puts the process id in place of `%i` in a file name."""
    cleared: tuple[str, ...] = ()
    """Variables removed from the command's environment because they would override the level set here."""

    def variables(self, level: int) -> dict[str, str]:
        """The variables (other than file names) that turn logging on at `level` (1..5)."""
        if self.name == "cublaslt":
            return {"CUBLASLT_LOG_LEVEL": str(level)}
        if self.name == "cublas":
            return {"CUBLAS_LOGINFO_DBG": "1"}
        if self.name == "rocblas":
            # 2 = bench lines (solution index and flags); 3 adds trace lines, 7 the profile written at exit
            return {"ROCBLAS_LAYER": "2" if level <= 2 else "3" if level <= 4 else "7"}
        # hipBLASLt: 32 = bench lines (solution index) + 1 errors; higher levels add trace, hints, info, api
        return {"HIPBLASLT_LOG_MASK": str(33 if level <= 2 else ((1 << level) - 1) | 32)}


LIBRARIES: dict[str, Library] = {
    "cublaslt": Library("cublaslt", (("CUBLASLT_LOG_FILE", "cublaslt"),), True, ("CUBLASLT_LOG_MASK",)),
    "cublas": Library("cublas", (("CUBLAS_LOGDEST_DBG", "cublas"),), False),
    "rocblas": Library(
        "rocblas",
        (
            ("ROCBLAS_LOG_TRACE_PATH", "rocblas-trace"),
            ("ROCBLAS_LOG_BENCH_PATH", "rocblas-bench"),
            ("ROCBLAS_LOG_PROFILE_PATH", "rocblas-profile"),
        ),
        False,
    ),
    "hipblaslt": Library("hipblaslt", (("HIPBLASLT_LOG_FILE", "hipblaslt"),), True, ("HIPBLASLT_LOG_LEVEL",)),
}
"""The libraries `--libs` can name."""

DEFAULT_LIBS = ("cublaslt", "rocblas", "hipblaslt")
"""Logged unless --libs says otherwise: the library that runs the GEMMs on each platform (cuBLAS's own log names the
algorithm asked for, not the kernel, and costs some 25 lines a call: --libs cublaslt,cublas adds it)."""

KEYS = {key: library.name for library in LIBRARIES.values() for _, key in library.files}
"""File-name key -> library."""

_LOG_NAME = re.compile(
    r"^(?:rank(?P<rank>[0-9]{1,7})\.)?(?:pid(?P<pid>[0-9]+)\.)?(?:(?P<shared>process)\.)?"
    r"(?P<key>[a-z-]+)\.log(?P<gz>\.gz)?$"
)

_VERSIONS = (
    ("cuBLAS (log)", re.compile(rb"cuBLAS \(v(\d+(?:\.\d+)+)\)")),
    ("cuBLASLt (log)", re.compile(rb"cuBLASLt v(\d+(?:\.\d+)+)")),
)


@dataclass(slots=True)
class Recording:
    """What `blaslog record` left."""

    folder: Path
    """The run folder."""
    exit_status: int
    """The command's exit status (128 + N when signal N ended it; 127 when it could not be started)."""
    manifest: dict[str, Any] = field(default_factory=dict)
    """run.json's contents."""

    @property
    def notes(self) -> list[str]:
        """What a person should know about the recording."""
        return list(self.manifest.get("notes", []))


def parse_libs(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """`cublaslt,cublas` -> ('cublaslt', 'cublas'); InputError naming the known libraries for anything else."""
    if text is None:
        return DEFAULT_LIBS
    names = [n.strip().lower() for part in ([text] if isinstance(text, str) else text) for n in part.split(",")]
    names = [n for n in names if n]
    unknown = [n for n in names if n not in LIBRARIES]
    if unknown or not names:
        raise InputError(
            f"--libs {','.join(unknown) or '(empty)'}: not a library blaslog records; choose from {','.join(LIBRARIES)}"
        )
    return tuple(dict.fromkeys(names))


def logging_environment(folder: str | Path, libs: Sequence[str], level: int) -> dict[str, str]:
    """The variables that turn logging on for `libs` at `level`, with file names for processes the hook does
    not reach (``pid%i.cublaslt.log``, or ``process.cublas.log`` for a library without `%i`)."""
    env: dict[str, str] = {}
    for name in libs:
        library = LIBRARIES[name]
        env.update(library.variables(level))
        for variable, key in library.files:
            stem = "pid%i" if library.pid_names else "process"
            env[variable] = os.path.join(str(folder), f"{stem}.{key}.log")
    return env


def child_environment(base: Mapping[str, str], folder: Path, libs: Sequence[str], level: int) -> dict[str, str]:
    """The recorded command's environment: `base` with logging on, the hook first on PYTHONPATH and the variables
    the hook reads."""
    env = dict(base)
    for name in libs:
        for variable in LIBRARIES[name].cleared:
            env.pop(variable, None)
    env.update(logging_environment(folder, libs, level))
    files = [[variable, key, LIBRARIES[name].pid_names] for name in libs for variable, key in LIBRARIES[name].files]
    env[hook.FOLDER] = str(folder)
    env[hook.HOOK] = HOOK_FOLDER
    env[hook.FILES] = json.dumps(files)
    env["PYTHONPATH"] = os.pathsep.join([HOOK_FOLDER, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]])
    return env


def prepare_folder(out: str | Path | None, force: bool) -> Path:
    """The run folder, created (`out` None: a new ``runs/YYYYmmdd-HHMMSS`` folder, ``-2``, ``-3`` ... added when
    another run took that name). An existing non-empty folder is InputError without `force`; with it, only what
    blaslog wrote there is removed (see :func:`_remove_run`), and a folder holding anything else is refused."""
    if out is None:
        return _new_folder(default_out())
    folder = Path(out).absolute()
    link = f"a symbolic link to {os.readlink(folder)}" if folder.is_symlink() else None
    try:
        if link and not folder.exists():
            raise InputError(f"{out}: {link}, which does not exist; name a folder, or remove the link")
        if folder.exists() and not folder.is_dir():
            raise InputError(f"{out}: exists and is not a folder; choose another --output")
        if folder.is_dir() and any(folder.iterdir()):
            if not force:
                raise InputError(
                    f"{out}: the folder exists and is not empty; choose another --output, or give --force to "
                    "replace the run recorded there"
                )
            if link:
                raise InputError(
                    f"{out}: {link}; --force does not replace a run through a link: name the folder itself"
                )
            _remove_run(folder, str(out))
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{out}: cannot be the run folder ({exc.strerror or exc}); choose another --output") from None
    return folder


def _new_folder(name: str) -> Path:
    """`name`, or `name-2`, `name-3` ..., whichever is created first (two runs started in one second)."""
    for attempt in range(1, 1000):
        folder = Path(name if attempt == 1 else f"{name}-{attempt}").absolute()
        try:
            folder.mkdir(parents=True)
        except FileExistsError:
            continue
        except OSError as exc:
            raise InputError(f"{folder}: cannot create the run folder ({exc.strerror or exc}); give --output") from None
        return folder
    raise InputError(f"{name}: 999 run folders of this name exist; give --output")


def _remove_run(folder: Path, out: str) -> None:
    """Remove a run blaslog recorded in `folder`: its manifest (run.json of kind blaslog-run), the files it lists,
    caps.json, and blaslog's working files. InputError, with nothing removed, when the folder holds anything else
    (a run.json of another tool, a file the user put there)."""
    path = folder / MANIFEST
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        document = None
    if not isinstance(document, dict) or document.get("kind") != "blaslog-run":
        raise InputError(
            f"{out}: not a run folder blaslog recorded (no {MANIFEST} of kind blaslog-run); --force replaces only "
            "such a folder: choose another --output"
        )
    ours = {MANIFEST, f".{MANIFEST}.part", CAPS, ".blaslog"}
    for entry in document.get("files") or []:
        name = entry.get("file") if isinstance(entry, dict) else None
        if isinstance(name, str):
            base = name.removesuffix(".gz")
            ours.update((base, base + ".gz", base + ".gz.part"))
    unfinished = document.get("end") is None  # stopped before its logs were listed: they bear blaslog's names
    foreign = []
    for child in folder.iterdir():
        named = child.name in ours or (unfinished and _LOG_NAME.match(child.name.removesuffix(".part")))
        if not (named and (child.name == ".blaslog" or child.is_symlink() or not child.is_dir())):
            foreign.append(child.name)
    if foreign:
        listed = ", ".join(sorted(foreign)[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise InputError(
            f"{out}: holds files blaslog did not write ({listed}); --force removes only a recorded run's own "
            "files, so nothing was removed: choose another --output, or move those files away"
        )
    for child in folder.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def default_out() -> str:
    """`runs/20260606-153142`."""
    return os.path.join("runs", datetime.now().strftime("%Y%m%d-%H%M%S"))


# ---- running -------------------------------------------------------------------------------------------------


class _Watcher(threading.Thread):
    """Watches /proc for the run's processes (they carry BLASLOG_RECORD_DIR) and keeps their launcher ranks: the
    pid -> rank map of processes the hook does not run in (a C++ worker under mpirun)."""

    def __init__(self, folder: Path, interval: float = 0.1) -> None:
        super().__init__(name="blaslog-record-watcher", daemon=True)
        self.marker = f"{hook.FOLDER}={folder}".encode()
        self.interval = interval
        self.ranks: dict[int, tuple[int | None, str | None]] = {}
        self.seen: set[int] = set()
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(self.interval):
            self.scan()

    def scan(self) -> None:
        """Look at every process not seen yet."""
        try:
            pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        except OSError:
            return
        for pid in pids:
            if pid in self.seen:
                continue
            self.seen.add(pid)
            try:
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    raw = handle.read()
            except OSError:
                continue
            entries = raw.split(b"\0")
            if self.marker not in entries:
                continue
            environ = dict(e.decode("utf-8", "replace").partition("=")[::2] for e in entries if b"=" in e)
            self.ranks[pid] = hook.rank_from_environ(environ)

    def stop(self) -> None:
        """One last look, then stop."""
        self.done.set()
        self.scan()

    def alive(self) -> list[int]:
        """The run's processes still running (zombies are not: they write nothing more)."""
        self.scan()
        out = []
        for pid in self.ranks:
            try:
                with open(f"/proc/{pid}/stat", "rb") as handle:
                    state = handle.read().rpartition(b")")[2].split()[:1]
            except OSError:
                continue
            if state != [b"Z"]:
                out.append(pid)
        return sorted(out)

    def wait_for_others(self, grace: float) -> list[int]:
        """Wait up to `grace` seconds for the run's processes that outlive the command (a child left running
        still writes its logs); those still running then."""
        deadline = time.monotonic() + grace
        while (alive := self.alive()) and time.monotonic() < deadline:
            time.sleep(self.interval)
        return alive


class _Signals:
    """While the command runs: SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to blaslog go to the command's process
    group; a third SIGINT kills the group."""

    FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")

    def __init__(self, group: int) -> None:
        self.group = group
        self.received: list[str] = []
        self.previous: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signal handlers can only be set in the main thread
        for name in self.FORWARDED:
            number = getattr(signal, name, None)
            if number is not None:
                self.previous[number] = signal.signal(number, self._forward)

    def _forward(self, number: int, frame: Any) -> None:
        name = signal.Signals(number).name
        self.received.append(name)
        if name == "SIGINT" and self.received.count("SIGINT") >= 3:
            number, name = signal.SIGKILL, "SIGKILL"
            self.received.append(name)
        with contextlib.suppress(OSError):  # the group is gone
            os.killpg(self.group, number)

    def restore(self) -> None:
        for number, handler in self.previous.items():
            signal.signal(number, handler)


def _foreground_tty() -> int | None:
    """The terminal on stdin when blaslog runs in its foreground (so the command can be handed it), else None."""
    try:
        fd = sys.stdin.fileno()
        if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp():
            return fd
    except (AttributeError, OSError, ValueError):
        pass
    return None


def _hand_terminal(fd: int, group: int) -> None:
    """Make `group` the terminal's foreground group (SIGTTOU ignored meanwhile, as shells do)."""
    previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        os.tcsetpgrp(fd, group)
    except OSError:
        pass
    finally:
        signal.signal(signal.SIGTTOU, previous)


def _start(command: Sequence[str], env: dict[str, str], tty: int | None) -> subprocess.Popen[bytes]:
    """Start `command` in a process group of its own (the terminal's foreground group when blaslog had it)."""

    def in_child() -> None:
        os.setpgid(0, 0)
        if tty is not None:
            _hand_terminal(tty, os.getpgrp())

    # preexec_fn: the only way to hand the terminal to the new group before the command runs (no threads yet)
    return subprocess.Popen(list(command), env=env, preexec_fn=in_child)


def _status(returncode: int) -> int:
    """A shell's exit status for a process's return code (128 + N for signal N)."""
    return 128 - returncode if returncode < 0 else returncode


def _now() -> str:
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")


def record(
    command: Sequence[str],
    *,
    out: str | Path | None = None,
    level: int = DEFAULT_LEVEL,
    libs: Sequence[str] | str | None = None,
    compress: bool = True,
    force: bool = False,
    probe: bool = False,
    environ: Mapping[str, str] | None = None,
    on_note: Callable[[str], Any] | None = None,
    grace: float = GRACE,
) -> Recording:
    """Run `command` with logging on for `libs` at `level` and leave a run folder at `out`.

    The command's output goes through unchanged; its exit status is the Recording's. Signals sent to blaslog
    are passed to the command's process group, and the folder is written however the command ends. InputError
    (nothing run) for an empty command, a bad level or library, or an existing folder without `force`.
    """
    if not command:
        raise InputError("give the command to record after --: blaslog record -- python train.py")
    if not 1 <= level <= 5:
        raise InputError(
            f"--level {level}: the levels are 1 to 5 (2: one line per GEMM with its algorithm; 5: every API call)"
        )
    if os.name != "posix":
        raise InputError("blaslog record needs a POSIX system (process groups and signals)")
    names = parse_libs(libs)
    folder = prepare_folder(out, force)
    base = dict(os.environ if environ is None else environ)
    env = child_environment(base, folder, names, level)
    notes: list[str] = []
    overridden = [v for n in names for v, _ in LIBRARIES[n].files if base.get(v)]
    overridden += [v for n in names for v in LIBRARIES[n].cleared if base.get(v)]
    if overridden:
        notes.append(f"{', '.join(overridden)} set in the environment were replaced by the run folder's logging")
    manifest: dict[str, Any] = {
        "schema_version": 1,
        "kind": "blaslog-run",
        "command": list(command),
        "cwd": os.getcwd(),
        "host": socket.gethostname(),
        "start": _now(),
        "end": None,
        "duration_s": None,
        "exit_status": None,
        "blaslog_version": _version(),
        "logging": {
            "level": level,
            "libraries": list(names),
            "compressed": compress,
            "variables": {k: v for n in names for k, v in LIBRARIES[n].variables(level).items()},
        },
        "environment": hook.relevant_environment({k: v for k, v in base.items() if not k.startswith("BLASLOG_")}),
        "notes": notes,
    }
    _write_manifest(folder, manifest)
    started = time.monotonic()
    tty = _foreground_tty()
    watcher = _Watcher(folder)
    forwarded: list[str] = []
    try:
        process = _start(command, env, tty)
    except OSError as exc:
        status = 127 if isinstance(exc, FileNotFoundError) else 126
        notes.append(f"{command[0]}: could not be started ({exc.strerror or exc})")
        manifest["error"] = notes[-1]
    else:
        signals = _Signals(process.pid)
        signals.install()
        if sys.platform.startswith("linux"):
            watcher.start()
        try:
            while True:
                try:
                    returncode = process.wait()
                    break
                except KeyboardInterrupt:  # a SIGINT before the handler was set
                    signals._forward(signal.SIGINT, None)
            if watcher.is_alive():
                survivors = watcher.wait_for_others(grace)
                if survivors:
                    manifest["survivors"] = survivors
                    notes.append(
                        f"processes {', '.join(map(str, survivors))} of the run were still running {grace:g} s "
                        "after the command ended: what they log from now on is not in the run folder"
                    )
        finally:
            signals.restore()
            if tty is not None:
                _hand_terminal(tty, os.getpgrp())
            if watcher.is_alive():
                watcher.stop()
                watcher.join(timeout=5)
        status = _status(returncode)
        forwarded = signals.received
        if returncode < 0:
            manifest["signal"] = signal.Signals(-returncode).name
    manifest.update(end=_now(), duration_s=round(time.monotonic() - started, 3), exit_status=status)
    if forwarded:
        manifest["forwarded_signals"] = forwarded
        notes.append(
            f"{', '.join(dict.fromkeys(forwarded))} passed on to the command; it ended with exit status {status}"
        )
    try:
        _finish(folder, manifest, watcher.ranks, compress, probe, on_note)
    except OSError as exc:  # a full disk: the command's exit status still is the result
        note = f"the run folder could not be completed ({exc.strerror or exc}): its logs are left as they are"
        notes.append(note)
        if on_note is not None:
            on_note(note)
        with contextlib.suppress(OSError):
            _write_manifest(folder, manifest)
    return Recording(folder, status, manifest)


def _version() -> str:
    from blaslog import __version__

    return __version__


# ---- the run folder ------------------------------------------------------------------------------------------


def _write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    part = folder / f".{MANIFEST}.part"
    part.write_text(json.dumps(manifest, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(part, folder / MANIFEST)


def _processes(folder: Path) -> list[dict[str, Any]]:
    """What the hook wrote about each Python process, in pid order."""
    out = []
    proc = folder / PROC
    for path in sorted(proc.glob("*.json"), key=lambda p: natural_key(p.name)) if proc.is_dir() else []:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(document, dict) and isinstance(document.get("pid"), int):
            out.append(document)
    return out


def _finish(
    folder: Path,
    manifest: dict[str, Any],
    watched: dict[int, tuple[int | None, str | None]],
    compress: bool,
    probe: bool,
    on_note: Callable[[str], Any] | None,
) -> None:
    """Name, describe and compress the logs; write run.json (then probe and write it again)."""
    notes: list[str] = manifest["notes"]
    processes = _processes(folder)
    pid_rank: dict[int, tuple[int, str]] = {}
    for pid, (rank, variable) in watched.items():
        if rank is not None:
            pid_rank[pid] = (rank, f"environment ({variable})")
    for document in processes:
        if _rank(document.get("rank")) is not None:
            pid_rank[document["pid"]] = (document["rank"], f"hook ({document.get('rank_from')})")
        elif _rank((document.get("distributed") or {}).get("rank")) is not None:
            pid_rank[document["pid"]] = (document["distributed"]["rank"], "hook (torch.distributed)")
    if not pid_rank:
        # a plain `python train.py` or `./app`: the logs of one process are rank 0's (a shared file only when no
        # other process of the run was seen)
        writers = _writers(folder)
        pids = [w for w in writers if isinstance(w, int)]
        seen = set(watched) | {d["pid"] for d in processes} | set(pids)
        if writers and len(pids) <= 1 and ("process" not in writers or len(seen) <= 1):
            for writer in writers:
                pid_rank[writer if isinstance(writer, int) else -1] = (0, "the only process")
    files = _name_logs(folder, pid_rank, notes)
    versions = _log_versions(folder, files)
    manifest["files"] = files
    manifest["ranks"] = _ranks(files, processes, pid_rank, versions)
    manifest["processes"] = [
        {k: d.get(k) for k in ("pid", "ppid", "rank", "rank_from", "argv", "files")} for d in processes
    ]
    manifest["world_size"] = _world_size(manifest["ranks"], processes)
    gpus = _host_gpus()
    if gpus:
        manifest["gpus"] = gpus
    if not files:
        notes.append(
            "no log file was written: did the command run a GEMM through "
            f"{', '.join(manifest['logging']['libraries'])}?"
        )
    _write_manifest(folder, manifest)
    if compress and files:
        renamed = _compress(folder, files, notes)
        for info in manifest["ranks"].values():
            info["files"] = [renamed.get(name, name) for name in info["files"]]
        _write_manifest(folder, manifest)
    listed = {entry["file"] for entry in files}
    late = sorted(p.name for p in folder.iterdir() if _LOG_NAME.match(p.name) and p.name not in listed)
    if late:
        manifest["late_files"] = late
        notes.append(
            f"{', '.join(late)}: written after the logs were listed (a process that outlived the command); not "
            "in the manifest, so not read as part of the run"
        )
        _write_manifest(folder, manifest)
    if probe:
        manifest["probe"] = _probe(folder)
        if manifest["probe"].get("note"):
            notes.append(f"probe: {manifest['probe']['note']}")
        _write_manifest(folder, manifest)
    shutil.rmtree(folder / ".blaslog", ignore_errors=True)
    if on_note is not None:
        for note in notes:
            on_note(note)


def _rank(value: Any) -> int | None:
    """A rank as every reader of a run folder takes one (an int below MAX_RANK), else None."""
    return value if type(value) is int and 0 <= value < hook.MAX_RANK else None


def _writers(folder: Path) -> list[int | str]:
    """The processes that wrote logs: pids, and `process` for the shared files of processes without a pid name."""
    found: set[int | str] = set()
    for path in folder.iterdir():
        match = _LOG_NAME.match(path.name)
        if match is not None and match["key"] in KEYS and path.is_file() and path.stat().st_size:
            found.add(int(match["pid"]) if match["pid"] else "process" if match["shared"] else "named")
    return sorted(found, key=str)


@dataclass(slots=True)
class _Log:
    """A log file found in the run folder when the command ended."""

    path: Path
    """Where it is."""
    key: str
    """The library key in its name (`cublaslt`, `rocblas-bench`)."""
    rank: int | None
    """The rank that wrote it, when known."""
    pid: int | None
    """The process that wrote it (None for a shared file)."""
    how: str
    """How the rank was learnt."""
    shared: bool
    """A file of the processes the hook did not run in, for a library without `%i`."""
    size: int
    """Bytes."""
    name: str = ""
    """Its final name."""


def _name_logs(folder: Path, pid_rank: dict[int, tuple[int, str]], notes: list[str]) -> list[dict[str, Any]]:
    """Rename the logs by rank (``rank3.cublaslt.log``; a second process of one rank keeps its pid in the name),
    remove empty ones, and describe each: file, library, rank, pid, how the rank was known, bytes."""
    found: list[_Log] = []
    empty = 0
    for path in sorted(folder.iterdir(), key=lambda p: natural_key(p.name)):
        match = _LOG_NAME.match(path.name)
        if match is None or match["key"] not in KEYS or not path.is_file():
            continue
        size = path.stat().st_size
        if size == 0:
            path.unlink()
            empty += 1
            continue
        pid = int(match["pid"]) if match["pid"] else None
        rank: int | None = None
        how = "unknown"
        if match["rank"] is not None:
            rank, how = int(match["rank"]), pid_rank[pid][1] if pid in pid_rank else "file name"
        elif pid is not None and pid in pid_rank:
            rank, how = pid_rank[pid]
        elif match["shared"] and -1 in pid_rank:
            rank, how = pid_rank[-1]
        found.append(_Log(path, match["key"], rank, pid, how, bool(match["shared"]), size, path.name))
    if empty:
        notes.append(f"{empty} empty log files removed (processes that loaded a library but logged nothing)")
    groups: dict[tuple[int, str], list[_Log]] = {}
    for log in found:
        if log.rank is not None:
            groups.setdefault((log.rank, log.key), []).append(log)
    for (rank, key), logs in groups.items():
        logs.sort(key=lambda log: (-log.size, log.pid or 0))
        logs[0].name = f"rank{rank}.{key}.log"
        for log in logs[1:]:
            if log.pid is not None:
                log.name = f"rank{rank}.pid{log.pid}.{key}.log"
        if len(logs) > 1:
            notes.append(
                f"rank {rank} has {len(logs)} {key} logs (processes "
                f"{', '.join(str(log.pid) for log in logs)}: workers or restarts); the largest is "
                f"rank{rank}.{key}.log"
            )
    shared = [log for log in found if log.shared and log.rank is None]
    if shared:
        notes.append(
            f"{', '.join(log.path.name for log in shared)}: written by processes blaslog's hook did not run "
            "in (not Python); this library cannot put the process id in a file name, so all of them wrote "
            "to one file"
        )
    unknown = [log for log in found if log.rank is None and not log.shared]
    if unknown:
        notes.append(
            f"{len(unknown)} logs of processes whose rank was not learnt keep their pid in the name "
            f"({unknown[0].path.name}{', ...' if len(unknown) > 1 else ''})"
        )
    out = []
    for log in sorted(found, key=lambda log: natural_key(log.name)):
        if log.name != log.path.name:
            log.path.rename(folder / log.name)
        out.append(
            {
                "file": log.name,
                "library": KEYS[log.key],
                "log": log.key,
                "rank": log.rank,
                "pid": log.pid,
                "rank_from": log.how,
                "bytes": log.size,
            }
        )
    return out


def _log_versions(folder: Path, files: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Library versions the logs name in their first lines (cuBLAS `(v12.9.3)`, cuBLASLt `v12.9`), per file."""
    out: dict[str, dict[str, str]] = {}
    for entry in files:
        try:
            with open(folder / entry["file"], "rb") as handle:
                head = handle.read(1 << 16)
        except OSError:
            continue
        for name, pattern in _VERSIONS:
            match = pattern.search(head)
            if match:
                out.setdefault(entry["file"], {})[name] = match.group(1).decode()
    return out


def _ranks(
    files: list[dict[str, Any]],
    processes: list[dict[str, Any]],
    pid_rank: dict[int, tuple[int, str]],
    log_versions: dict[str, dict[str, str]],
) -> dict[str, dict[str, Any]]:
    """Per rank: its processes, files, GPU, library versions, torch settings and relevant environment."""
    ranks: dict[int, dict[str, Any]] = {}
    for entry in files:
        if entry["rank"] is None:
            continue
        info = ranks.setdefault(entry["rank"], {"pids": [], "files": [], "versions": {}})
        info["files"].append(entry["file"])
        if entry["pid"] is not None and entry["pid"] not in info["pids"]:
            info["pids"].append(entry["pid"])
        info["versions"].update(log_versions.get(entry["file"], {}))
    by_rank: dict[int, list[dict[str, Any]]] = {}
    for document in processes:
        rank = pid_rank[document["pid"]][0] if document["pid"] in pid_rank else None
        if rank is not None:
            by_rank.setdefault(int(rank), []).append(document)
    for rank, documents in by_rank.items():
        info = ranks.setdefault(rank, {"pids": [], "files": [], "versions": {}})
        # the process that wrote the rank's main log speaks for it (spawned workers inherit its RANK)
        owner = next(
            (e["pid"] for e in files if e["rank"] == rank and e["file"].startswith(f"rank{rank}.{e['log']}.")), None
        )
        main = next((d for d in documents if d["pid"] == owner), min(documents, key=lambda d: d["pid"]))
        info["pids"] = sorted({*info["pids"], *(d["pid"] for d in documents)})
        info["rank_from"] = pid_rank[main["pid"]][1]
        for key in ("host", "local_rank", "world_size", "gpu"):
            if main.get(key) is not None:
                info[key] = main[key]
        info["versions"] = {**info["versions"], **(main.get("versions") or {})}
        info["settings"] = main.get("settings") or {}
        info["environment"] = main.get("environment") or {}
        if main.get("libraries"):
            info["libraries"] = main["libraries"]
    return {str(rank): ranks[rank] for rank in sorted(ranks)}


def _world_size(ranks: dict[str, dict[str, Any]], processes: list[dict[str, Any]]) -> int | None:
    announced: set[int] = {d["world_size"] for d in processes if isinstance(d.get("world_size"), int)}
    if len(announced) == 1:
        return announced.pop()
    return len(ranks) or None


def _host_gpus() -> list[dict[str, str]]:
    """The host's GPUs as nvidia-smi names them (nothing without it)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        completed = subprocess.run(
            [smi, "--query-gpu=index,name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    out = []
    for line in completed.stdout.splitlines() if completed.returncode == 0 else []:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3:
            out.append({"index": parts[0], "name": parts[1], "driver": parts[2]})
    return out


def _compress(folder: Path, files: list[dict[str, Any]], notes: list[str]) -> dict[str, str]:
    """gzip every log (several at once: zlib lets go of the GIL); each through a .part file, so that an
    interrupted or failed compression (a full disk) leaves the plain log, with a note. Old name -> new name."""

    def one(entry: dict[str, Any]) -> str | None:
        source = folder / entry["file"]
        target = folder / (entry["file"] + ".gz")
        part = folder / (entry["file"] + ".gz.part")
        try:
            with (
                open(source, "rb") as raw,
                open(part, "wb") as sink,
                gzip.GzipFile(filename=entry["file"], mode="wb", fileobj=sink, compresslevel=6, mtime=0) as packed,
            ):
                shutil.copyfileobj(raw, packed, 1 << 20)
            os.replace(part, target)
        except OSError as exc:
            with contextlib.suppress(OSError):
                part.unlink()
            return f"{entry['file']} ({exc.strerror or exc})"
        source.unlink()
        entry["file"] += ".gz"
        return None

    before = [entry["file"] for entry in files]
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        failed = [problem for problem in pool.map(one, files) if problem]
    if failed:
        notes.append(f"not compressed, left plain: {', '.join(failed)}")
    return {old: entry["file"] for old, entry in zip(before, files, strict=True)}


def _probe(folder: Path) -> dict[str, Any]:
    """Probe every distinct cuBLASLt algorithm of the run into caps.json; whatever goes wrong is a note."""
    from blaslog import api, native

    try:
        configs = api.probe_configs(from_logs=[str(folder)])
    except BlaslogError as exc:
        return {"status": "skipped", "note": f"nothing to probe ({exc})"}
    result: dict[str, Any] = {"configurations": len(configs)}
    try:
        probed = native.probe(configs)
    except BlaslogError as exc:
        partial: native.ProbeResult | None = getattr(exc, "partial", None)
        if partial is None:
            return {**result, "status": "failed", "note": f"not probed: {exc}"}
        probed = partial
        result.update(status="partial", note=f"{exc}; the configurations probed before are in {CAPS}")
    except Exception as exc:  # never lose the run for the probe's sake
        return {**result, "status": "failed", "note": f"not probed: {type(exc).__name__}: {exc}"}
    result.setdefault("status", "ok")
    result.update(
        library=probed.library,
        version=probed.version_text,
        gpu=probed.gpu,
        probed=len(probed.entries),
        errors=[{"config": c, "error": e} for c, e in probed.errors],
    )
    if probed.entries:
        caps = api.caps_from_probe(probed)
        (folder / CAPS).write_text(json.dumps(caps.to_json(), indent=2) + "\n", encoding="utf-8")
        result["caps"] = CAPS
    if probed.errors and result["status"] == "ok":
        result.update(
            status="partial",
            note=f"{len(probed.errors)} of {len(configs)} configurations could not be probed (see probe.errors)",
        )
    return result


__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_LIBS",
    "LIBRARIES",
    "Library",
    "Recording",
    "child_environment",
    "default_out",
    "logging_environment",
    "parse_libs",
    "prepare_folder",
    "record",
]
