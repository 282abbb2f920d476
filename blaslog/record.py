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
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from blaslog._hook import sitecustomize as hook
from blaslog._run_folder import CAPS, host_gpus
from blaslog._run_folder import compress as compress_logs
from blaslog._run_folder import probe as probe_folder
from blaslog._running import Signals, Watcher, exit_status, foreground_tty, hand_terminal, start
from blaslog.errors import InputError
from blaslog.formats import LogSwitch, loggings
from blaslog.ranks import MANIFEST, natural_key

DEFAULT_LEVEL = 2
"""cuBLASLt level 2: one [Trace] line per GEMM, with its algorithm."""

HOOK_FOLDER = str(Path(hook.__file__).resolve().parent)
"""The folder put first on the recorded command's PYTHONPATH."""

GRACE = 10.0
"""Seconds the run's processes that outlive the command (children left running) are waited for before the logs
are listed."""

PROC = os.path.join(".blaslog", "proc")
"""Where the hook writes one JSON file per process (merged into run.json, then removed)."""


Library = LogSwitch
"""How one library's logging is turned on and where it writes (declared by one dialect of it: its `logging`)."""


def libraries() -> dict[str, LogSwitch]:
    """The libraries `--libs` can name, by name: every registered dialect's `logging` declaration."""
    return {switch.name: switch for switch in loggings()}


def watch() -> dict[str, list[str]]:
    """What the hook notes of each process beside the runtime's own (``hook.WATCH``, in the run folder): every
    library's settings' prefixes and shared objects, as its declaration says (those of libraries not logged too:
    they may compute)."""
    switches = loggings()
    return {
        "settings": [prefix for switch in switches for prefix in switch.settings],
        "objects": [name for switch in switches for name in switch.objects],
    }


def default_libs() -> tuple[str, ...]:
    """Logged unless --libs says otherwise: the library that runs the GEMMs on each platform (cuBLAS's own log names
    the algorithm asked for, not the kernel, and costs some 25 lines a call: --libs cublaslt,cublas adds it)."""
    return tuple(switch.name for switch in loggings() if switch.default)


def file_keys() -> dict[str, str]:
    """File-name key (`cublaslt`, `rocblas-bench`) -> library."""
    return {key: switch.name for switch in loggings() for _, key in switch.files}


LIBRARIES: dict[str, LogSwitch] = libraries()
"""The libraries `--libs` can name (those shipped; :func:`libraries` adds dialects registered later)."""

DEFAULT_LIBS = default_libs()
"""The libraries logged unless --libs says otherwise (see :func:`default_libs`)."""

