"""`python -m memory.cli`: the same as the `datalog-memory` command."""

from .main import main

main()
