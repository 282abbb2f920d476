"""--emulate without its extra: exit 2 with one line naming the install command, before any input is read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "fixtures" / "seed"

# a Python in which neither torch nor mmasim can be imported (as where the extra is not installed)
_WITHOUT_EXTRA = (
    "import sys; sys.modules['torch'] = None; sys.modules['mmasim'] = None; "
    "from blaslog.cli import main; sys.argv = ['blaslog', *sys.argv[1:]]; main()"
)


def blaslog_without_extra(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _WITHOUT_EXTRA, *args], capture_output=True, text=True, cwd=ROOT)


def test_diff_emulate_names_the_install_command_before_reading() -> None:
    result = blaslog_without_extra("diff", "no-such-sharded.log", "no-such-unsharded.log", "--emulate", "--gpu", "A100")
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "pip install 'blaslog[emulate]'" in lines[0]
    assert "no-such" not in result.stderr  # nothing was read: the missing extra is said first
    assert "Traceback" not in result.stderr


def test_check_and_emulate_commands_say_the_same() -> None:
    for args in (
        ("check", str(SEED / "sharded.log"), "--emulate"),
        ("emulate", "--gpu", "A100", "--shape", "8x8x8", "--numerics", "tf32", "--against", "fma-fp32"),
    ):
        result = blaslog_without_extra(*args)
        assert result.returncode == 2, result.stderr
        assert "blaslog[emulate]" in result.stderr and "Traceback" not in result.stderr


def test_without_emulate_nothing_of_the_extra_is_imported() -> None:
    result = subprocess.run(
        [sys.executable, "-c", "import sys, blaslog.api, blaslog.cli; print('numpy' in sys.modules, 'torch' in sys.modules)"],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert result.stdout.split() == ["False", "False"], result.stdout + result.stderr
