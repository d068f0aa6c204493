"""Store 1 GiB of random values (16 MiB each) in a running kvstore over RESP, read them
back, compare bit for bit, and print the rates. Used by kvstore/gpu-check.sh with the
cuda backend (KV_BACKEND=cuda:0); any backend works."""
import hashlib
import os
import sys
import time

from kvlib import Raw, Server, finish, info, ok

MiB = 1 << 20
total = int(os.environ.get("KV_BYTES", str(1024 * MiB)))
size = 16 * MiB
n = total // size

with Server(memory=os.environ.get("KV_MEMORY", "2G")) as srv:
    r = Raw(srv.port, timeout=120)
    server = info(r, "server")
    print(f"# backend {server.get('backend')}: {server.get('backend_detail')}", flush=True)
    block = os.urandom(size)
    digests = []
    t0 = time.time()
    for i in range(n):
        v = i.to_bytes(8, "little") + block[8:]  # every value differs
        digests.append(hashlib.sha256(v).digest())
        if r.cmd("SET", f"chunk{i}", v) != b"+OK\r\n":
            ok(False, f"SET chunk{i}")
            finish()
    t_set = time.time() - t0
    good = True
    t0 = time.time()
    for i in range(n):
        reply = r.cmd("GET", f"chunk{i}")
        hdr = b"$%d\r\n" % size
        if not reply.startswith(hdr) or hashlib.sha256(reply[len(hdr):-2]).digest() != digests[i]:
            good = False
            print(f"# chunk{i} differs", flush=True)
            break
    t_get = time.time() - t0
    gib = n * size / (1 << 30)
    ok(good, f"{gib:.2f} GiB in {n} values of 16 MiB stored over RESP and read back bit-exact")
    print(f"# over RESP (loopback, one client): SET {n * size / t_set / 1e9:.2f} GB/s, "
          f"GET {n * size / t_get / 1e9:.2f} GB/s", flush=True)
    m = info(r)
    ok(int(m["used_memory"]) >= n * size and int(m["used_memory"]) <= int(m["maxmemory"]),
       "the values are accounted in the region", m)
finish()
