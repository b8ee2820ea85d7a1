"""The command line: parses arguments and prints; no library logic (entry point `accelsim.cli.main:main`)."""
