"""``agent acp``: the Agent Client Protocol server editors (Zed, JetBrains, Neovim) start.

Public surface: `serve`, which runs it on stdin/stdout. Only this package imports the
``acp`` SDK, and only the ``acp`` command imports this package.
"""

from agent.acp.server import serve

__all__ = ["serve"]
