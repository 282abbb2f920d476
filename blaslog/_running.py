"""Running the command `blaslog record` records: its own process group (the terminal's foreground group when
blaslog had it), signals passed on to that group, and a watcher of the run's processes in /proc."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from blaslog._hook import sitecustomize as hook


class Watcher(threading.Thread):
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


class Signals:
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


def foreground_tty() -> int | None:
    """The terminal on stdin when blaslog runs in its foreground (so the command can be handed it), else None."""
    try:
        fd = sys.stdin.fileno()
        if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp():
            return fd
    except (AttributeError, OSError, ValueError):
        pass
    return None


def hand_terminal(fd: int, group: int) -> None:
    """Make `group` the terminal's foreground group (SIGTTOU ignored meanwhile, as shells do)."""
    previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        os.tcsetpgrp(fd, group)
    except OSError:
        pass
    finally:
        signal.signal(signal.SIGTTOU, previous)


def start(command: Sequence[str], env: dict[str, str], tty: int | None) -> subprocess.Popen[bytes]:
    """Start `command` in a process group of its own (the terminal's foreground group when blaslog had it)."""

    def in_child() -> None:
        os.setpgid(0, 0)
        if tty is not None:
            hand_terminal(tty, os.getpgrp())

    # preexec_fn: the only way to hand the terminal to the new group before the command runs (no threads yet)
    return subprocess.Popen(list(command), env=env, preexec_fn=in_child)


def exit_status(returncode: int) -> int:
    """A shell's exit status for a process's return code (128 + N for signal N)."""
    return 128 - returncode if returncode < 0 else returncode


__all__ = ["Signals", "Watcher", "exit_status", "foreground_tty", "hand_terminal", "start"]
