#!/usr/bin/env python3
"""A fake diagtop agent that misbehaves, for the client's bounds: binds agent.PID.sock in $DIAGTOP_AGENT_DIR (its
own pid, so that diagtop finds it held by this very process) and answers every connection as MODE says:
hang (reads the request, never answers), huge (an "ok" and then 80 MiB), noend (an "ok", lines, no "end"),
garbage (not the protocol), drip (a byte every 0.2 s), error (the agent's error line), badsite (a site line with
a malformed pc). Prints "ready" once listening, and "accepted" at each connection."""
import os, socket, sys, time

mode = sys.argv[1]
path = os.path.join(os.environ["DIAGTOP_AGENT_DIR"], "agent.%d.sock" % os.getpid())
s = socket.socket(socket.AF_UNIX)
s.bind(path)
os.chmod(path, 0o600)
s.listen(8)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    print("accepted", flush=True)
    try:
        c.settimeout(5)
        c.recv(256)
        if mode == "hang":
            time.sleep(30)
        elif mode == "huge":
            c.sendall(b"diagtop-agent 1 ok\n")
            line = b"site 1 1 1 1 " + b"7f0000001000 " * 60 + b"\n"
            for _ in range((80 << 20) // len(line)):
                c.sendall(line)
        elif mode == "noend":
            c.sendall(b"diagtop-agent 1 ok\ntime_ns 1\ninterval 524288\nsite 1 2 3 4 7f01\n")
        elif mode == "garbage":
            c.sendall(b"HTTP/1.1 200 OK\r\n\r\nhello\n")
        elif mode == "drip":
            for b in b"diagtop-agent 1 ok\ntime_ns 1\ninterval 524288\nend\n":
                c.send(bytes([b]))
                time.sleep(0.2)
        elif mode == "error":
            c.sendall(b"diagtop-agent 1 error 95 heap profiling is off\x1b[31m here\n")
        elif mode == "badsite":
            c.sendall(b"diagtop-agent 1 ok\ntime_ns 1\ninterval 524288\nsite 1 2 3 4 7fzz\nend\n")
    except OSError:
        pass
    c.close()
