"""Checks what `kubectl kustomize` renders from deploy/k8s and its overlays, without a
cluster: the order (Namespace first), the generated Secret and where it is mounted, the GPU
count of each rendering (node selector, limit, one kvstore port a GPU), resources,
image tag, non-root with a read-only root file system, probes, labels and selectors, and
the agent's options against `specgen pool --help`. Prints one "ok"/"not ok" line a check
(TAP body, numbered by the caller); exit 1 when any failed.

usage: check_manifests.py POOL_HELP_FILE SECRET_DIR RENDERED.yaml:GPUS [RENDERED.yaml:GPUS...]
  SECRET_DIR holds the token and kv-password files the Secret was generated from.
       check_manifests.py --argv RENDERED.yaml FROM=TO...
  prints, NUL-separated: the agent container's runAsUser, fsGroup, then its environment
  (NAME=VALUE) and command line, each value FROM (or path under FROM) mapped to TO, for a run
  outside a cluster."""
import base64
import os
import re
import sys

import yaml

failed = 0
KV_NAME = re.compile(r"^kvstore-(\d+)$")


def check(desc, cond, detail=""):
    global failed
    print(("ok - " if cond else "not ok - ") + desc)
    if not cond:
        failed = 1
        if detail != "":
            print("#   " + str(detail))


def opt(args, name):
    """The value of --name=V or --name V in a container's args (None when absent)."""
    for i, a in enumerate(args):
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
        if a == name and i + 1 < len(args):
            return args[i + 1]
    return None


def port_of(hostport):
    return int(hostport.rsplit(":", 1)[1]) if hostport and ":" in hostport else None


def check_order_and_secret(tag, objs, secret_dir):
    """Namespace first, everything in it, the Secret generated from the files."""
    kinds = [o["kind"] for o in objs]
    check(f"{tag}: the Namespace comes first", kinds[:1] == ["Namespace"], kinds)
    ns = objs[0]["metadata"]["name"]
    check(f"{tag}: every other object is in namespace {ns}",
          all(o["metadata"].get("namespace") == ns for o in objs[1:]),
          [(o["kind"], o["metadata"].get("namespace")) for o in objs[1:]])
    secrets = [o for o in objs if o["kind"] == "Secret"]
    check(f"{tag}: one Secret", len(secrets) == 1, len(secrets))
    if not secrets:
        return None
    sec = secrets[0]
    name = sec["metadata"]["name"]
    check(f"{tag}: the Secret's name carries its contents' hash (generated: {name})",
          re.fullmatch(r"specgen-pool-[a-z0-9]{10}", name) is not None, name)
    data = sec.get("data") or {}
    for key in ("token", "kv-password"):
        want = open(os.path.join(secret_dir, key), "rb").read()
        got = base64.b64decode(data.get(key, "")) if key in data else None
        check(f"{tag}: the Secret's {key} is the file {key}'s contents", got == want, got)
    check(f"{tag}: no placeholder in the Secret",
          "stringData" not in sec and "REPLACE" not in yaml.safe_dump(sec))
    return sec


def check_gpus(tag, ds, c, gpus):
    """The GPU count in its four places, and resources."""
    pod = ds["spec"]["template"]["spec"]
    res = c.get("resources", {})
    limit = res.get("limits", {}).get("nvidia.com/gpu")
    check(f"{tag}: the GPU limit is {gpus}", str(limit) == str(gpus), limit)
    req = res.get("requests", {}).get("nvidia.com/gpu")
    check(f"{tag}: the GPU request, if any, equals the limit", req is None or str(req) == str(limit), req)
    sel = pod.get("nodeSelector", {}).get("nvidia.com/gpu.count")
    check(f"{tag}: the pods go only to nodes with {gpus} GPUs (nvidia.com/gpu.count)",
          sel == str(gpus), sel)
    for r in ("cpu", "memory"):
        check(f"{tag}: the container requests {r}", bool(res.get("requests", {}).get(r)), res)
    check(f"{tag}: the container has a memory limit", bool(res.get("limits", {}).get("memory")), res)
    ports = {p.get("name", ""): p.get("containerPort") for p in c.get("ports", [])}
    kv0 = port_of(opt(c.get("args", []), "--kv-listen"))
    kv = sorted((int(KV_NAME.match(n).group(1)), p) for n, p in ports.items() if KV_NAME.match(n))
    want = [(i, kv0 + i) for i in range(gpus)] if kv0 else None
    check(f"{tag}: one kvstore port a GPU: kvstore-i at --kv-listen's port + i, i < {gpus}",
          kv == want, (kv, want))
    return ports


