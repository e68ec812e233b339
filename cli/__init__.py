"""The datalog-memory command line."""
