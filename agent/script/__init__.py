"""Faces for scripts: ``--output-format stream-json`` and the run report behind every result.

`RunReport` listens to the engine's stream (it is a `agent.engine.face.Face`) and sums up a
run — turns, retries, fallbacks, changed files, refused calls — for the final ``result``;
`StreamJsonFace` writes the stream as JSON lines in Claude Code's shapes, with the recovery
events no other agent reports.
"""

from agent.script.report import RunReport, result_subtype
from agent.script.stream_json import StreamJsonFace

__all__ = ["RunReport", "StreamJsonFace", "result_subtype"]
