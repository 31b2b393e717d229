#!/usr/bin/python3
"""Writes a dump of a cluster as `kubectl get nodes,pods,pdb,priorityclasses -A -o json|yaml`
prints it, with the fields a live API server returns (managedFields, ownerReferences, env,
projected service-account volumes, conditions, container statuses, node images), so that
`arbiter plan`'s readers are measured on what users really feed them.

  scripts/make-cluster-dump.py NODES [--pods-per-node 4] [--format json|yaml] [-o FILE]

Deterministic (a fixed seed): the same arguments write the same bytes. JSON is indented by 4
spaces as kubectl prints it; YAML is written as kubectl writes it (block style, 2 spaces).
Every pod runs bound on a node that fits it, so planning the dump alone changes nothing.
"""
import argparse
import json
import random
import sys

ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"]
IMAGES = [f"registry.example.com/team-{i}/service-{i}:v1.{i}.{i * 3}" for i in range(40)]


def ts(i):
    return f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}Z"


def managed(manager, operation, subresource=None, fields=None):
    entry = {
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields or {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}},
        "manager": manager,
        "operation": operation,
        "time": ts(3),
    }
    if subresource:
        entry["subresource"] = subresource
    return entry


def node(i, rng):
    name = f"ip-10-{i // 250}-{i % 250}-{rng.randrange(1, 250)}.ec2.internal"
    zone = ZONES[i % len(ZONES)]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": f"10.{i // 250}.{i % 250}.10",
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "creationTimestamp": ts(i),
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/instance-type": "m6i.xlarge",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": "m6i.xlarge",
                "topology.kubernetes.io/region": "us-east-1",
                "topology.kubernetes.io/zone": zone,
                "pool": f"pool-{i % 8}",
            },
            "managedFields": [
                managed("kubelet", "Update", fields={"f:metadata": {"f:annotations": {".": {}, "f:alpha.kubernetes.io/provided-node-ip": {}}, "f:labels": {".": {}, "f:kubernetes.io/arch": {}, "f:kubernetes.io/hostname": {}}}}),
                managed("kube-controller-manager", "Update", fields={"f:metadata": {"f:annotations": {"f:node.alpha.kubernetes.io/ttl": {}}}, "f:spec": {"f:podCIDR": {}, "f:podCIDRs": {".": {}, "v:\"10.244.0.0/24\"": {}}}}),
                managed("kubelet", "Update", "status", fields={"f:status": {"f:allocatable": {"f:cpu": {}, "f:memory": {}}, "f:conditions": {"k:{\"type\":\"Ready\"}": {"f:lastHeartbeatTime": {}, "f:lastTransitionTime": {}, "f:message": {}, "f:reason": {}, "f:status": {}}}, "f:images": {}, "f:nodeInfo": {"f:bootID": {}}}}),
            ],
            "name": name,
            "resourceVersion": str(1000 + i),
            "uid": f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-4{rng.getrandbits(12):03x}-8{rng.getrandbits(12):03x}-{rng.getrandbits(48):012x}",
        },
        "spec": {
            "podCIDR": f"10.244.{i % 256}.0/24",
            "podCIDRs": [f"10.244.{i % 256}.0/24"],
            "providerID": f"aws:///{zone}/i-{rng.getrandbits(60):015x}",
        },
        "status": {
            "addresses": [
                {"address": f"10.{i // 250}.{i % 250}.10", "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
                {"address": name, "type": "InternalDNS"},
            ],
            "allocatable": {"cpu": "3920m", "ephemeral-storage": "95491281146", "hugepages-1Gi": "0",
                            "hugepages-2Mi": "0", "memory": "15136204Ki", "pods": "58"},
            "capacity": {"cpu": "4", "ephemeral-storage": "104845292Ki", "hugepages-1Gi": "0",
                         "hugepages-2Mi": "0", "memory": "16123340Ki", "pods": "58"},
            "conditions": [
                {"lastHeartbeatTime": ts(i + 1), "lastTransitionTime": ts(i), "message": m, "reason": r,
                 "status": s, "type": t}
                for t, s, r, m in [
                    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
                ]
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": [{"names": [img, img.split(":")[0] + "@sha256:" + f"{rng.getrandbits(256):064x}"],
                        "sizeBytes": rng.randrange(10_000_000, 900_000_000)}
                       for img in rng.sample(IMAGES, 6)],
            "nodeInfo": {"architecture": "amd64", "bootID": f"{rng.getrandbits(128):032x}",
                         "containerRuntimeVersion": "containerd://1.7.22", "kernelVersion": "6.1.112-122.189.amzn2023.x86_64",
                         "kubeProxyVersion": "v1.32.1", "kubeletVersion": "v1.32.1", "machineID": f"{rng.getrandbits(128):032x}",
                         "operatingSystem": "linux", "osImage": "Amazon Linux 2023.6.20241031", "systemUUID": f"{rng.getrandbits(128):032x}"},
        },
    }


