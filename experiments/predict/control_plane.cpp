#include "experiments/predict/control_plane.h"

#include <cstdio>

namespace dtbench::predict {

std::string ControlPlane::assumed() const {
  if (!horovod()) return "framework " + name + ": launches each bucket from its gradient hook, no control plane charged";
  char text[256];
  std::snprintf(text, sizeof text,
                "framework horovod %s: each fused all-reduce waits half its %g ms cycle (the expected wait for the next "
                "cycle), fusion buffer %g MiB; rank 0's negotiation (%s) not charged: no cited per-rank cost",
                release.c_str(), cycleS * 1e3, fusionMb, negotiation.c_str());
  return text;
}

ControlPlane controlPlaneFromJson(const nlohmann::json& row, const JsonFields& f) {
  const std::string where = "framework.";
  if (!row.is_object()) f.fail("framework must be an object, {\"name\": \"ddp\"} or {\"name\": \"horovod\", ...}");
  ControlPlane plane;
  plane.name = f.text(row, "name", where);
  if (plane.name == "ddp") {
    f.onlyKeys(row, {"name", "release"}, where);
    if (row.contains("release")) plane.release = f.text(row, "release", where);
    return plane;
  }
  if (plane.name != "horovod") f.fail("framework.name must be ddp or horovod, not '" + plane.name + "'");
  f.onlyKeys(row, {"name", "release", "cycle_ms", "fusion_mb", "negotiation"}, where);
  for (const char* key : {"release", "cycle_ms", "fusion_mb", "negotiation"})
    if (!row.contains(key)) f.fail(where + key + " is missing (a horovod framework names all of release, cycle_ms, "
                                              "fusion_mb and negotiation)");
  plane.release = f.text(row, "release", where);
  // At most a minute's cycle and a terabyte's buffer: beyond any setting.
  plane.cycleS = f.number(row, "cycle_ms", where, false, 6e4) * 1e-3;
  plane.fusionMb = f.number(row, "fusion_mb", where, false, 1e6);
  plane.negotiation = f.text(row, "negotiation", where);
  if (plane.negotiation != "rank0")
    f.fail("framework.negotiation must be rank0 (Horovod's coordinator), not '" + plane.negotiation + "'");
  return plane;
}

nlohmann::json toJson(const ControlPlane& plane) {
  nlohmann::json json = {{"name", plane.name}};
  if (!plane.release.empty()) json["release"] = plane.release;
  if (plane.horovod()) {
    json["cycle_ms"] = plane.cycleS * 1e3;
    json["fusion_mb"] = plane.fusionMb;
    json["negotiation"] = plane.negotiation;
  }
  return json;
}

}  // namespace dtbench::predict
