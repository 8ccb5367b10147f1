"""The `coqa` command line: a thin layer over the library (parse, call, print)."""
