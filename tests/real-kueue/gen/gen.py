#!/usr/bin/env python3
"""Random valid Kueue clusters for the differential test (tests/real-kueue/diff).

    gen.py --out DIR [--seeds A-B | --seed S]     writes DIR/case-SEED.yaml

Each cluster is a multi-document YAML of v1beta2 objects, what the Kueue webhooks and the
CRD schemas accept: ResourceFlavors (node labels, NoSchedule taints, tolerations),
Cohorts (hierarchical, some with their own quota and fair-sharing weights), 2-6
ClusterQueues (borrowingLimit/lendingLimit, every preemption policy, flavor fungibility,
StrictFIFO/BestEffortFIFO, now and then stopPolicy Hold/HoldAndDrain or a flavor that
does not exist), LocalQueues, WorkloadPriorityClasses, Namespaces and 0-20 Workloads:
admitted ones whose usage fits their ClusterQueue the way Kueue's quota tree computes it
(pkg/cache/scheduler/resource_node.go), pending ones with distinct creation times one
second apart, some with minCount (partial admission). Even seeds turn fair sharing on
(the kueue-manager-config ConfigMap, fairSharing.enable: true), odd seeds leave it off.
Stdlib only; the same seed always gives the same file.
"""

import argparse
import os
import random
import sys

BASE = 1_700_000_000  # 2023-11-14T22:13:20Z
RESOURCES = ["cpu", "memory", "nvidia.com/gpu"]


def ts(sec):
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(BASE + sec))


def qty(res, v):
    """v is in base units: cpu millicores, memory Mi, gpu units."""
    if res == "cpu":
        return str(v // 1000) if v % 1000 == 0 else f"{v}m"
    if res == "memory":
        return f"{v // 1024}Gi" if v % 1024 == 0 else f"{v}Mi"
    return str(v)


# ---------------------------------------------------------------- YAML emitter


def _scalar(v):
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, int):
        return str(v)
    s = str(v)
    safe = s and all(c.isalnum() or c in "-_./" for c in s) and not s[0].isdigit() and s.lower() not in ("true", "false", "null", "yes", "no", "on", "off", "y", "n", "~")
    return s if safe else '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _yaml(v, indent):
    pad = "  " * indent
    out = []
    if isinstance(v, dict):
        if not v:
            return [pad + "{}"]
        for k, x in v.items():
            if isinstance(x, (dict, list)) and x:
                out.append(f"{pad}{_scalar(k)}:")
                out.extend(_yaml(x, indent + 1) if isinstance(x, dict) else _yaml(x, indent))
            elif isinstance(x, dict):
                out.append(f"{pad}{_scalar(k)}: {{}}")
            elif isinstance(x, list):
                out.append(f"{pad}{_scalar(k)}: []")
            elif isinstance(x, str) and "\n" in x:
                out.append(f"{pad}{_scalar(k)}: |")
                out.extend(f"{pad}  {line}" for line in x.rstrip("\n").split("\n"))
            else:
                out.append(f"{pad}{_scalar(k)}: {_scalar(x)}")
        return out
    if isinstance(v, list):
        for x in v:
            sub = _yaml(x, indent + 1)
            first = sub[0].lstrip()
            out.append(f"{pad}- {first}")
            out.extend(sub[1:])
        return out
    return [pad + _scalar(v)]


def to_yaml(docs):
    return "".join("---\n" + "\n".join(_yaml(d, 0)) + "\n" for d in docs)


# ---------------------------------------------------------------- quota tree (Kueue's)


