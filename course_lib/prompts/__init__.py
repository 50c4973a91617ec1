"""Versioned prompts: each prompt is an immutable `PromptTemplate`, chosen from a registry by version."""
