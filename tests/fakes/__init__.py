"""Shared test doubles that are not models: a virtual clock, fake LLM and MCP servers, terminals.

The fake models (`ScriptedProvider`, `FunctionProvider`) ship in the package, in
`providers.testing`, so benchmarks and users can drive the agent with them too.
"""