def check_security(tag, ds, c):
    """Non-root, read-only root, and every place the agent writes on a writable volume."""
    pod = ds["spec"]["template"]["spec"]
    psc, csc = pod.get("securityContext", {}), c.get("securityContext", {})
    check(f"{tag}: runAsNonRoot", bool(csc.get("runAsNonRoot", psc.get("runAsNonRoot"))), (psc, csc))
    uid = csc.get("runAsUser", psc.get("runAsUser"))
    check(f"{tag}: runAsUser is set and not 0", isinstance(uid, int) and uid > 0, uid)
    check(f"{tag}: readOnlyRootFilesystem", csc.get("readOnlyRootFilesystem") is True, csc)
    check(f"{tag}: no privilege escalation, no capabilities",
          csc.get("allowPrivilegeEscalation") is False
          and csc.get("capabilities", {}).get("drop") == ["ALL"], csc)
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    writable = [m["mountPath"].rstrip("/") for m in c.get("volumeMounts", [])
                if not m.get("readOnly") and "emptyDir" in vols.get(m["name"], {})]
    env = {e["name"]: e.get("value") for e in c.get("env", [])}
    args = c.get("args", [])
    where = {"--cache-dir": opt(args, "--cache-dir"), "TMPDIR": env.get("TMPDIR"),
             "HOME": env.get("HOME"), "CUDA_CACHE_PATH": env.get("CUDA_CACHE_PATH"),
             "XDG_CACHE_HOME (PoCL's cache)": env.get("XDG_CACHE_HOME")}
    for what, path in where.items():
        check(f"{tag}: {what} ({path}) is on a writable emptyDir",
              bool(path) and any(path == w or path.startswith(w + "/") for w in writable),
              writable)


def check_probes(tag, c, ports):
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        p = c.get(probe, {}).get("tcpSocket", {}).get("port")
        check(f"{tag}: the {probe} checks the agent's port by name", p == "agent" and p in ports, p)
    sp = c.get("startupProbe", {})
    budget = sp.get("periodSeconds", 10) * sp.get("failureThreshold", 3)
    check(f"{tag}: the startupProbe allows at least 2 minutes ({budget} s)", budget >= 120, sp)


def check_secret_mount(tag, c, pod, sec, args):
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    for flag, key in (("--token-file", "token"), ("--kv-requirepass-file", "kv-password")):
        path = opt(args, flag) or ""
        mount = next((m for m in c.get("volumeMounts", [])
                      if path.startswith(m["mountPath"].rstrip("/") + "/")), None)
        vol = vols.get(mount["name"]) if mount else None
        item = None
        if vol and "secret" in vol:
            rel = path[len(mount["mountPath"].rstrip("/")) + 1:]
            item = next((i for i in vol["secret"].get("items", []) if i["path"] == rel), None)
        check(f"{tag}: {flag} {path} is the key {key} of the generated Secret, mounted read-only",
              bool(sec and vol and "secret" in vol
                   and vol["secret"]["secretName"] == sec["metadata"]["name"]
                   and item and item["key"] == key and mount.get("readOnly")), (mount, vol))


