"""One live process over a warm index: MCP tools (mcp.py) and the HTTP JSON API (http.py),
sharing commands.py, guarded by security.py."""