_LOG_NAME = re.compile(
    r"^(?:rank(?P<rank>[0-9]{1,7})\.)?(?:pid(?P<pid>[0-9]+)\.)?(?:(?P<shared>process)\.)?"
    r"(?P<key>[a-z-]+)\.log(?P<gz>\.gz)?$"
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
        return default_libs()
    known = libraries()
    names = [n.strip().lower() for part in ([text] if isinstance(text, str) else text) for n in part.split(",")]
    names = [n for n in names if n]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise InputError(
            f"--libs {','.join(unknown) or '(empty)'}: not a library blaslog records; choose from {','.join(known)}"
        )
    return tuple(dict.fromkeys(names))


def logging_environment(folder: str | Path, libs: Sequence[str], level: int) -> dict[str, str]:
    """The variables that turn logging on for `libs` at `level`, with file names for processes the hook does
    not reach (``pid%i.cublaslt.log``, or ``process.cublas.log`` for a library without `%i`)."""
    env: dict[str, str] = {}
    known = libraries()
    for name in libs:
        library = known[name]
        env.update(library.variables(level))
        for variable, key in library.files:
            stem = "pid%i" if library.pid_names else "process"
            env[variable] = os.path.join(str(folder), f"{stem}.{key}.log")
    return env


def child_environment(base: Mapping[str, str], folder: Path, libs: Sequence[str], level: int) -> dict[str, str]:
    """The recorded command's environment: `base` with logging on, the hook first on PYTHONPATH and the variables
    the hook reads."""
    env = dict(base)
    known = libraries()
    for name in libs:
        for variable in known[name].cleared:
            env.pop(variable, None)
    env.update(logging_environment(folder, libs, level))
    files = [[variable, key, known[name].pid_names] for name in libs for variable, key in known[name].files]
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


# ---- running ----------------------------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).astimezone().isoformat(timespec="seconds")


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
    _check_request(command, level)
    names = parse_libs(libs)
    folder = prepare_folder(out, force)
    base = dict(os.environ if environ is None else environ)
    env = child_environment(base, folder, names, level)
    (folder / hook.WATCH).parent.mkdir(exist_ok=True)
    (folder / hook.WATCH).write_text(json.dumps(watch()), encoding="utf-8")
    manifest = _first_manifest(command, base, names, level, compress)
    notes: list[str] = manifest["notes"]
    _write_manifest(folder, manifest)
    started = time.monotonic()
    watcher = Watcher(folder)
    status, forwarded = _run(command, env, watcher, manifest, grace)
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


def _check_request(command: Sequence[str], level: int) -> None:
    """InputError for what `record` cannot run: no command, a level out of 1..5, a system without process groups."""
    if not command:
        raise InputError("give the command to record after --: blaslog record -- python train.py")
    if not 1 <= level <= 5:
        raise InputError(
            f"--level {level}: the levels are 1 to 5 (2: one line per GEMM with its algorithm; 5: every API call)"
        )
    if os.name != "posix":
        raise InputError("blaslog record needs a POSIX system (process groups and signals)")


def _first_manifest(
    command: Sequence[str], base: dict[str, str], names: tuple[str, ...], level: int, compress: bool
) -> dict[str, Any]:
    """run.json as written before the command starts (with a note when the environment's logging was replaced)."""
    known = libraries()
    notes: list[str] = []
    overridden = [v for n in names for v, _ in known[n].files if base.get(v)]
    overridden += [v for n in names for v in known[n].cleared if base.get(v)]
    if overridden:
        notes.append(f"{', '.join(overridden)} set in the environment were replaced by the run folder's logging")
    return {
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
            "variables": {k: v for n in names for k, v in known[n].variables(level).items()},
        },
        "environment": hook.relevant_environment(
            {k: v for k, v in base.items() if not k.startswith("BLASLOG_")}, tuple(watch()["settings"])
        ),
        "notes": notes,
    }


def _run(
    command: Sequence[str], env: dict[str, str], watcher: Watcher, manifest: dict[str, Any], grace: float
) -> tuple[int, list[str]]:
    """Run the command to its end: (its exit status, the signals passed on to it). A command that cannot be
    started is exit status 127 (not found) or 126, with a note."""
    tty = foreground_tty()
    try:
        process = start(command, env, tty)
    except OSError as exc:
        manifest["notes"].append(f"{command[0]}: could not be started ({exc.strerror or exc})")
        manifest["error"] = manifest["notes"][-1]
        return (127 if isinstance(exc, FileNotFoundError) else 126), []
    signals = Signals(process.pid)
    signals.install()
    if sys.platform.startswith("linux"):
        watcher.start()
    try:
        returncode = _wait(process, signals)
        _wait_for_survivors(watcher, manifest, grace)
    finally:
        signals.restore()
        if tty is not None:
            hand_terminal(tty, os.getpgrp())
        if watcher.is_alive():
            watcher.stop()
            watcher.join(timeout=5)
    if returncode < 0:
        manifest["signal"] = signal.Signals(-returncode).name
    return exit_status(returncode), signals.received


def _wait(process: subprocess.Popen[bytes], signals: Signals) -> int:
    """The command's return code, once it ends (a SIGINT that came before the handler was set is passed on)."""
    while True:
        try:
            returncode = process.wait()
            break
        except KeyboardInterrupt:
            signals._forward(signal.SIGINT, None)
    return returncode