def check_one(tag, objs, gpus, secret_dir, helptext):
    sec = check_order_and_secret(tag, objs, secret_dir)
    by_kind = {}
    for o in objs:
        by_kind.setdefault(o["kind"], []).append(o)
    for kind in ("DaemonSet", "Service"):
        check(f"{tag}: one {kind}", len(by_kind.get(kind, [])) == 1, len(by_kind.get(kind, [])))
    if not by_kind.get("DaemonSet") or not by_kind.get("Service"):
        return None
    ds, svc = by_kind["DaemonSet"][0], by_kind["Service"][0]
    spec = ds["spec"]
    pod = spec["template"]["spec"]
    pod_labels = spec["template"]["metadata"]["labels"]
    check(f"{tag}: the DaemonSet's selector matches its pods' labels",
          spec["selector"]["matchLabels"].items() <= pod_labels.items())
    check(f"{tag}: the Service is headless (clusterIP: None)", svc["spec"].get("clusterIP") == "None")
    check(f"{tag}: the Service selects the agent pods", svc["spec"]["selector"].items() <= pod_labels.items())
    c = pod["containers"][0]
    args = c.get("args", [])
    check(f"{tag}: the container runs `specgen pool`", c.get("command") == ["specgen"] and args[:1] == ["pool"],
          (c.get("command"), args[:1]))
    image = c.get("image", "")
    check(f"{tag}: the image has a version tag, not :latest ({image})",
          re.search(r":[\w.-]+$", image.rsplit("/", 1)[-1]) is not None and not image.endswith(":latest"),
          image)
    ports = check_gpus(tag, ds, c, gpus)
    check(f"{tag}: --listen binds all addresses on the agent port",
          opt(args, "--listen") == f"0.0.0.0:{ports.get('agent')}", opt(args, "--listen"))
    check(f"{tag}: --kv-listen binds all addresses", (opt(args, "--kv-listen") or "").startswith("0.0.0.0:"))
    svc_ports = {sp["name"]: sp for sp in svc["spec"]["ports"]}
    check(f"{tag}: the Service declares the agent port and every kvstore port of the pods",
          all(n in svc_ports and svc_ports[n].get("targetPort") == n
              and svc_ports[n].get("port") == ports[n] for n in ports),
          sorted(set(ports) - set(svc_ports)))
    check_probes(tag, c, ports)
    check_security(tag, ds, c)
    check_secret_mount(tag, c, pod, sec, args)
    for a in args[1:]:
        flag = a.split("=", 1)[0]
        if flag.startswith("--"):
            documented = re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", helptext)
            check(f"{tag}: `specgen pool --help` documents {flag}", bool(documented))
    return ds


def argv(path, maps):
    ds = next(o for o in yaml.safe_load_all(open(path)) if o and o["kind"] == "DaemonSet")
    pod = ds["spec"]["template"]["spec"]
    c = pod["containers"][0]
    sc = {**pod.get("securityContext", {}), **c.get("securityContext", {})}
    words = [str(sc.get("runAsUser", "")), str(sc.get("fsGroup", ""))]
    words += [f"{e['name']}={e.get('value', '')}" for e in c.get("env", [])]
    words += c.get("command", []) + c.get("args", [])
    pairs = [m.split("=", 1) for m in maps]

    def remap(v):  # a whole value or a path under one, the first FROM that fits
        for src, dst in pairs:
            if v == src or v.startswith(src + "/"):
                return dst + v[len(src):]
        return v

    words = [w.split("=", 1)[0] + "=" + remap(w.split("=", 1)[1]) if "=" in w else remap(w)
             for w in words]
    sys.stdout.write("\0".join(words) + "\0")
    return 0


def main():
    if sys.argv[1] == "--argv":
        return argv(sys.argv[2], sys.argv[3:])
    helptext = open(sys.argv[1]).read()
    secret_dir = sys.argv[2]
    rendered = {}
    for spec in sys.argv[3:]:
        path, gpus = spec.rsplit(":", 1)
        tag = os.path.splitext(os.path.basename(path))[0]
        try:
            objs = [d for d in yaml.safe_load_all(open(path)) if d]
        except yaml.YAMLError as e:
            check(f"{tag}: the rendered manifests parse as YAML", False, e)
            continue
        check(f"{tag}: the rendered manifests parse as YAML", bool(objs))
        rendered[tag] = (objs, check_one(tag, objs, int(gpus), secret_dir, helptext))
    # Side by side on a mixed cluster: other DaemonSets, the same shared objects.
    if len(rendered) > 1:
        dss = [ds for _, ds in rendered.values() if ds]
        names = [ds["metadata"]["name"] for ds in dss]
        sels = [tuple(sorted(ds["spec"]["selector"]["matchLabels"].items())) for ds in dss]
        check("the DaemonSets of the renderings have distinct names and selectors (applied together)",
              len(set(names)) == len(dss) and len(set(sels)) == len(dss), (names, sels))
        shared = [[yaml.safe_dump(o) for o in objs if o["kind"] != "DaemonSet"]
                  for objs, _ in rendered.values()]
        check("the renderings' Namespace, Service and Secret are the same objects",
              all(s == shared[0] for s in shared))
    return failed


if __name__ == "__main__":
    sys.exit(main())
