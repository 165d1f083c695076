#!/usr/bin/env python3
"""Validates docker-compose.yml (and docker-compose.scylla.yml merged over it) without a Docker
engine: each file against the Compose specification's JSON Schema (scripts/compose/compose-spec.json,
the schema docker-compose 1.29.2 ships as compose/config/compose_spec.json), then the rules this
project's deployment needs:

- every service has a healthcheck and `restart: unless-stopped`;
- every `depends_on` names a service, and `condition: service_healthy` only one with a healthcheck;
- engage services wait for every NATS server (and, with the ScyllaDB override, for scylla) to be
  healthy, list every NATS server in ENGAGE_NATS_URL, keep ENGAGE_NATS_REPLICAS copies (as many as
  there are servers), and their healthcheck asks /readyz (with a client the image installs);
- there are three NATS servers (nats1..nats3), routed into one cluster; each one's healthcheck asks
  /healthz on the monitor port its command opens; scylla's runs cqlsh;
- each engage service's environment is accepted by `engage config` (the real settings validator),
  when --engage BINARY is given;
- .dockerignore keeps target/ out of the build context.

Usage: scripts/check-compose.py [--engage target/debug/engage] [--self-test]
--self-test also checks that broken variants are refused. Exit 1 on any problem.
"""
import copy
import json
import os
import subprocess
import sys

import jsonschema
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(name):
    with open(os.path.join(ROOT, name)) as f:
        return yaml.safe_load(f)