class Node:
    def __init__(self, name, parent=None):
        self.name = name
        self.parent = parent
        self.quotas = {}  # fr -> (nominal, borrowingLimit|None, lendingLimit|None)
        self.subtree = {}
        self.usage = {}
        self.children = []

    def local_quota(self, fr):
        q = self.quotas.get(fr)
        if q and q[2] is not None:
            return max(0, self.subtree.get(fr, 0) - q[2])
        return 0

    def local_available(self, fr):
        return max(0, self.local_quota(fr) - self.usage.get(fr, 0))

    def available(self, fr):
        if self.parent is None:
            return self.subtree.get(fr, 0) - self.usage.get(fr, 0)
        pa = self.parent.available(fr)
        q = self.quotas.get(fr)
        if q and q[1] is not None:
            stored = self.subtree.get(fr, 0) - self.local_quota(fr)
            used = max(0, self.usage.get(fr, 0) - self.local_quota(fr))
            pa = min(stored - used + q[1], pa)
        return self.local_available(fr) + pa

    def add_usage(self, fr, v):
        la = self.local_available(fr)
        self.usage[fr] = self.usage.get(fr, 0) + v
        if self.parent is not None and v > la:
            self.parent.add_usage(fr, v - la)


def build_tree(nodes):
    """SubtreeQuota bottom-up (updateCohortResourceNode)."""

    def update(n):
        n.subtree = {fr: q[0] for fr, q in n.quotas.items()}
        for c in n.children:
            update(c)
            for fr, cq in c.subtree.items():
                n.subtree[fr] = n.subtree.get(fr, 0) + cq - c.local_quota(fr)

    for n in nodes:
        if n.parent is None:
            update(n)


# ---------------------------------------------------------------- the generator


