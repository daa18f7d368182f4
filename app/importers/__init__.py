"""Importers: session files that other tools write, read into the messages the service appends.

Pure: bytes in, values out. An importer never opens a file, reads the clock or touches the database; the
caller hands it the bytes and stores what comes back. Every id comes from the source, so importing the
same bytes twice gives the same messages, and a file that has grown gives the old messages plus new ones.
What an importer cannot take as it is (a line that is not JSON, a record it does not know, a branch the
session left, a block with no ModelMessage shape) is reported, never dropped silently.
"""
