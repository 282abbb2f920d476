"""A fake distributed launcher for tests of `blaslog record`: `launcher.py --nproc N CMD...` starts N copies of
CMD with RANK, LOCAL_RANK, WORLD_SIZE and LOCAL_WORLD_SIZE set, as torchrun does, waits for them and exits with
the first non-zero status among them (128 + N for a worker ended by signal N). The workers share its process
group, so a signal to the group reaches them all; a SIGINT or SIGTERM to the launcher itself is passed on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys


def main() -> int:
    args = sys.argv[1:]
    nproc = 1
    if args[:1] == ["--nproc"]:
        nproc, args = int(args[1]), args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    workers = []
    for rank in range(nproc):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(nproc), LOCAL_WORLD_SIZE=str(nproc))
        workers.append(subprocess.Popen(args, env=env))

    def forward(number: int, frame: object) -> None:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(number)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    statuses = [worker.wait() for worker in workers]
    failed = [s for s in statuses if s != 0]
    if not failed:
        return 0
    return 128 - failed[0] if failed[0] < 0 else failed[0]


if __name__ == "__main__":
    sys.exit(main())