def pod(i, node_name, rng):
    app = f"service-{i % 40}"
    rs = f"{app}-{rng.getrandbits(40):010x}"[:len(app) + 11]
    name = f"{rs}-{rng.getrandbits(25):05x}"
    image = IMAGES[i % 40]
    container = {
        "env": [{"name": f"SETTING_{k}", "value": f"value-{k}-{i % 13}"} for k in range(3)] + [
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
        ],
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "name": "app",
        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        "resources": {"limits": {"memory": "2Gi"}, "requests": {"cpu": "900m", "memory": "1Gi"}},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access-x", "readOnly": True}],
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": ts(i),
            "generateName": rs + "-",
            "labels": {"app": app, "pod-template-hash": rs[len(app) + 1:], "team": f"team-{i % 11}"},
            "managedFields": [
                managed("kube-controller-manager", "Update", fields={"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}}, "f:ownerReferences": {".": {}, "k:{\"uid\":\"x\"}": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:env": {}, "f:image": {}, "f:resources": {}}}}}),
            ],
            "name": name,
            "namespace": f"team-{i % 11}",
            "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True,
                                 "kind": "ReplicaSet", "name": rs, "uid": f"{rng.getrandbits(128):032x}"}],
            "resourceVersion": str(100000 + i),
            "uid": f"{rng.getrandbits(128):032x}",
        },
        "spec": {
            "containers": [container],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True,
            "nodeName": node_name,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 1000 if i % 4 == 0 else 100,
            "priorityClassName": "high" if i % 4 == 0 else "low",
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
            ],
            "volumes": [{"name": "kube-api-access-x", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}},
            ]}}],
        },
        "status": {
            "conditions": [{"lastProbeTime": None, "lastTransitionTime": ts(i), "status": "True", "type": t}
                           for t in ["Initialized", "Ready", "ContainersReady", "PodScheduled"]],
            "containerStatuses": [{"containerID": f"containerd://{rng.getrandbits(256):064x}", "image": image,
                                   "imageID": image.split(":")[0] + f"@sha256:{rng.getrandbits(256):064x}",
                                   "lastState": {}, "name": "app", "ready": True, "restartCount": 0, "started": True,
                                   "state": {"running": {"startedAt": ts(i + 2)}}}],
            "hostIP": "10.0.0.1",
            "phase": "Running",
            "podIP": f"10.244.{i % 256}.{i % 250 + 2}",
            "podIPs": [{"ip": f"10.244.{i % 256}.{i % 250 + 2}"}],
            "qosClass": "Burstable",
            "startTime": ts(i + 1),
        },
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("nodes", type=int)
    ap.add_argument("--pods-per-node", type=int, default=4)
    ap.add_argument("--format", choices=["json", "yaml"], default="json")
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args()
    rng = random.Random(20261202)
    items = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
              "metadata": {"name": n, "resourceVersion": "5", "uid": f"{rng.getrandbits(128):032x}",
                           "creationTimestamp": ts(0)}, "value": v, "preemptionPolicy": "PreemptLowerPriority"}
             for n, v in [("high", 1000), ("low", 100)]]
    items += [{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
               "metadata": {"name": f"service-{k}", "namespace": f"team-{k % 11}", "resourceVersion": "7",
                            "uid": f"{rng.getrandbits(128):032x}", "creationTimestamp": ts(k)},
               "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": f"service-{k}"}}},
               "status": {"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 1, "expectedPods": 0,
                          "observedGeneration": 1}} for k in range(40)]
    nodes = [node(i, rng) for i in range(a.nodes)]
    items += nodes
    k = 0
    for n in nodes:
        for _ in range(a.pods_per_node):
            items.append(pod(k, n["metadata"]["name"], rng))
            k += 1
    dump = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
    out = sys.stdout if a.output == "-" else open(a.output, "w", encoding="utf-8")
    if a.format == "json":
        json.dump(dump, out, indent=4)
        out.write("\n")
    else:
        # Item by item, so that a large dump is never one YAML tree in memory: the same text as
        # dumping the whole List (its keys sorted; a block sequence under a key is not indented).
        import yaml
        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        options = dict(Dumper=dumper, default_flow_style=False, sort_keys=True, width=1 << 20)
        out.write(yaml.dump({"apiVersion": dump["apiVersion"]}, **options))
        out.write("items:\n")
        for item in dump["items"]:
            out.write(yaml.dump([item], **options))
        out.write(yaml.dump({"kind": dump["kind"], "metadata": dump["metadata"]}, **options))
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