def generate(seed):
    rng = random.Random(seed)
    fair = seed % 2 == 0
    docs = []
    uid_n = [0]

    def uid():
        uid_n[0] += 1
        return f"00000000-0000-0000-{seed % 10000:04d}-{uid_n[0]:012d}"

    if fair:
        strategies = rng.choice([None, None, ["LessThanOrEqualToFinalShare", "LessThanInitialShare"], ["LessThanOrEqualToFinalShare"], ["LessThanInitialShare"]])
        cfg = "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nfairSharing:\n  enable: true\n"
        if strategies:
            cfg += "  preemptionStrategies: [" + ", ".join(strategies) + "]\n"
        docs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"}, "data": {"controller_manager_config.yaml": cfg}})

    # Resources and flavors.
    use_mem = rng.random() < 0.4
    use_gpu = rng.random() < 0.5
    n_flavors = rng.randint(1, 4)
    flavors = []
    for i in range(n_flavors):
        f = {"name": f"f{i}", "labels": {}, "taint": None}
        if rng.random() < 0.5:
            f["labels"] = {"pool": f"p{i}"}
        if rng.random() < 0.25:
            f["taint"] = {"key": "dedicated", "value": f"f{i}", "effect": "NoSchedule"}
        flavors.append(f)
        spec = {}
        if f["labels"]:
            spec["nodeLabels"] = f["labels"]
        if f["taint"]:
            spec["nodeTaints"] = [f["taint"]]
            if rng.random() < 0.3:
                spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": f"f{i}", "effect": "NoSchedule"}]
                f["tolerated"] = True
        docs.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": f["name"]}, "spec": spec})
    for f in flavors:
        f.setdefault("tolerated", False)

    # Priority classes.
    prios = [("low", 100), ("mid", 500), ("high", 1000)]
    for name, v in prios:
        docs.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass", "metadata": {"name": name}, "value": v})

    # Cohort trees.
    n_roots = rng.choice([1, 1, 1, 2])
    cohorts = []  # (name, parent|None)
    for r in range(n_roots):
        root = f"org{r}"
        cohorts.append((root, None))
        for k in range(rng.choice([0, 0, 1, 2])):
            cohorts.append((f"{root}-team{k}", root))
            if rng.random() < 0.2:
                cohorts.append((f"{root}-team{k}-sub", f"{root}-team{k}"))

    def scale(res):
        return {"cpu": 1000, "memory": 1024, "nvidia.com/gpu": 1}[res]

    def make_groups(flavor_pool, allow_borrow, allow_lend):
        """resourceGroups over the resources in use; each flavor in one group only."""
        groups = []
        res_cpu = ["cpu"] + (["memory"] if use_mem else [])
        pool = list(flavor_pool)
        rng.shuffle(pool)
        gpu_separate = use_gpu and len(pool) >= 2 and rng.random() < 0.6
        if gpu_separate:
            k = rng.randint(1, len(pool) - 1)
            sets = [(res_cpu, pool[:k]), (["nvidia.com/gpu"], pool[k:])]
        else:
            sets = [(res_cpu + (["nvidia.com/gpu"] if use_gpu else []), pool[: rng.randint(1, len(pool))])]
        for covered, fl in sets:
            g = {"coveredResources": covered, "flavors": []}
            for f in fl:
                rs = []
                for res in covered:
                    nominal = rng.choice([0, 1, 2, 4, 4, 6, 8, 8, 10, 16]) * scale(res)
                    if res == "cpu" and rng.random() < 0.1:
                        nominal += 500
                    q = {"name": res, "nominalQuota": qty(res, nominal)}
                    quota = [nominal, None, None]
                    if allow_borrow and rng.random() < 0.3:
                        bl = rng.choice([0, 1, 2, 4, 8]) * scale(res)
                        q["borrowingLimit"] = qty(res, bl)
                        quota[1] = bl
                    if allow_lend and rng.random() < 0.3:
                        ll = rng.randint(0, nominal // scale(res)) * scale(res)
                        q["lendingLimit"] = qty(res, ll)
                        quota[2] = ll
                    rs.append((q, quota))
                g["flavors"].append({"name": f, "resources": rs})
            groups.append(g)
        return groups

    def groups_api(groups):
        return [{"coveredResources": g["coveredResources"], "flavors": [{"name": f["name"], "resources": [q for q, _ in f["resources"]]} for f in g["flavors"]]} for g in groups]

    def weight():
        return rng.choice(["1", "1", "2", "3", "0.5", "0"])

    nodes = {}
    for name, parent in cohorts:
        nodes[name] = Node(name)
    for name, parent in cohorts:
        if parent:
            nodes[name].parent = nodes[parent]
            nodes[parent].children.append(nodes[name])
    flavor_names = [f["name"] for f in flavors]
    for name, parent in cohorts:
        spec = {}
        if parent:
            spec["parentName"] = parent
        if rng.random() < 0.3:
            gs = make_groups(flavor_names, parent is not None, parent is not None)
            spec["resourceGroups"] = groups_api(gs)
            for g in gs:
                for f in g["flavors"]:
                    for (q, quota), res in zip(f["resources"], g["coveredResources"]):
                        nodes[name].quotas[(f["name"], res)] = tuple(quota)
        if fair and rng.random() < 0.4:
            spec["fairSharing"] = {"weight": weight()}
        docs.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": name}, "spec": spec})

    # Namespaces.
    n_cq = rng.randint(2, 6)
    namespaces = [f"ns{i}" for i in range(n_cq)]
    for ns in namespaces:
        labels = {"team": rng.choice(["a", "b"])}
        docs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": labels}})

    # ClusterQueues and LocalQueues.
    cqs = []
    for i in range(n_cq):
        name = f"cq{i}"
        cohort = rng.choice([c for c, _ in cohorts]) if rng.random() < 0.85 else None
        gs = make_groups(flavor_names, cohort is not None, cohort is not None)
        node = Node(name, nodes[cohort] if cohort else None)
        if cohort:
            nodes[cohort].children.append(node)
        for g in gs:
            for f in g["flavors"]:
                for (q, quota), res in zip(f["resources"], g["coveredResources"]):
                    node.quotas[(f["name"], res)] = tuple(quota)
        within = rng.choice(["Never", "LowerPriority", "LowerOrNewerEqualPriority"])
        reclaim = rng.choice(["Never", "LowerPriority", "Any"])
        borrow = {"policy": "Never"}
        if reclaim != "Never" and rng.random() < 0.4:
            borrow = {"policy": "LowerPriority"}
            if rng.random() < 0.5:
                borrow["maxPriorityThreshold"] = rng.choice([100, 500, 1000])
        ff = {"whenCanBorrow": rng.choice(["MayStopSearch", "TryNextFlavor"]), "whenCanPreempt": rng.choice(["TryNextFlavor", "MayStopSearch"])}
        if ff["whenCanBorrow"] == "TryNextFlavor" and ff["whenCanPreempt"] == "TryNextFlavor" and rng.random() < 0.3:
            ff["preference"] = rng.choice(["BorrowingOverPreemption", "PreemptionOverBorrowing"])
        spec = {}
        if cohort:
            spec["cohortName"] = cohort
        spec["namespaceSelector"] = {} if rng.random() < 0.85 else {"matchLabels": {"team": rng.choice(["a", "b"])}}
        spec["queueingStrategy"] = rng.choice(["BestEffortFIFO", "BestEffortFIFO", "StrictFIFO"])
        spec["preemption"] = {"withinClusterQueue": within, "reclaimWithinCohort": reclaim, "borrowWithinCohort": borrow}
        spec["flavorFungibility"] = ff
        rg_api = groups_api(gs)
        active = True
        u = rng.random()
        if u < 0.06:
            spec["stopPolicy"] = rng.choice(["Hold", "HoldAndDrain"])
            active = False
        elif u < 0.09:
            # A flavor that does not exist: the ClusterQueue is inactive.
            rg_api[0]["flavors"].append({"name": "missing", "resources": [{"name": r, "nominalQuota": qty(r, 2 * scale(r))} for r in rg_api[0]["coveredResources"]]})
            active = False
        spec["resourceGroups"] = rg_api
        if fair and rng.random() < 0.5:
            spec["fairSharing"] = {"weight": weight()}
        docs.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec})
        cqs.append({"name": name, "node": node, "groups": gs, "ns": namespaces[i], "selector": spec["namespaceSelector"], "active": active, "spec": spec})
        docs.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": namespaces[i]}, "spec": {"clusterQueue": name}})
    all_nodes = list(nodes.values()) + [c["node"] for c in cqs]
    build_tree(all_nodes)

    # Workloads.
    n_wl = rng.randint(0, 20)
    n_admitted = rng.randint(n_wl // 3, n_wl) if n_wl else 0
    t_adm = 0
    t_pend = 1000
    wls = []
    admitted_count = 0
    for w in range(n_wl):
        cq = rng.choice(cqs)
        want_admitted = admitted_count < n_admitted
        pri = rng.choice([None, "low", "mid", "mid", "high"])
        n_ps = rng.choice([1, 1, 1, 2])
        podsets = []
        tolerate = [f for f in flavors if f["taint"] and rng.random() < 0.5]
        selector = None
        if rng.random() < 0.15:
            lf = [f for f in flavors if f["labels"]]
            if lf:
                selector = dict(rng.choice(lf)["labels"])
        min_ps = rng.randrange(n_ps) if rng.random() < 0.25 else None
        for p in range(n_ps):
            count = rng.choice([1, 1, 2, 3, 4])
            req = {"cpu": rng.choice([500, 1000, 1000, 2000, 3000, 4000])}
            if use_mem and rng.random() < 0.7:
                req["memory"] = rng.choice([512, 1024, 2048, 4096])
            if use_gpu and rng.random() < 0.5:
                req["nvidia.com/gpu"] = rng.choice([1, 1, 2, 4])
            podsets.append({"name": "main" if p == 0 else f"ps{p}", "count": count, "req": req, "min": None})
        if min_ps is not None and podsets[min_ps]["count"] > 1 and not want_admitted:
            podsets[min_ps]["min"] = rng.randint(1, podsets[min_ps]["count"] - 1)
        name = f"w{w}"
        wl = {"name": name, "ns": cq["ns"], "cq": cq, "pri": pri, "podsets": podsets, "tolerate": tolerate, "selector": selector}
        if want_admitted:
            assignment = try_admit(rng, cq, wl, flavors)
            if assignment is not None:
                admitted_count += 1
                t_adm += 1
                wl["admission"] = assignment
                wl["created"] = t_adm - 500
                wl["reserved"] = t_adm
                wls.append(wl)
                continue
        t_pend += 1
        wl["created"] = t_pend
        wls.append(wl)

    prio_value = dict(prios)
    for wl in wls:
        template_spec = {"containers": None}
        podsets = []
        for ps in wl["podsets"]:
            spec = {}
            if wl["selector"]:
                spec["nodeSelector"] = wl["selector"]
            if wl["tolerate"]:
                spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": f["taint"]["value"], "effect": "NoSchedule"} for f in wl["tolerate"]]
            spec["containers"] = [{"name": "c", "image": "busybox", "resources": {"requests": {r: qty(r, v) for r, v in ps["req"].items()}}}]
            spec["restartPolicy"] = "Never"
            p = {"name": ps["name"], "count": ps["count"]}
            if ps["min"] is not None:
                p["minCount"] = ps["min"]
            p["template"] = {"spec": spec}
            podsets.append(p)
        del template_spec
        spec = {"active": True, "queueName": "lq"}
        if wl["pri"]:
            spec["priorityClassRef"] = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": wl["pri"]}
            spec["priority"] = prio_value[wl["pri"]]
        spec["podSets"] = podsets
        doc = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": {"name": wl["name"], "namespace": wl["ns"], "uid": uid(), "creationTimestamp": ts(wl["created"])}, "spec": spec}
        if "admission" in wl:
            t = ts(wl["reserved"])
            doc["status"] = {
                "admission": {"clusterQueue": wl["cq"]["name"], "podSetAssignments": wl["admission"]},
                "conditions": [
                    {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": f"Quota reserved in ClusterQueue {wl['cq']['name']}", "lastTransitionTime": t},
                    {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted", "lastTransitionTime": t},
                ],
            }
        docs.append(doc)
    return docs


def eligible(f, wl):
    if f["taint"] and not f["tolerated"] and f not in wl["tolerate"]:
        return False
    if wl["selector"]:
        for k, v in wl["selector"].items():
            if k in f["labels"] and f["labels"][k] != v:
                return False
    return True


def try_admit(rng, cq, wl, flavors):
    """A flavor assignment that fits the ClusterQueue now (Kueue's available()), applied to
    the quota tree; None if none fits (the workload is then generated pending)."""
    if not cq["active"] or cq["spec"].get("stopPolicy"):
        # An inactive queue may still hold workloads admitted before it stopped.
        if rng.random() < 0.5:
            return None
    byname = {f["name"]: f for f in flavors}
    node = cq["node"]
    plan = {}  # (flavor, res) -> total
    out = []
    for ps in wl["podsets"]:
        flv = {}
        usage = {}
        for res, per in ps["req"].items():
            group = next((g for g in cq["groups"] if res in g["coveredResources"]), None)
            if group is None:
                return None
            if any(r in flv for r in group["coveredResources"]):
                continue
            options = [f["name"] for f in group["flavors"] if eligible(byname[f["name"]], wl)]
            rng.shuffle(options)
            chosen = None
            for fname in options:
                ok = True
                for r in group["coveredResources"]:
                    if r not in ps["req"]:
                        continue
                    need = ps["req"][r] * ps["count"] + plan.get((fname, r), 0)
                    if node.available((fname, r)) < need:
                        ok = False
                if ok:
                    chosen = fname
                    break
            if chosen is None:
                return None
            for r in group["coveredResources"]:
                if r in ps["req"]:
                    flv[r] = chosen
                    usage[r] = ps["req"][r] * ps["count"]
                    plan[(chosen, r)] = plan.get((chosen, r), 0) + usage[r]
        out.append({"name": ps["name"], "count": ps["count"], "flavors": flv, "resourceUsage": {r: qty(r, v) for r, v in usage.items()}})
    for fr, v in plan.items():
        node.add_usage(fr, v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", help="A-B (inclusive)")
    ap.add_argument("--seed", type=int, action="append")
    a = ap.parse_args()
    seeds = list(a.seed or [])
    if a.seeds:
        lo, hi = a.seeds.split("-")
        seeds += list(range(int(lo), int(hi) + 1))
    if not seeds:
        ap.error("--seeds or --seed")
    os.makedirs(a.out, exist_ok=True)
    for s in seeds:
        header = f"# tests/real-kueue/gen/gen.py --seed {s} (fair sharing {'on' if s % 2 == 0 else 'off'})\n"
        with open(os.path.join(a.out, f"case-{s}.yaml"), "w") as f:
            f.write(header + to_yaml(generate(s)))


if __name__ == "__main__":
    sys.exit(main())
