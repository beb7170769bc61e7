#!/usr/bin/env python3
"""Minimise a disagreeing case of tests/real-kueue/diff.

    shrink.py --seed S --out FILE [--oracle BIN] [--gangplank BIN]

Starts from gen.py's cluster for seed S and removes objects one at a time (workloads,
ClusterQueues with their LocalQueue, unreferenced Cohorts, flavors, namespaces and
priority classes, pod sets, resources a ClusterQueue covers) as long as gangplank and the
oracle still disagree, keeping the cluster valid (nothing removed that a remaining object
names). Writes the smallest cluster found to FILE and prints its disagreement.
"""

import argparse
import copy
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def load(name, path):
    spec = importlib.util.spec_from_loader(name, importlib.machinery.SourceFileLoader(name, path))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


gen = load("gen", os.path.join(HERE, "gen.py"))
diff = load("diff", os.path.join(os.path.dirname(HERE), "diff"))


def referenced(docs):
    """Names other objects refer to: (kind, name)."""
    refs = set()
    for d in docs:
        k, spec = d["kind"], d.get("spec") or {}
        if k == "ClusterQueue":
            if spec.get("cohortName"):
                refs.add(("Cohort", spec["cohortName"]))
        if k == "Cohort" and spec.get("parentName"):
            refs.add(("Cohort", spec["parentName"]))
        if k in ("ClusterQueue", "Cohort"):
            for g in spec.get("resourceGroups") or []:
                for f in g["flavors"]:
                    refs.add(("ResourceFlavor", f["name"]))
        if k == "LocalQueue":
            refs.add(("ClusterQueue", spec["clusterQueue"]))
            refs.add(("Namespace", d["metadata"]["namespace"]))
        if k == "Workload":
            refs.add(("Namespace", d["metadata"]["namespace"]))
            if spec.get("priorityClassRef"):
                refs.add(("WorkloadPriorityClass", spec["priorityClassRef"]["name"]))
            st = d.get("status") or {}
            if st.get("admission"):
                refs.add(("ClusterQueue", st["admission"]["clusterQueue"]))
                for psa in st["admission"]["podSetAssignments"]:
                    for f in psa["flavors"].values():
                        refs.add(("ResourceFlavor", f))
    return refs


def removals(docs):
    """Candidate smaller clusters, biggest cuts first."""
    refs = referenced(docs)
    out = []
    for i, d in enumerate(docs):
        k, name = d["kind"], d["metadata"]["name"]
        if k == "ConfigMap":
            continue
        if k == "ClusterQueue":
            if any(x["kind"] == "Workload" and (x.get("status") or {}).get("admission", {}).get("clusterQueue") == name for x in docs):
                continue
            lqs = [j for j, x in enumerate(docs) if x["kind"] == "LocalQueue" and x["spec"]["clusterQueue"] == name]
            ns = {docs[j]["metadata"]["namespace"] for j in lqs}
            wls = [j for j, x in enumerate(docs) if x["kind"] == "Workload" and x["metadata"]["namespace"] in ns]
            drop = {i, *lqs, *wls}
            out.append([x for j, x in enumerate(docs) if j not in drop])
            continue
        if k == "LocalQueue":
            continue
        if (k, name) in refs:
            continue
        out.append(docs[:i] + docs[i + 1 :])
    # Smaller objects: pod sets, podset resources, flavors in a ClusterQueue.
    for i, d in enumerate(docs):
        if d["kind"] == "Workload" and not d.get("status") and len(d["spec"]["podSets"]) > 1:
            for p in range(len(d["spec"]["podSets"])):
                n = copy.deepcopy(docs)
                del n[i]["spec"]["podSets"][p]
                out.append(n)
        if d["kind"] == "Workload" and not d.get("status"):
            for p, ps in enumerate(d["spec"]["podSets"]):
                reqs = ps["template"]["spec"]["containers"][0]["resources"]["requests"]
                if len(reqs) > 1:
                    for r in list(reqs):
                        n = copy.deepcopy(docs)
                        del n[i]["spec"]["podSets"][p]["template"]["spec"]["containers"][0]["resources"]["requests"][r]
                        out.append(n)
                if "minCount" in ps:
                    n = copy.deepcopy(docs)
                    del n[i]["spec"]["podSets"][p]["minCount"]
                    out.append(n)
                for key in ("tolerations", "nodeSelector"):
                    if key in ps["template"]["spec"]:
                        n = copy.deepcopy(docs)
                        del n[i]["spec"]["podSets"][p]["template"]["spec"][key]
                        out.append(n)
        if d["kind"] in ("ClusterQueue", "Cohort"):
            used = {f for x in docs if x["kind"] == "Workload" and (x.get("status") or {}).get("admission", {}).get("clusterQueue") == d["metadata"]["name"] for psa in x["status"]["admission"]["podSetAssignments"] for f in psa["flavors"].values()}
            for g, grp in enumerate(d["spec"].get("resourceGroups") or []):
                for f, fl in enumerate(grp["flavors"]):
                    if fl["name"] in used:
                        continue
                    n = copy.deepcopy(docs)
                    del n[i]["spec"]["resourceGroups"][g]["flavors"][f]
                    if not n[i]["spec"]["resourceGroups"][g]["flavors"]:
                        del n[i]["spec"]["resourceGroups"][g]
                    out.append(n)
            if d["kind"] == "Cohort" and d["spec"].get("resourceGroups"):
                n = copy.deepcopy(docs)
                del n[i]["spec"]["resourceGroups"]
                out.append(n)
        if d["kind"] in ("ClusterQueue", "Cohort") and "fairSharing" in d["spec"]:
            n = copy.deepcopy(docs)
            del n[i]["spec"]["fairSharing"]
            out.append(n)
    return out


def check(docs, oracle, gp, tmp):
    path = os.path.join(tmp, "case.yaml")
    with open(path, "w") as f:
        f.write(gen.to_yaml(docs))
    r = subprocess.run([oracle, "plan", path], capture_output=True, text=True)
    if r.returncode != 0:
        # Kueue panicking is a disagreement too (kept only while it still panics).
        return [f"  oracle error: {r.stderr.strip()}"] if "panicked" in r.stderr else None
    o = json.loads(r.stdout)
    g = diff.run_gangplank(gp, path)
    if "error" in g:
        return None
    return diff.compare(g, o) or None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--oracle")
    ap.add_argument("--gangplank")
    a = ap.parse_args()
    oracle = a.oracle or diff.oracle_binary()
    gp = a.gangplank or diff.gangplank_binary()
    docs = gen.generate(a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        lines = check(docs, oracle, gp, tmp)
        if not lines:
            print(f"shrink: seed {a.seed}: no disagreement", file=sys.stderr)
            return 1
        progress = True
        while progress:
            progress = False
            for cand in removals(docs):
                l2 = check(cand, oracle, gp, tmp)
                if l2:
                    docs, lines, progress = cand, l2, True
                    break
    with open(a.out, "w") as f:
        f.write(f"# minimised from tests/real-kueue/gen/gen.py --seed {a.seed} by tests/real-kueue/gen/shrink.py\n" + gen.to_yaml(docs))
    print(f"shrink: seed {a.seed}: {len([d for d in docs if d['kind'] == 'Workload'])} workloads, {len([d for d in docs if d['kind'] == 'ClusterQueue'])} ClusterQueues")
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
