"""Load test (``make load``): not collected by ``make test`` (no test files)."""
