#!/usr/bin/env python3
"""A fake JVM for the HotSpot attach tests: what diagtop can see of a JVM, and a misbehaving attach listener.

It maps a file named libjvm.so and catches SIGQUIT (so diagtop's safety checks pass), and on SIGQUIT starts a
listener on /tmp/.java_pid<pid> only when a trigger .attach_pid<pid> is in its working directory or /tmp, as
HotSpot does; it logs what it sees (the trigger's owner, each request's bytes in hex) on stdout. Then it answers
each request (after logging the peer's pid, uid and gid) according to MODE:

  ok        "0\\n" and a small thread dump (threaddump) or nothing (anything else)
  hang      reads the request, never answers (the peer that stalls)
  drip      "0\\n" and then one byte every 0.3 s, forever
  garbage   a reply without a status line
  huge      "0\\n" and 80 MiB
  close     closes the connection without reading or answering (what HotSpot does to a peer it refuses)
  exists    "0\\n" and HotSpot's words for a heap dump that cannot be written
  never     ignores SIGQUIT: the socket never appears

Prints "ready" when it catches SIGQUIT. Stops on SIGTERM and removes its socket.
"""
import os
import signal
import socket
import struct
import sys
import tempfile
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
PID = os.getpid()
SOCK = "/tmp/.java_pid%d" % PID
state = {"listener": None, "quit": 0, "conns": []}

# Something named libjvm.so in /proc/self/maps.
lib_dir = tempfile.mkdtemp(prefix="fake-hotspot.")
lib = os.path.join(lib_dir, "libjvm.so")
with open(lib, "wb") as f:
    f.write(b"\0" * 4096)
import mmap  # noqa: E402

lib_file = open(lib, "rb")
lib_map = mmap.mmap(lib_file.fileno(), 4096, prot=mmap.PROT_READ)


def log(*a):
    print(*a, flush=True)


def trigger_owner():
    for d in (os.getcwd(), "/tmp"):
        p = os.path.join(d, ".attach_pid%d" % PID)
        try:
            return d, os.stat(p).st_uid
        except OSError:
            pass
    return None, None


def on_quit(sig, frame):
    state["quit"] += 1
    where, uid = trigger_owner()
    log("sigquit trigger=%s uid=%s" % (where, uid))
    if MODE == "never" or where is None or state["listener"]:
        return
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = SOCK + ".tmp"
    try:
        os.unlink(tmp)
    except OSError:
        pass
    s.bind(tmp)
    os.chmod(tmp, 0o600)
    s.listen(5)
    os.rename(tmp, SOCK)
    state["listener"] = s
    log("listening")


def on_term(sig, frame):
    try:
        os.unlink(SOCK)
    except OSError:
        pass
    lib_map.close()
    lib_file.close()
    os.unlink(lib)
    os.rmdir(lib_dir)
    sys.exit(0)


def read_request(c):
    """The five NUL-terminated strings of protocol 1 (or what came before the peer stopped)."""
    data = b""
    c.settimeout(5)
    try:
        while data.count(b"\0") < 5:
            chunk = c.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    log("request " + data.hex())
    return data


DUMP = (b"2026-12-03 08:00:49\nFull thread dump Fake VM:\n\n"
        b"\"main\" #1 prio=5 os_prio=0 tid=0x1 nid=0x%x waiting on condition  [0x0]\n"
        b"   java.lang.Thread.State: TIMED_WAITING (sleeping)\n"
        b"\tat java.lang.Thread.sleep(java.base@17/Native Method)\n"
        b"\tat Fake.main(Fake.java:7)\n\nJNI global refs: 1, weak refs: 0\n") % PID


def serve(c):
    pid, uid, gid = struct.unpack("3i", c.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    log("peer pid=%d uid=%d gid=%d" % (pid, uid, gid))
    if MODE == "close":
        c.close()
        return
    req = read_request(c)
    cmd = req.split(b"\0")[1] if req.count(b"\0") >= 2 else b""
    try:
        if MODE == "hang":
            state["conns"].append(c)  # kept open, never answered
            return
        if MODE == "garbage":
            c.sendall(b"HTTP/1.0 200 OK\r\n\r\nhello")
        elif MODE == "huge":
            c.sendall(b"0\n")
            block = b"x" * (1 << 20)
            for _ in range(80):
                c.sendall(block)
        elif MODE == "drip":
            c.sendall(b"0\n")
            while True:
                c.sendall(b".")
                time.sleep(0.3)
        elif MODE == "exists":
            c.sendall(b"0\nDumping heap to /tmp/x ...\nUnable to create /tmp/x: File exists\n")
        else:
            c.sendall(b"0\n" + (DUMP if cmd == b"threaddump" else b""))
    except OSError as e:
        log("send failed: %s" % e)
    c.close()


signal.signal(signal.SIGQUIT, on_quit)
signal.signal(signal.SIGTERM, on_term)
log("ready")
while True:
    ls = state["listener"]
    if ls is None:
        time.sleep(0.05)
        continue
    ls.settimeout(0.1)
    try:
        c, _ = ls.accept()
    except socket.timeout:
        continue
    c.settimeout(None)
    serve(c)
