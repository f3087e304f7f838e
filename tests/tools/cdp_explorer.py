#!/usr/bin/env python3
"""Drives the explorer page in headless Chromium over the DevTools protocol (--remote-debugging-pipe: NUL-framed
JSON on fds 3 and 4, the standard library only): load it with an Authorization header, wait for the table, sort
by PID, filter to a target, open it, check the General tab, trigger a stack, watch the History tab's charts
grow, and keep a screenshot.
usage: cdp_explorer.py URL AUTH_HEADER_VALUE PID SCREENSHOT.png PROFILE_DIR"""
import base64, json, os, subprocess, sys, time

url, auth, pid, shot, profile = sys.argv[1:6]
r3, w3 = os.pipe()  # chromium reads commands from fd 3
r4, w4 = os.pipe()  # and writes replies to fd 4
def child():
    os.dup2(r3, 3); os.dup2(w4, 4)
proc = subprocess.Popen(["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
                         "--disable-background-networking", "--disable-component-update", "--disable-sync",
                         "--no-first-run", "--user-data-dir=" + profile, "--remote-debugging-pipe",
                         "--window-size=1400,900", "about:blank"],
                        pass_fds=(3, 4), preexec_fn=child, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.close(r3); os.close(w4)
buf, seq, session = b"", 0, None

def send(method, params=None, sid=True):
    global seq, buf
    seq += 1
    msg = {"id": seq, "method": method, "params": params or {}}
    if sid and session: msg["sessionId"] = session
    os.write(w3, json.dumps(msg).encode() + b"\0")
    deadline = time.time() + 60
    while time.time() < deadline:
        while b"\0" in buf:
            raw, buf = buf.split(b"\0", 1)
            m = json.loads(raw)
            if m.get("id") == seq:
                if "error" in m: raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
        chunk = os.read(r4, 1 << 20)
        if not chunk: raise RuntimeError("chromium went away")
        buf += chunk
    raise RuntimeError("timeout on " + method)

def js(expr):
    r = send("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
    if "exceptionDetails" in r: raise RuntimeError("js: %s" % r["exceptionDetails"])
    return r["result"].get("value")

def wait_for(expr, what, seconds=30):
    end = time.time() + seconds
    while time.time() < end:
        if js(expr): return
        time.sleep(0.2)
    raise AssertionError("timed out waiting for " + what)

ok = True
def check(what, cond):
    global ok
    print(("ok " if cond else "FAIL ") + "serve_page: " + what)
    ok = ok and bool(cond)

try:
    target = send("Target.createTarget", {"url": "about:blank"}, sid=False)["targetId"]
    session = send("Target.attachToTarget", {"targetId": target, "flatten": True}, sid=False)["sessionId"]
    send("Network.enable")
    send("Network.setExtraHTTPHeaders", {"headers": {"Authorization": auth}})
    send("Page.enable"); send("Runtime.enable")
    send("Page.navigate", {"url": url + "/"})
    wait_for("document.querySelectorAll('#proc-table tbody tr').length > 3", "the table")
    check("the page loads the process table", True)
    js("document.querySelector('th[data-key=pid]').click()")
    pids = js("[...document.querySelectorAll('#proc-table tbody tr')].map(r => +r.dataset.pid)")
    check("sorting by PID orders the rows", pids == sorted(pids) or pids == sorted(pids, reverse=True))
    js("document.querySelector('th[data-key=pid]').click()")
    pids2 = js("[...document.querySelectorAll('#proc-table tbody tr')].map(r => +r.dataset.pid)")
    check("a second click reverses it", pids2 == list(reversed(pids)) or len(pids2) != len(pids))
    js("const f = document.getElementById('filter'); f.value = '%s'; f.dispatchEvent(new Event('input'))" % pid)
    # (other command lines, this driver's among them, may hold the PID's digits too)
    wait_for("document.querySelector('#proc-table tbody tr[data-pid=\"%s\"]') && document.querySelectorAll('#proc-table tbody tr').length < %d" % (pid, len(pids)), "the filter")
    check("the filter keeps the target, and fewer rows", True)
    js("document.querySelector('#proc-table tbody tr[data-pid=\"%s\"] td').click()" % pid)
    wait_for("document.getElementById('tab-body').textContent.includes('Working directory')", "the General tab")
    check("the detail panel shows General", js("document.getElementById('detail-title').textContent").endswith("(%s)" % pid))
    js("document.querySelector('.tab[data-tab=threads]').click()")
    wait_for("document.querySelectorAll('#tab-body tbody tr').length >= 2", "the Threads tab")
    check("the Threads tab lists threads", True)
    js("document.getElementById('btn-stack').click()")
    wait_for("document.getElementById('stack-output') && document.getElementById('stack-output').textContent.includes('worker_park')", "the stack", 60)
    check("Stack shows the target's frames", True)
    check("Stack says what a parked thread waits in (pause)",
          js("document.getElementById('stack-output').textContent.includes('waiting in pause()')"))
    js("document.querySelector('.tab[data-tab=history]').click()")
    wait_for("document.querySelector('#tab-body .chart polyline') && document.getElementById('tab-body').textContent.includes('CPU %: last')", "the History tab")
    check("the History tab draws CPU% and resident memory as SVG lines",
          js("[...document.querySelectorAll('#tab-body .chart-head')].map(h => h.dataset.field).slice(0, 2).join()") == "cpu_percent,res_bytes")
    first = js("+document.querySelector('#tab-body p').textContent.split(' ')[0]")
    wait_for("+document.querySelector('#tab-body p').textContent.split(' ')[0] > %d" % first, "more samples", 20)
    check("the History tab redraws with the live table, with more samples", True)
    check("the rates read by the history request are charted",
          js("!!document.querySelector('#tab-body .chart-head[data-field=wait_percent]') && !document.querySelector('#tab-body .chart-head[data-field=wait_percent]').textContent.includes('not read')"))
    png = base64.b64decode(send("Page.captureScreenshot", {"format": "png"})["data"])
    open(shot, "wb").write(png)
    check("a screenshot was kept (%s, %d bytes)" % (shot, len(png)), png[:8] == b"\x89PNG\r\n\x1a\n")
except Exception as e:
    check("the page works: %s" % e, False)
finally:
    try: send("Browser.close", sid=False)
    except Exception: pass
    try: proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill(); proc.wait()
sys.exit(0 if ok else 1)
