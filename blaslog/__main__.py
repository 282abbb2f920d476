"""`python -m blaslog`."""

from blaslog.cli import console

console()
