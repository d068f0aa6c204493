"""Issue #17 item 8: a client that announces a huge value and stalls must not wipe the
cache. Two raw sockets each announce a 512 MiB SET and send a few MiB; real clients
(redis-cli, and redis-py when .venv has it) check that no key was evicted, that SETs
still work, that lowering maxmemory frees what the stalled requests hold at once, and
that --request-timeout closes them. Runs on the host backend (bytes read straight into
the region) and host-staged (the device backends' path)."""
import os
import subprocess
import time

from kvlib import Raw, Server, finish, info, ok

MiB = 1 << 20
try:
    import redis  # redis-py, from .venv
except ImportError:
    redis = None


def cli(port, *args, stdin=None):
    r = subprocess.run(["redis-cli", "-p", str(port), *args], input=stdin, capture_output=True,
                       timeout=30)
    return r.stdout.decode(errors="replace").strip()


def announce(port, key, size, send):
    a = Raw(port)
    a.send(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n" % (len(key), key, size))
    a.send(os.urandom(send))
    return a


for backend in ("host", "host-staged"):
    os.environ["KV_BACKEND"] = backend
    with Server("--request-timeout", "2s", memory="1G") as srv:
        r = Raw(srv.port)
        for i in range(100):
            r.cmd("SET", f"k{i}", os.urandom(MiB))
        ok(cli(srv.port, "DBSIZE") == "100", f"[{backend}] 100 keys of 1 MiB stored")
        # Two tiny requests: 512 MiB announced each, 3 MiB sent, then silence.
        a1 = announce(srv.port, b"big1", 512 * MiB, 3 * MiB)
        a2 = announce(srv.port, b"big2", 512 * MiB, 3 * MiB)
        time.sleep(0.5)
        m = info(r)
        used = int(m["used_memory"])
        ok(used <= 110 * MiB,
           f"[{backend}] two stalled 512 MiB SETs hold only what they sent ({used >> 20} MiB used)",
           m)
        ok(cli(srv.port, "DBSIZE") == "100", f"[{backend}] no key was evicted (redis-cli DBSIZE)")
        ok(info(r, "stats")["evicted_keys"] == "0", f"[{backend}] evicted_keys stays 0")
        ok(cli(srv.port, "SET", "after", "x" * 100) == "OK",
           f"[{backend}] redis-cli SET still answers OK, not OOM")
        value = os.urandom(8 * MiB + 12345)
        ok(cli(srv.port, "-x", "SET", "big-legit", stdin=value) == "OK",
           f"[{backend}] an 8 MiB SET from redis-cli -x is stored")
        got = subprocess.run(["redis-cli", "-p", str(srv.port), "--no-raw", "STRLEN", "big-legit"],
                             capture_output=True).stdout.decode().strip()
        ok(got == "(integer) %d" % len(value), f"[{backend}] and has its full length", got)
        raw_get = r.cmd("GET", "big-legit")
        ok(raw_get == b"$%d\r\n" % len(value) + value + b"\r\n",
           f"[{backend}] its bytes come back exactly (received page by page)")
        if redis is not None:
            rp = redis.Redis(port=srv.port)
            rp.set("py", b"v" * 70000)
            ok(rp.get("py") == b"v" * 70000 and rp.dbsize() == 103,
               f"[{backend}] redis-py SET/GET work beside the stalled clients")
        # A lowered budget frees what the stalled requests hold above it, at once.
        ok(cli(srv.port, "CONFIG", "SET", "maxmemory", "64mb") == "OK",
           f"[{backend}] CONFIG SET maxmemory 64mb")
        m = info(r)
        ok(int(m["used_memory"]) <= 64 * MiB,
           f"[{backend}] used_memory is within the lowered budget at once "
           f"({int(m['used_memory']) >> 20} MiB)", m)
        # The stalled clients are closed after --request-timeout (2 s) of silence.
        ok(a1.closed(wait=6) and a2.closed(wait=2),
           f"[{backend}] --request-timeout closes clients stalled mid-value")
        ok(cli(srv.port, "PING") == "PONG", f"[{backend}] other clients are unaffected")
        # A client dropped mid-value by the shrink gets -OOM once its value is in.
        ok(cli(srv.port, "CONFIG", "SET", "maxmemory", "0") == "OK",
           f"[{backend}] the budget grows back")
        a3 = announce(srv.port, b"big3", 40 * MiB, 20 * MiB)
        time.sleep(0.3)
        cli(srv.port, "CONFIG", "SET", "maxmemory", "8mb")
        m = info(r)
        ok(int(m["used_memory"]) <= 8 * MiB,
           f"[{backend}] a shrink below a half-received value frees it", m)
        a3.send(os.urandom(20 * MiB) + b"\r\n")
        reply = a3.read_reply()
        ok(reply.startswith(b"-OOM"), f"[{backend}] and its SET answers -OOM", reply[:200])
        ok(a3.cmd("EXISTS", "big3") == b":0\r\n", f"[{backend}] nothing was stored under it")
finish()
