"""One reading of a shell command, shared by every decision about it.

`analyse` parses the command with tree-sitter's bash grammar into the simple commands it runs
(wrappers, nested shells, substitutions, ``xargs`` and ``find -exec`` unwrapped), the files it
writes and reads, and the parts that cannot be known before it runs. The permission rules, the
guard's policy, plan mode and the approval question all read that one result.
"""

from tools.shell_reading.commands import MAX_DEPTH
from tools.shell_reading.model import CommandAnalysis, SimpleCommand
from tools.shell_reading.reading import analyse

__all__ = ["MAX_DEPTH", "CommandAnalysis", "SimpleCommand", "analyse"]