def _wait_for_survivors(watcher: Watcher, manifest: dict[str, Any], grace: float) -> None:
    """Wait up to `grace` seconds for the run's processes that outlived the command; those still running are
    named in the manifest, with a note."""
    if not watcher.is_alive():
        return
    survivors = watcher.wait_for_others(grace)
    if survivors:
        manifest["survivors"] = survivors
        manifest["notes"].append(
            f"processes {', '.join(map(str, survivors))} of the run were still running {grace:g} s "
            "after the command ended: what they log from now on is not in the run folder"
        )


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
    pid_rank = _pid_ranks(folder, watched, processes)
    files = _name_logs(folder, pid_rank, notes)
    manifest["files"] = files
    manifest["ranks"] = _ranks(files, processes, pid_rank, _log_versions(folder, files))
    manifest["processes"] = [
        {k: d.get(k) for k in ("pid", "ppid", "rank", "rank_from", "argv", "files")} for d in processes
    ]
    manifest["world_size"] = _world_size(manifest["ranks"], processes)
    gpus = host_gpus()
    if gpus:
        manifest["gpus"] = gpus
    if not files:
        notes.append(
            "no log file was written: did the command run a GEMM through "
            f"{', '.join(manifest['logging']['libraries'])}?"
        )
    _write_manifest(folder, manifest)
    if compress and files:
        renamed = compress_logs(folder, files, notes)
        for info in manifest["ranks"].values():
            info["files"] = [renamed.get(name, name) for name in info["files"]]
        _write_manifest(folder, manifest)
    _note_late_files(folder, manifest)
    if probe:
        manifest["probe"] = probe_folder(folder)
        if manifest["probe"].get("note"):
            notes.append(f"probe: {manifest['probe']['note']}")
        _write_manifest(folder, manifest)
    shutil.rmtree(folder / ".blaslog", ignore_errors=True)
    if on_note is not None:
        for note in notes:
            on_note(note)


def _pid_ranks(
    folder: Path, watched: dict[int, tuple[int | None, str | None]], processes: list[dict[str, Any]]
) -> dict[int, tuple[int, str]]:
    """pid -> (rank, how it was learnt) of the run's processes: from their launcher variables (the watcher), from
    what the hook wrote; for a plain `python train.py` or `./app`, the one process that wrote logs is rank 0 (-1
    stands for the shared files when no other process of the run was seen)."""
    pid_rank: dict[int, tuple[int, str]] = {}
    for pid, (rank, variable) in watched.items():
        if rank is not None:
            pid_rank[pid] = (rank, f"environment ({variable})")
    for document in processes:
        if _rank(document.get("rank")) is not None:
            pid_rank[document["pid"]] = (document["rank"], f"hook ({document.get('rank_from')})")
        elif _rank((document.get("distributed") or {}).get("rank")) is not None:
            pid_rank[document["pid"]] = (document["distributed"]["rank"], "hook (torch.distributed)")
    if pid_rank:
        return pid_rank
    writers = _writers(folder)
    pids = [w for w in writers if isinstance(w, int)]
    seen = set(watched) | {d["pid"] for d in processes} | set(pids)
    if writers and len(pids) <= 1 and ("process" not in writers or len(seen) <= 1):
        for writer in writers:
            pid_rank[writer if isinstance(writer, int) else -1] = (0, "the only process")
    return pid_rank


def _note_late_files(folder: Path, manifest: dict[str, Any]) -> None:
    """Name in the manifest (with a note) the logs written after they were listed (a process that outlived the
    command)."""
    listed = {entry["file"] for entry in manifest["files"]}
    late = sorted(p.name for p in folder.iterdir() if _LOG_NAME.match(p.name) and p.name not in listed)
    if late:
        manifest["late_files"] = late
        manifest["notes"].append(
            f"{', '.join(late)}: written after the logs were listed (a process that outlived the command); not "
            "in the manifest, so not read as part of the run"
        )
        _write_manifest(folder, manifest)


