"""The write commands that drive the flow: `kbx index`, `kbx reprocess`."""
