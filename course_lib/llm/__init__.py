"""The model client: the only part of the course that talks to an LLM (real or offline)."""
