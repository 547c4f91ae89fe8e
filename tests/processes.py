"""Processes seen through /proc (Linux): the tests that kill a parent check its workers end with it."""
import os
import signal
import time


def live_children(pid):
    """Pids of the processes whose parent is ``pid`` (from /proc; zombies do not count)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(d))
    return out


def alive(pid):
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_and_check_workers(proc, ready, what="the run"):
    """SIGKILL ``proc`` once ``ready()`` holds and it has two live children; assert they end within 10 s."""
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if ready() and len(live_children(proc.pid)) >= 2:
                break
            time.sleep(0.05)
        assert proc.poll() is None, f"{what} ended before it could be killed"
        children = live_children(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(c) for c in children):
            time.sleep(0.1)
        left = [c for c in children if alive(c)]
        assert not left, f"worker processes {left} outlived their killed parent"
    finally:
        if proc.poll() is None:
            proc.kill()
