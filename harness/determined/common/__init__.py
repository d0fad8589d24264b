"""Pieces shared by the harness, the core API and tools: HTTP session and storage."""
