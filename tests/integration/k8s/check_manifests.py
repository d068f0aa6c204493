"""Checks deploy/k8s/*.yaml without a cluster: each parses, and the fields that make the
pieces fit hold (labels and selectors, named ports, the Secret's keys and mount, the
agent's options against `specgen pool --help`). Prints one "ok"/"not ok" line a check
(TAP body, numbered by the caller); exit 1 when any failed.

usage: check_manifests.py DEPLOY_K8S_DIR POOL_HELP_FILE"""
import glob
import os
import re
import sys

import yaml

failed = 0


def check(desc, cond, detail=""):
    global failed
    print(("ok - " if cond else "not ok - ") + desc)
    if not cond:
        failed = 1
        if detail:
            print("#   " + str(detail))


def opt(args, name):
    """The value of --name=V or --name V in a container's args (None when absent)."""
    for i, a in enumerate(args):
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
        if a == name and i + 1 < len(args):
            return args[i + 1]
    return None


def main():
    folder, help_file = sys.argv[1], sys.argv[2]
    docs = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.yaml"))):
        try:
            loaded = [d for d in yaml.safe_load_all(open(path)) if d]
        except yaml.YAMLError as e:
            check(f"{os.path.basename(path)} parses as YAML", False, e)
            continue
        check(f"{os.path.basename(path)} parses as YAML", bool(loaded))
        for d in loaded:
            docs[d.get("kind")] = d
    for kind in ("Namespace", "Secret", "DaemonSet", "Service"):
        check(f"there is a {kind}", kind in docs)
    if failed:
        return 1
    ns, sec, ds, svc = docs["Namespace"], docs["Secret"], docs["DaemonSet"], docs["Service"]
    name = ns["metadata"]["name"]
    check("everything is in the specgen namespace",
          all(d["metadata"].get("namespace") == name for d in (sec, ds, svc)))

    spec = ds["spec"]
    pod_labels = spec["template"]["metadata"]["labels"]
    check("the DaemonSet's selector matches its pods' labels",
          spec["selector"]["matchLabels"].items() <= pod_labels.items())
    check("the Service is headless (clusterIP: None)", svc["spec"].get("clusterIP") == "None")
    check("the Service selects the agent pods", svc["spec"]["selector"].items() <= pod_labels.items())

    pod = spec["template"]["spec"]
    c = pod["containers"][0]
    args = c.get("args", [])
    check("the container runs `specgen pool`", c.get("command") == ["specgen"] and args[:1] == ["pool"],
          (c.get("command"), args[:1]))
    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    for sp in svc["spec"]["ports"]:
        check(f"Service port {sp['name']} targets a container port by name",
              sp.get("targetPort") in ports, sp)
    listen, kv_listen = opt(args, "--listen"), opt(args, "--kv-listen")
    check("--listen binds all addresses on the agent port",
          listen == f"0.0.0.0:{ports.get('agent')}", listen)
    check("--kv-listen binds all addresses on the kvstore port",
          kv_listen == f"0.0.0.0:{ports.get('kvstore')}", kv_listen)
    for probe in ("readinessProbe", "livenessProbe"):
        p = c.get(probe, {}).get("tcpSocket", {}).get("port")
        check(f"the {probe} checks a named container port", p in ports, p)
    check("the pod asks the device plugin for GPUs",
          int(c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", 0)) >= 1)

    # The token and the kv password come from the Secret, mounted read-only.
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    secret_keys = set(sec.get("stringData", {})) | set(sec.get("data", {}) or {})
    for flag, key in (("--token-file", "token"), ("--kv-requirepass-file", "kv-password")):
        path = opt(args, flag) or ""
        mount = next((m for m in c.get("volumeMounts", [])
                      if path.startswith(m["mountPath"].rstrip("/") + "/")), None)
        vol = vols.get(mount["name"]) if mount else None
        item = None
        if vol and "secret" in vol:
            rel = path[len(mount["mountPath"].rstrip("/")) + 1:]
            item = next((i for i in vol["secret"].get("items", []) if i["path"] == rel), None)
        check(f"{flag} {path} is a file of the mounted Secret {sec['metadata']['name']}",
              bool(vol and vol["secret"]["secretName"] == sec["metadata"]["name"] and item
                   and item["key"] == key and key in secret_keys and mount.get("readOnly")),
              (mount, vol))

    # Every option given to the agent is one `specgen pool` documents.
    helptext = open(help_file).read()
    for a in args[1:]:
        flag = a.split("=", 1)[0]
        if flag.startswith("--"):
            documented = re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", helptext)
            check(f"`specgen pool --help` documents {flag}", bool(documented))
    return failed


if __name__ == "__main__":
    sys.exit(main())
