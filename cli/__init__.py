"""The kbx command line."""
