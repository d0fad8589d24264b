"""Entry points the agent runs inside a task's working directory."""
