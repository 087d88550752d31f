"""``python -m agent``: the same as the ``agent`` command."""

from agent.cli import main

main()
