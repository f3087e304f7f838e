#!/usr/bin/env python3
"""A Python program for the TUI tests: an interpreter whose comm is "python3" and whose script names it (leak.py).
Keeps a little memory, prints "ready", then sleeps until SIGTERM."""
import signal
import sys
import time

kept = [bytearray(4096) for _ in range(64)]
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
print("ready", flush=True)
while True:
    time.sleep(3600)
