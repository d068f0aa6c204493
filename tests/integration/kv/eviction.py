"""Memory budget: filling past --memory evicts least-recently-used keys and never exceeds
the budget; CONFIG SET maxmemory to half evicts down to it (and gives the memory back)
while other clients keep working; noeviction refuses writes instead."""
import os
import threading
import time

from kvlib import Raw, Server, finish, info, ok

MiB = 1 << 20

# several I/O threads: the shrink must stay consistent with clients on other threads
with Server("--io-threads", "3", memory="64M") as srv:
    r = Raw(srv.port)
    over = []
    # 1 MiB + 100 bytes values: a whole page plus a slab slot each.
    for i in range(150):
        r.cmd("SET", f"k{i}", os.urandom(MiB + 100))
        if i % 10 == 0:
            r.cmd("GET", "k0")  # k0 stays recently used
        m = info(r)
        if int(m["used_memory"]) > int(m["maxmemory"]):
            over.append((i, m["used_memory"]))
    m = info(r)
    ok(not over, "used_memory never exceeds maxmemory while filling 2.3x past it", over)
    ok(int(m["maxmemory"]) == 64 * MiB, "maxmemory is the --memory budget", m)
    ok(r.cmd("EXISTS", "k1") == b":0\r\n", "the least recently used key was evicted")
    ok(r.cmd("EXISTS", "k149") == b":1\r\n", "the newest key is present")
    ok(r.cmd("EXISTS", "k0") == b":1\r\n", "a key read often survives eviction (LRU)")
    stats = info(r, "stats")
    ok(int(stats["evicted_keys"]) >= 80, "INFO counts evicted keys", stats)
    n = int(r.cmd("DBSIZE")[1:-2])
    # Each value takes a whole page plus a 128-byte slot; the slots share one page.
    ok(n == 63, f"exact accounting: 63 values + one page of tails fill 64 pages ({n})")

    # Shrink to half while two clients keep writing and reading.
    stop = threading.Event()
    errors = []

    def client(tag):
        c = Raw(srv.port)
        j = 0
        while not stop.is_set():
            v = os.urandom(256 * 1024 + j)
            if c.cmd("SET", f"{tag}{j % 8}", v) != b"+OK\r\n":
                errors.append("SET failed")
            got = c.cmd("GET", f"{tag}{j % 8}")
            if got != b"$%d\r\n" % len(v) + v + b"\r\n" and got != b"$-1\r\n":
                errors.append(f"GET returned wrong bytes ({len(got)})")
            j += 1
        c.close()

    ts = [threading.Thread(target=client, args=(t,)) for t in ("a", "b")]
    for t in ts:
        t.start()
    time.sleep(0.3)
    ok(r.cmd("CONFIG", "SET", "maxmemory", "32mb") == b"+OK\r\n", "CONFIG SET maxmemory 32mb")
    m = info(r)
    ok(int(m["used_memory"]) <= 32 * MiB, "memory use drops to the new budget at once", m)
    ok(int(m["region_released_bytes"]) >= 32 * MiB, "the memory above the budget is given back", m)
    time.sleep(0.5)
    m = info(r)
    ok(int(m["used_memory"]) <= 32 * MiB, "and stays within it while clients write", m)
    stop.set()
    for t in ts:
        t.join()
    ok(not errors, "clients kept working during the shrink", "\n".join(errors[:5]))
    ok(r.cmd("CONFIG", "GET", "maxmemory") == b"*2\r\n$9\r\nmaxmemory\r\n$8\r\n33554432\r\n",
       "CONFIG GET maxmemory reports the new budget")

    ok(r.cmd("CONFIG", "SET", "maxmemory", "64M") == b"+OK\r\n", "the budget can grow back")
    for i in range(60):
        r.cmd("SET", f"g{i}", os.urandom(MiB))
    m = info(r)
    ok(int(m["used_memory"]) > 40 * MiB and int(m["used_memory"]) <= 64 * MiB,
       "after growing, the whole budget is used again", m)
    reply = r.cmd("CONFIG", "SET", "maxmemory", "128M")
    ok(reply.startswith(b"-ERR CONFIG SET failed (possibly related to argument 'maxmemory')"),
       "maxmemory above the region is refused", reply)

    ok(r.cmd("CONFIG", "SET", "maxmemory-policy", "noeviction") == b"+OK\r\n", "noeviction policy")
    reply = b""
    for i in range(80):
        reply = r.cmd("SET", f"n{i}", os.urandom(MiB))
        if reply != b"+OK\r\n":
            break
    ok(reply.startswith(b"-OOM"), "with noeviction a full store refuses writes", reply)
    ok(r.cmd("CONFIG", "SET", "maxmemory-policy", "volatile-lfu").startswith(b"-ERR CONFIG SET failed"),
       "unsupported policies are refused by name")
    r.cmd("FLUSHALL")
    m = info(r)
    ok(int(m["used_memory"]) == 0 and int(m["used_memory_values"]) == 0,
       "FLUSHALL frees every page (exact accounting)", m)
    rc = srv.stop()
    ok(rc == 0, "kvstore exits 0 on SIGTERM (and clean under AddressSanitizer)", srv.output()[-3000:])
finish()
