"""The compact chat template that gives the bundled tiny model its tools.

SmolLM2's own template ignores tools. This one is ChatML (the model's format) with the tools
listed one line each, ``name(arguments): description``, and calls written as
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` — the Hermes format, which
llama.cpp recognises from the template and parses while streaming. The agent's six tools take
about 390 tokens here, against about 1,200 as full JSON schemas. Without a grammar forcing
the choice, the 135M model seldom calls a tool unprompted; larger models do. Tool results go
back as user turns in ``<tool_response>``.
"""

from __future__ import annotations

__all__ = ["COMPACT_TOOL_TEMPLATE"]

COMPACT_TOOL_TEMPLATE = """\
{%- if messages[0]['role'] == 'system' or tools -%}
<|im_start|>system
{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'] }}
{% endif %}
{%- if tools %}
Functions you can call:
{% for tool in tools %}{% set f = tool['function'] %}- {{ f['name'] }}(
{%- for name in (f.get('parameters') or {}).get('properties', {}) %}{{ name }}
{%- if not loop.last %}, {% endif %}{% endfor %}): {{ f.get('description', '') }}
{% endfor -%}
{% set first = tools[0]['function'] %}To call a function, answer with only a tool call, for example:
<tool_call>{"name": "{{ first['name'] }}", "arguments": {
{%- for name in (first.get('parameters') or {}).get('properties', {}) %}"{{ name }}": "..."
{%- if not loop.last %}, {% endif %}{% endfor %}}}</tool_call>
{%- endif %}<|im_end|>
{% endif -%}
{%- for message in messages -%}
{%- if message['role'] == 'system' -%}
{%- elif message['role'] == 'tool' -%}
<|im_start|>user
<tool_response>
{{ message['content'] }}
</tool_response><|im_end|>
{% elif message['role'] == 'assistant' and message.get('tool_calls') -%}
<|im_start|>assistant
{% if message['content'] %}{{ message['content'] }}
{% endif %}{% for call in message['tool_calls'] %}{% set f = call['function'] -%}
<tool_call>{"name": "{{ f['name'] }}", "arguments": {{ f['arguments'] if f['arguments'] is string
  else f['arguments'] | tojson }}}</tool_call>
{% endfor %}<|im_end|>
{% else -%}
<|im_start|>{{ message['role'] }}
{{ message['content'] }}<|im_end|>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif -%}
"""
