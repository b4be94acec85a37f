"""The hostile-input battery: one module per defence (SECURITY.md names each)."""
