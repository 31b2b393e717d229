// PersistentVolumeClaim, PersistentVolume, StorageClass and CSINode, and a pod's volumes.
#include "arbiter/manifest/object_decoder.h"

#include <algorithm>

namespace arbiter::manifest::internal {

namespace {

constexpr std::string_view kAccessModes[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"};

}  // namespace

std::vector<std::string> ObjectDecoder::DecodeAccessModes(const Node& n, const std::string& path) {
  std::vector<std::string> modes = d_.StringList(n, path);
  for (size_t i = 0; i < modes.size(); ++i) {
    if (std::find(std::begin(kAccessModes), std::end(kAccessModes), modes[i]) == std::end(kAccessModes)) {
      d_.Error(Idx(path, i), "unsupported value \"" + modes[i] +
                                 "\" (want ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod)");
    }
  }
  return modes;
}

int64_t ObjectDecoder::DecodeStorage(const Node& n, const std::string& path) {
  if (!D::Present(n)) return 0;
  auto q = d_.Quantity(n, path);
  if (!q) return 0;
  if (q->milli() < 0 || q->value() > model::kMaxResourceAmount) {
    d_.Error(path, "must be between 0 and 2^53 bytes, not " + q->ToString());
    return 0;
  }
  return q->value();
}

void ObjectDecoder::DecodePodVolumes(const Node& spec, const std::string& pod_name, model::Pod& pod) {
  Node vols = D::Child(spec, "volumes");
  if (!D::Present(vols) || !d_.ExpectSeq(vols, "spec.volumes")) return;
  size_t i = 0;
  for (const auto& v : vols) {
    const std::string p = Idx("spec.volumes", i++);
    if (!d_.ExpectMap(v, p)) continue;
    const std::string name = d_.String(D::Child(v, "name"), p + ".name").value_or("");
    if (name.empty()) {
      d_.Error(p + ".name", "is required");
      continue;
    }
    Node pvc = D::Child(v, "persistentVolumeClaim");
    Node eph = D::Child(v, "ephemeral");
    if (D::Present(pvc) && d_.ExpectMap(pvc, p + ".persistentVolumeClaim")) {
      model::PodVolume pv;
      pv.name = name;
      pv.claim_name = d_.String(D::Child(pvc, "claimName"), p + ".persistentVolumeClaim.claimName").value_or("");
      if (pv.claim_name.empty()) {
        d_.Error(p + ".persistentVolumeClaim.claimName", "is required");
        continue;
      }
      pv.read_only = d_.Bool(D::Child(pvc, "readOnly"), p + ".persistentVolumeClaim.readOnly").value_or(false);
      pod.volumes.push_back(std::move(pv));
    } else if (D::Present(eph) && d_.ExpectMap(eph, p + ".ephemeral")) {
      // The ephemeral volume controller names the claim it makes <pod>-<volume>.
      model::PodVolume pv;
      pv.name = name;
      pv.claim_name = pod_name + "-" + name;
      pv.ephemeral = true;
      pod.volumes.push_back(std::move(pv));
    }
  }
}

void ObjectDecoder::DecodePvc(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/true);
  model::PersistentVolumeClaim c;
  c.ns = m.ns;
  c.name = m.name;
  c.deleting = m.deletion.has_value();
  Node ann = D::Child(D::Child(root, "metadata"), "annotations");
  if (D::Present(ann)) {
    model::LabelMap a(d_.StringMap(ann, "metadata.annotations"));
    c.bind_completed = a.Find(model::kAnnBindCompleted) != nullptr;
    if (const std::string* n = a.Find(model::kAnnSelectedNode)) c.selected_node = *n;
  }
  Node spec = D::Child(root, "spec");
  if (!D::Present(spec)) {
    d_.Error("spec.accessModes", "is required");
  } else if (d_.ExpectMap(spec, "spec")) {
    if (Node sc = D::Child(spec, "storageClassName"); D::Present(sc)) {
      c.storage_class_name = d_.String(sc, "spec.storageClassName").value_or("");
    }
    c.volume_name = d_.String(D::Child(spec, "volumeName"), "spec.volumeName").value_or("");
    c.access_modes = DecodeAccessModes(D::Child(spec, "accessModes"), "spec.accessModes");
    if (c.access_modes.empty()) d_.Error("spec.accessModes", "at least 1 access mode is required");
    if (c.HasAccessMode(model::kReadWriteOncePod) && c.access_modes.size() > 1) {
      d_.Error("spec.accessModes", "may not use ReadWriteOncePod with other access modes");
    }
    c.request = DecodeStorage(D::Child(D::Child(D::Child(spec, "resources"), "requests"), "storage"),
                              "spec.resources.requests.storage");
    c.selector = DecodeLabelSelector(D::Child(spec, "selector"), "spec.selector");
    if (!D::Present(D::Child(spec, "selector"))) c.selector.reset();
    c.volume_mode = d_.String(D::Child(spec, "volumeMode"), "spec.volumeMode").value_or("Filesystem");
  }
  Node status = D::Child(root, "status");
  if (D::Present(status) && d_.ExpectMap(status, "status")) {
    c.phase = d_.String(D::Child(status, "phase"), "status.phase").value_or("Pending");
  }
  out_.pvcs.push_back({std::move(c), std::move(origin)});
}

void ObjectDecoder::DecodePv(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/false);
  model::PersistentVolume v;
  v.name = m.name;
  v.labels = m.labels;
  v.deleting = m.deletion.has_value();
  Node spec = D::Child(root, "spec");
  if (!D::Present(spec)) {
    d_.Error("spec.capacity", "is required");
  } else if (d_.ExpectMap(spec, "spec")) {
    v.capacity = DecodeStorage(D::Child(D::Child(spec, "capacity"), "storage"), "spec.capacity.storage");
    v.access_modes = DecodeAccessModes(D::Child(spec, "accessModes"), "spec.accessModes");
    v.storage_class_name = d_.String(D::Child(spec, "storageClassName"), "spec.storageClassName").value_or("");
    v.volume_mode = d_.String(D::Child(spec, "volumeMode"), "spec.volumeMode").value_or("Filesystem");
    Node req = D::Child(D::Child(spec, "nodeAffinity"), "required");
    if (D::Present(req) && d_.ExpectMap(req, "spec.nodeAffinity.required")) {
      model::NodeSelector sel;
      Node terms = D::Child(req, "nodeSelectorTerms");
      if (D::Present(terms) && d_.ExpectSeq(terms, "spec.nodeAffinity.required.nodeSelectorTerms")) {
        size_t i = 0;
        for (const auto& t : terms) {
          if (auto term = DecodeNodeSelectorTerm(t, Idx("spec.nodeAffinity.required.nodeSelectorTerms", i++))) {
            sel.terms.push_back(std::move(*term));
          }
        }
      }
      v.node_affinity = std::move(sel);
    }
    Node ref = D::Child(spec, "claimRef");
    if (D::Present(ref) && d_.ExpectMap(ref, "spec.claimRef")) {
      model::ClaimReference r;
      r.ns = d_.String(D::Child(ref, "namespace"), "spec.claimRef.namespace").value_or("default");
      r.name = d_.String(D::Child(ref, "name"), "spec.claimRef.name").value_or("");
      r.uid = d_.String(D::Child(ref, "uid"), "spec.claimRef.uid").value_or("");
      if (!r.name.empty()) v.claim_ref = std::move(r);
    }
    Node csi = D::Child(spec, "csi");
    if (D::Present(csi) && d_.ExpectMap(csi, "spec.csi")) {
      v.csi_driver = d_.String(D::Child(csi, "driver"), "spec.csi.driver").value_or("");
      v.csi_volume_handle = d_.String(D::Child(csi, "volumeHandle"), "spec.csi.volumeHandle").value_or("");
    }
  }
  Node status = D::Child(root, "status");
  if (D::Present(status) && d_.ExpectMap(status, "status")) {
    v.phase = d_.String(D::Child(status, "phase"), "status.phase").value_or("Available");
  }
  out_.pvs.push_back({std::move(v), std::move(origin)});
}

