"""MCP servers' tools, supervised: configuration, the SDK boundary, restarts, the tools.

Importing this package imports neither the MCP SDK nor anyio, so the configuration can use
it: `runtime.McpServers` (which runs the servers) and `tool.McpToolList` are imported from
their modules, only when a server is configured; `connection` imports the SDK inside its
functions, when the first server starts.
"""

from tools.mcp.project import ProjectApprovals, ProjectServers, read_project_servers
from tools.mcp.settings import McpServerSettings, check_server_names

__all__ = [
    "McpServerSettings",
    "ProjectApprovals",
    "ProjectServers",
    "check_server_names",
    "read_project_servers",
]
