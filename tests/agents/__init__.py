"""In-process A2A agents for tests: the demo agent configured per failure mode."""