def merge(base, override):
    """Compose's merge of an override file: maps merge key by key, the rest is replaced."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def is_engage(service):
    return service.get("build") == "."


def problems(doc, *, scylla, engage_bin=None, dockerfile="", dockerignore=""):
    found = []
    services = doc.get("services") or {}
    nats_servers = sorted(n for n in services if n.startswith("nats"))
    for name, service in services.items():
        if "healthcheck" not in service:
            found.append(f"{name}: no healthcheck")
        if service.get("restart") != "unless-stopped":
            found.append(f"{name}: restart is {service.get('restart')!r}, not unless-stopped")
        depends = service.get("depends_on") or {}
        if isinstance(depends, list):
            depends = {d: {"condition": "service_started"} for d in depends}
        for target, how in depends.items():
            if target not in services:
                found.append(f"{name}: depends_on {target}, which is not a service")
            elif how.get("condition") == "service_healthy" and "healthcheck" not in services[target]:
                found.append(f"{name}: waits for {target} to be healthy, which has no healthcheck")
        if is_engage(service):
            needed = nats_servers + (["scylla"] if scylla else [])
            for target in needed:
                if (depends.get(target) or {}).get("condition") != "service_healthy":
                    found.append(f"{name}: does not wait for {target} to be healthy")
            test = " ".join((service.get("healthcheck") or {}).get("test") or [])
            if "/readyz" not in test:
                found.append(f"{name}: healthcheck does not ask /readyz")
            client = next((c for c in ("curl", "wget") if c in test), None)
            if client and client not in dockerfile:
                found.append(f"{name}: healthcheck uses {client}, which the Dockerfile does not install")
            env = {k: str(v) for k, v in (service.get("environment") or {}).items()}
            listed = env.get("ENGAGE_NATS_URL", "").split(",")
            for server in nats_servers:
                if f"nats://{server}:4222" not in listed:
                    found.append(f"{name}: ENGAGE_NATS_URL does not list {server}")
            if env.get("ENGAGE_NATS_REPLICAS") != str(len(nats_servers)):
                found.append(f"{name}: ENGAGE_NATS_REPLICAS is not {len(nats_servers)} (one copy per server)")
            if scylla and env.get("ENGAGE_STORE") != "scylla":
                found.append(f"{name}: the ScyllaDB override does not set ENGAGE_STORE=scylla")
            if engage_bin:
                run = subprocess.run([engage_bin, "config"], env={"PATH": os.environ.get("PATH", ""), **env},
                                     capture_output=True, text=True)
                if run.returncode != 0:
                    found.append(f"{name}: engage refuses its environment: {run.stderr.strip()}")
    if nats_servers != ["nats1", "nats2", "nats3"]:
        found.append(f"NATS servers are {nats_servers}, not nats1, nats2, nats3")
    for server in nats_servers:
        nats = services[server]
        test = " ".join((nats.get("healthcheck") or {}).get("test") or [])
        command = " ".join(nats.get("command") or [])
        if "8222/healthz" not in test or "-m 8222" not in command:
            found.append(f"{server}: healthcheck must ask /healthz on the monitor port (-m 8222)")
        routes = [f"nats://{other}:6222" for other in nats_servers]
        if "--cluster_name engage" not in command or not all(r in command for r in routes):
            found.append(f"{server}: not routed to every NATS server in cluster engage")
    if scylla:
        test = " ".join(((services.get("scylla") or {}).get("healthcheck") or {}).get("test") or [])
        if "cqlsh" not in test or "describe keyspaces" not in test:
            found.append("scylla: healthcheck must run cqlsh -e 'describe keyspaces'")
    if not any(line.strip().rstrip("/") in ("target", "/target") for line in dockerignore.splitlines()):
        found.append(".dockerignore does not leave out target/")
    return found


def main():
    args = sys.argv[1:]
    engage_bin = args[args.index("--engage") + 1] if "--engage" in args else None
    with open(os.path.join(ROOT, "scripts/compose/compose-spec.json")) as f:
        schema = json.load(f)
    validator = jsonschema.Draft201909Validator(schema)
    base, scylla = load("docker-compose.yml"), load("docker-compose.scylla.yml")
    with open(os.path.join(ROOT, "Dockerfile")) as f:
        dockerfile = f.read()
    ignore_path = os.path.join(ROOT, ".dockerignore")
    dockerignore = open(ignore_path).read() if os.path.exists(ignore_path) else ""
    found = []
    for name, doc in (("docker-compose.yml", base), ("docker-compose.scylla.yml", scylla)):
        for error in validator.iter_errors(doc):
            found.append(f"{name}: schema: {'/'.join(map(str, error.path))}: {error.message}")
    context = dict(engage_bin=engage_bin, dockerfile=dockerfile, dockerignore=dockerignore)
    found += problems(base, scylla=False, **context)
    found += [f"with the ScyllaDB override: {p}" for p in problems(merge(base, scylla), scylla=True, **context)]
    if "--self-test" in args:
        # the checks can fail: broken variants must be refused
        variants = {
            "no nats healthcheck": lambda d: d["services"]["nats2"].pop("healthcheck"),
            "a NATS server not routed": lambda d: d["services"]["nats3"].update({"command": ["-js", "-m", "8222"]}),
            "a NATS server not listed": lambda d: d["x-engage"]["environment"].update({"ENGAGE_NATS_URL": "nats://nats1:4222"}),
            "no restart policy": lambda d: d["services"]["node1"].pop("restart"),
            "unknown dependency": lambda d: d["services"]["ingress"]["depends_on"].update({"nope": {"condition": "service_started"}}),
            "schema violation": lambda d: d["services"]["moto"].update({"ports": "5000"}),
        }
        for label, breaks in variants.items():
            broken = copy.deepcopy(base)
            breaks(broken)
            caught = list(validator.iter_errors(broken)) or problems(broken, scylla=False, dockerfile=dockerfile, dockerignore=dockerignore)
            if not caught:
                found.append(f"self-test: a compose file with {label} was accepted")
        if not problems(base, scylla=False, dockerfile=dockerfile, dockerignore=""):
            found.append("self-test: a missing .dockerignore was accepted")
    for problem in found:
        print(f"check-compose: {problem}", file=sys.stderr)
    if found:
        return 1
    print("check-compose: docker-compose.yml and docker-compose.scylla.yml are valid", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
