"""Test aids that a lesson or a script may also use (nothing here runs in the chat itself)."""
