"""Coding tools the model can call, and the executor that runs them safely.

`ToolExecutor` is the entry point: it offers `specs()` to the model and turns each
`ToolUseBlock` into a `ToolResultBlock`, guarded by the safety policy and the approval mode,
with checkpoints for `/undo`.
"""

from tools.base import ErrorCategory, Tool, ToolContext, ToolError, ToolKind, ToolOutput
from tools.builtin import builtin_tools
from tools.events import (
    CheckpointRecorded,
    CommandChangedFiles,
    RolledBack,
    ToolFailed,
    ToolRefused,
    ToolRepeatedCall,
    ToolRepeatedFailure,
    ToolRetried,
    ToolStarted,
    ToolTimedOut,
    UndoApplied,
)
from tools.executor import ToolExecutor
from tools.guard.policy import PolicyDecision, check_command
from tools.hooks import (
    ApprovalMode,
    ApprovalRequest,
    Approver,
    BeforeToolHook,
    Permit,
    Refusal,
    SafetyPolicy,
    ToolInvocation,
    needs_approval,
)
from tools.settings import ToolSettings
from tools.undo.checkpoint_files import prune_checkpoints
from tools.undo.checkpoints import Checkpoint, undo_preview
from tools.undo.report import KeptChange, RestoreFailure, UndoPreview, UndoReport
from tools.workspace import PathOutsideWorkspace, file_in_workspace, resolve_in_workspace

__all__ = [
    "ApprovalMode",
    "ApprovalRequest",
    "Approver",
    "BeforeToolHook",
    "Checkpoint",
    "CheckpointRecorded",
    "CommandChangedFiles",
    "ErrorCategory",
    "KeptChange",
    "PathOutsideWorkspace",
    "Permit",
    "PolicyDecision",
    "Refusal",
    "RestoreFailure",
    "RolledBack",
    "SafetyPolicy",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolExecutor",
    "ToolFailed",
    "ToolInvocation",
    "ToolKind",
    "ToolOutput",
    "ToolRefused",
    "ToolRepeatedCall",
    "ToolRepeatedFailure",
    "ToolRetried",
    "ToolSettings",
    "ToolStarted",
    "ToolTimedOut",
    "UndoApplied",
    "UndoPreview",
    "UndoReport",
    "builtin_tools",
    "check_command",
    "file_in_workspace",
    "needs_approval",
    "prune_checkpoints",
    "resolve_in_workspace",
    "undo_preview",
]
