"""`python -m blaslog`."""

from blaslog.cli import main

main()
