"""Memory the model manages through tool calls (notebook 09): turns that hold tool exchanges,
core memory blocks the model edits, and the registry that runs the model's calls."""
