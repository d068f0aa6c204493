"""Helpers for the kvstore integration tests: start a real `specgen kvstore` on a port
picked here, TAP output, a minimal raw RESP client (stdlib only)."""
import os
import signal
import socket
import subprocess
import sys
import time

SPECGEN = os.environ["SPECGEN"]
_n = 0
_failed = 0


def ok(cond, desc, detail=""):
    global _n, _failed
    _n += 1
    if cond:
        print(f"ok {_n} - {desc}", flush=True)
    else:
        _failed += 1
        print(f"not ok {_n} - {desc}", flush=True)
        for line in str(detail).splitlines()[:20]:
            print(f"#   {line}", flush=True)
    return cond


def skip(desc, reason):
    global _n
    _n += 1
    print(f"ok {_n} - {desc} # SKIP {reason}", flush=True)


def finish():
    sys.exit(1 if _failed else 0)


def pick_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Server:
    """A kvstore process; stopped (SIGTERM, then SIGKILL) by stop() or at exit."""

    def __init__(self, *args, memory="256M"):
        self.port = pick_port()
        self.log = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"kv-{self.port}.log"), "w+")
        backend = os.environ.get("KV_BACKEND", "host")
        cmd = [SPECGEN, "kvstore", "--listen", f"127.0.0.1:{self.port}", "--memory", memory,
               "--backend", backend, *args]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"kvstore did not start: {self.output()}")

    def output(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Raw:
    """A raw socket: send bytes, read exact byte counts or whole RESP replies."""

    def __init__(self, port, timeout=10):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def send(self, data):
        self.s.sendall(data)

    def _fill(self):
        chunk = self.s.recv(1 << 20)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk

    def read_exact(self, n):
        if len(self.buf) >= n:
            out, self.buf = self.buf[:n], self.buf[n:]
            return out
        out = bytearray(n)  # big replies: receive in place, no quadratic concatenation
        have = len(self.buf)
        out[:have] = self.buf
        self.buf = b""
        view = memoryview(out)
        while have < n:
            k = self.s.recv_into(view[have:], n - have)
            if k == 0:
                raise ConnectionError("server closed the connection")
            have += k
        return bytes(out)

    def read_line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        i = self.buf.index(b"\r\n") + 2
        out, self.buf = self.buf[:i], self.buf[i:]
        return out

    def read_reply(self):
        """One whole reply, as the exact bytes received."""
        line = self.read_line()
        t = line[:1]
        if t in (b"+", b"-", b":"):
            return line
        n = int(line[1:-2])
        if t == b"$":
            return line + (self.read_exact(n + 2) if n >= 0 else b"")
        out = line
        for _ in range(max(n, 0)):
            out += self.read_reply()
        return out

    def cmd(self, *args):
        self.send(encode(*args))
        return self.read_reply()

    def closed(self, wait=5):
        """True when the server closes the connection within `wait` seconds."""
        self.s.settimeout(wait)
        try:
            while True:
                if not self.s.recv(65536):
                    return True
        except socket.timeout:
            return False
        except OSError:  # reset counts as closed
            return True

    def close(self):
        self.s.close()


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        out.append(b"$%d\r\n" % len(a) + a + b"\r\n")
    return b"".join(out)


def info(raw, section="memory"):
    body = raw.cmd("INFO", section).split(b"\r\n", 1)[1]
    out = {}
    for line in body.decode().splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k] = v
    return out
