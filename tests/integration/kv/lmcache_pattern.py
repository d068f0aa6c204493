"""redis-py (from PyPI) drives kvstore the way LMCache's redis:// remote backend does:
keys model@1@0@<hash>@bfloat16 with a `kv_bytes` payload and a `metadata` value, the
payload SET before the metadata SET, EXISTS before GET, 1-32 MiB chunks."""
import hashlib
import os
import random
import struct
import sys

from kvlib import Raw, Server, finish, ok, skip

try:
    import redis
except ImportError:
    skip("redis-py LMCache pattern", "redis-py missing (run make deps)")
    finish()

MiB = 1 << 20
rng = random.Random(7)
sizes = [1 * MiB, 32 * MiB, 4 * MiB, 3 * MiB + 12345, 16 * MiB, 2 * MiB + 1, 8 * MiB, 5 * MiB]

with Server("--io-threads", "2", memory="512M") as srv:
    r = redis.Redis(host="127.0.0.1", port=srv.port)
    ok(r.ping() is True, f"redis-py {redis.__version__} connects and PINGs")

    chunks = {}
    for i, size in enumerate(sizes):
        h = hashlib.sha256(str(i).encode()).hexdigest()[:16]
        key = f"meta-llama/Llama-3.1-8B@1@0@{h}@bfloat16"
        payload = rng.randbytes(size)
        # LMCache RedisConnector.put: payload first, then the metadata that marks it present.
        meta = struct.pack("<4iQ", 256, 32, 8, 128, size)
        r.set(key + "kv_bytes", payload)
        r.set(key + "metadata", meta)
        chunks[key] = (payload, meta)
    ok(r.dbsize() == 2 * len(sizes), "every chunk stored as two keys")

    good = True
    for key, (payload, meta) in chunks.items():
        # LMCache RedisConnector.exists / get: metadata first, then the payload.
        if not r.exists(key + "metadata"):
            good = False
            break
        m = r.get(key + "metadata")
        p = r.get(key + "kv_bytes")
        good &= m == meta and p == payload
    ok(good, "EXISTS then GET returns every chunk bit-exact (1-32 MiB)")

    missing = "meta-llama/Llama-3.1-8B@1@0@ffffffffffffffff@bfloat16"
    ok(r.exists(missing + "metadata") == 0 and r.get(missing + "kv_bytes") is None,
       "a chunk never stored is reported missing")

    pipe = r.pipeline(transaction=False)
    keys = list(chunks)
    for k in keys:
        pipe.exists(k + "metadata")
        pipe.get(k + "kv_bytes")
    res = pipe.execute()
    ok(all(res[2 * i] == 1 and res[2 * i + 1] == chunks[k][0] for i, k in enumerate(keys)),
       "a pipelined batch of EXISTS/GET returns every chunk")

    # Two clients at once, each writing and reading its own chunks.
    import threading
    errors = []

    def worker(n):
        try:
            c = redis.Redis(host="127.0.0.1", port=srv.port)
            for j in range(6):
                v = os.urandom(MiB * (1 + j % 3) + n)
                c.set(f"w{n}-{j}kv_bytes", v)
                if c.get(f"w{n}-{j}kv_bytes") != v:
                    errors.append(f"worker {n} chunk {j} differs")
        except Exception as e:  # noqa: BLE001 - reported as a failure below
            errors.append(repr(e))

    ts = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    ok(not errors, "four clients write and read chunks concurrently", "\n".join(errors))

    r2 = redis.Redis(host="127.0.0.1", port=srv.port, protocol=2)
    k0 = keys[0]
    ok(r2.exists(k0 + "metadata") == 1 and r2.get(k0 + "kv_bytes") == chunks[k0][0]
       and r2.get("absent") is None, "redis-py with protocol=2 (RESP2) reads the same chunks")
    r2.close()

    ok(r.delete(*[k + "kv_bytes" for k in keys]) == len(keys), "DEL removes the payloads")
    info = r.info("memory")
    ok(info["used_memory"] <= info["maxmemory"], "used_memory stays within maxmemory",
       str(info))
    r.close()

# LMCache's RedisConnector: redis.asyncio, a pool from a redis:// URL (with the password
# in it), many chunks in flight at once through asyncio.gather.
import asyncio
import tempfile

with tempfile.NamedTemporaryFile("w", suffix=".pass") as pw:
    pw.write("pool-secret\n")
    pw.flush()
    os.chmod(pw.name, 0o600)
    with Server("--requirepass-file", pw.name, memory="256M") as srv:
        async def lmcache_like():
            pool = redis.asyncio.ConnectionPool.from_url(
                f"redis://default:pool-secret@127.0.0.1:{srv.port}", max_connections=16)
            conn = redis.asyncio.Redis.from_pool(pool)
            vals = {f"m@1@0@{i:016x}@bfloat16": os.urandom(MiB * (1 + i % 4)) for i in range(12)}

            async def put(k, v):
                await conn.set(k + "kv_bytes", v)
                await conn.set(k + "metadata", struct.pack("<Q", len(v)))

            async def get(k):
                if not await conn.exists(k + "metadata"):
                    return None
                await conn.get(k + "metadata")
                return await conn.get(k + "kv_bytes")

            await asyncio.gather(*(put(k, v) for k, v in vals.items()))
            got = await asyncio.gather(*(get(k) for k in vals))
            await conn.aclose()
            return got == list(vals.values())

        ok(asyncio.run(lmcache_like()),
           "redis.asyncio pool from a redis://default:PASSWORD@ URL: 12 chunks put and got "
           "concurrently (LMCache's RedisConnector shape)")
        unauth = redis.Redis(host="127.0.0.1", port=srv.port)
        try:
            unauth.get("x")
            ok(False, "a client without the password is refused")
        except redis.exceptions.AuthenticationError:
            ok(True, "a client without the password is refused")
        except redis.exceptions.ResponseError as e:
            ok("NOAUTH" in str(e), "a client without the password is refused", str(e))
        # Before AUTH, requests are held to Redis's small limits: a big SET from a client
        # without the password must not take (and evict for) memory.
        authed = redis.Redis(host="127.0.0.1", port=srv.port, password="pool-secret")
        before = authed.dbsize()
        def first_line(raw):
            try:
                return raw.read_line()
            except OSError as e:  # timed out: the server waits for the body
                return repr(e).encode()
        raw = Raw(srv.port, timeout=3)
        raw.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % (248 * MiB) + b"x" * 1024)
        reply = first_line(raw)
        ok(reply == b"-ERR Protocol error: unauthenticated bulk length\r\n" and raw.closed(),
           "an unauthenticated 248 MiB bulk is a protocol error, as in Redis", reply)
        raw = Raw(srv.port, timeout=3)
        raw.send(b"*11\r\n")
        reply = first_line(raw)
        ok(reply == b"-ERR Protocol error: unauthenticated multibulk length\r\n",
           "an unauthenticated request of 11 arguments too", reply)
        ok(authed.dbsize() == before > 0, "and no key was evicted for it", authed.dbsize())
finish()
