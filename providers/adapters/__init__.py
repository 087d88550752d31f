"""Vendor adapters: the only modules that import a vendor SDK (or llama.cpp).

Each one turns a `ChatRequest` into its vendor's wire format and every vendor failure into an
`LlmError`. They are imported lazily, on the first request, so start-up never pays for an SDK.
"""