def _rank(value: Any) -> int | None:
    """A rank as every reader of a run folder takes one (an int below MAX_RANK), else None."""
    return value if type(value) is int and 0 <= value < hook.MAX_RANK else None


def _writers(folder: Path) -> list[int | str]:
    """The processes that wrote logs: pids, and `process` for the shared files of processes without a pid name."""
    found: set[int | str] = set()
    for path in folder.iterdir():
        match = _LOG_NAME.match(path.name)
        if match is not None and match["key"] in file_keys() and path.is_file() and path.stat().st_size:
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
    found = _find_logs(folder, pid_rank, notes)
    _name_by_rank(found, notes)
    _note_unranked(found, notes)
    keys = file_keys()
    out = []
    for log in sorted(found, key=lambda log: natural_key(log.name)):
        if log.name != log.path.name:
            log.path.rename(folder / log.name)
        out.append(
            {
                "file": log.name,
                "library": keys[log.key],
                "log": log.key,
                "rank": log.rank,
                "pid": log.pid,
                "rank_from": log.how,
                "bytes": log.size,
            }
        )
    return out


def _find_logs(folder: Path, pid_rank: dict[int, tuple[int, str]], notes: list[str]) -> list[_Log]:
    """The logs in the run folder with the rank of each where known (empty ones removed, with a note)."""
    keys = file_keys()
    found: list[_Log] = []
    empty = 0
    for path in sorted(folder.iterdir(), key=lambda p: natural_key(p.name)):
        match = _LOG_NAME.match(path.name)
        if match is None or match["key"] not in keys or not path.is_file():
            continue
        size = path.stat().st_size
        if size == 0:
            path.unlink()
            empty += 1
            continue
        pid = int(match["pid"]) if match["pid"] else None
        rank, how = _rank_of(match, pid, pid_rank)
        found.append(_Log(path, match["key"], rank, pid, how, bool(match["shared"]), size, path.name))
    if empty:
        notes.append(f"{empty} empty log files removed (processes that loaded a library but logged nothing)")
    return found


def _rank_of(match: re.Match[str], pid: int | None, pid_rank: dict[int, tuple[int, str]]) -> tuple[int | None, str]:
    """(rank, how it was learnt) of the log whose name `match` read: from its name, its process, or (a shared
    file) the only process."""
    if match["rank"] is not None:
        return int(match["rank"]), pid_rank[pid][1] if pid in pid_rank else "file name"
    if pid is not None and pid in pid_rank:
        return pid_rank[pid]
    if match["shared"] and -1 in pid_rank:
        return pid_rank[-1]
    return None, "unknown"


def _name_by_rank(found: list[_Log], notes: list[str]) -> None:
    """Give each rank's largest log of a library ``rank3.KEY.log``, the others ``rank3.pidN.KEY.log`` (a note
    says so)."""
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


def _note_unranked(found: list[_Log], notes: list[str]) -> None:
    """Notes on the logs whose rank was not learnt: shared files of processes the hook did not run in, and
    logs that keep their pid in the name."""
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


def _log_versions(folder: Path, files: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Library versions the logs name in their first lines (cuBLAS `(v12.9.3)`, cuBLASLt `v12.9`: each library's
    ``LogSwitch.version``), per file."""
    versions = [(s.version[0], re.compile(s.version[1])) for s in loggings() if s.version is not None]
    out: dict[str, dict[str, str]] = {}
    for entry in files:
        try:
            with open(folder / entry["file"], "rb") as handle:
                head = handle.read(1 << 16)
        except OSError:
            continue
        for name, pattern in versions:
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


__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_LIBS",
    "LIBRARIES",
    "Library",
    "Recording",
    "child_environment",
    "default_libs",
    "default_out",
    "file_keys",
    "libraries",
    "logging_environment",
    "parse_libs",
    "prepare_folder",
    "record",
    "watch",
]
