"""The default experiment (`accelsim run` with no argument) and its model, installed as package data."""