void ObjectDecoder::DecodeStorageClass(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/false);
  model::StorageClass sc;
  sc.name = m.name;
  Node ann = D::Child(D::Child(root, "metadata"), "annotations");
  if (D::Present(ann)) {
    model::LabelMap a(d_.StringMap(ann, "metadata.annotations"));
    const std::string* def = a.Find("storageclass.kubernetes.io/is-default-class");
    sc.is_default = def != nullptr && *def == "true";
  }
  sc.provisioner = d_.String(D::Child(root, "provisioner"), "provisioner").value_or("");
  if (sc.provisioner.empty()) d_.Error("provisioner", "is required");
  // The API server defaults volumeBindingMode to Immediate.
  const std::string mode = d_.String(D::Child(root, "volumeBindingMode"), "volumeBindingMode").value_or("Immediate");
  if (mode == "WaitForFirstConsumer") {
    sc.binding_mode = model::VolumeBindingMode::kWaitForFirstConsumer;
  } else if (mode != "Immediate") {
    d_.Error("volumeBindingMode", "unsupported value \"" + mode + "\" (want Immediate or WaitForFirstConsumer)");
  }
  Node topo = D::Child(root, "allowedTopologies");
  if (D::Present(topo) && d_.ExpectSeq(topo, "allowedTopologies")) {
    size_t i = 0;
    for (const auto& t : topo) {
      const std::string p = Idx("allowedTopologies", i++);
      if (!d_.ExpectMap(t, p)) continue;
      model::TopologySelectorTerm term;
      Node exprs = D::Child(t, "matchLabelExpressions");
      if (D::Present(exprs) && d_.ExpectSeq(exprs, p + ".matchLabelExpressions")) {
        size_t j = 0;
        for (const auto& e : exprs) {
          const std::string ep = Idx(p + ".matchLabelExpressions", j++);
          if (!d_.ExpectMap(e, ep)) continue;
          const std::string key = d_.String(D::Child(e, "key"), ep + ".key").value_or("");
          if (key.empty()) {
            d_.Error(ep + ".key", "is required");
            continue;
          }
          term.match_label_expressions.emplace_back(key, d_.StringList(D::Child(e, "values"), ep + ".values"));
        }
      }
      sc.allowed_topologies.push_back(std::move(term));
    }
  }
  out_.storage_classes.push_back({std::move(sc), std::move(origin)});
}

void ObjectDecoder::DecodeCsiNode(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/false);
  model::CsiNode n;
  n.name = m.name;
  Node drivers = D::Child(D::Child(root, "spec"), "drivers");
  if (D::Present(drivers) && d_.ExpectSeq(drivers, "spec.drivers")) {
    size_t i = 0;
    for (const auto& d : drivers) {
      const std::string p = Idx("spec.drivers", i++);
      if (!d_.ExpectMap(d, p)) continue;
      model::CsiNodeDriver driver;
      driver.name = d_.String(D::Child(d, "name"), p + ".name").value_or("");
      if (driver.name.empty()) {
        d_.Error(p + ".name", "is required");
        continue;
      }
      if (auto c = d_.Int(D::Child(D::Child(d, "allocatable"), "count"), p + ".allocatable.count", 0, INT32_MAX)) {
        driver.allocatable_count = *c;
      }
      n.drivers.push_back(std::move(driver));
    }
  }
  out_.csi_nodes.push_back({std::move(n), std::move(origin)});
}

}  // namespace arbiter::manifest::internal
