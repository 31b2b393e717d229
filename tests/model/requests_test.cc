// Effective pod requests, as Kubernetes computes them from containers, init containers
// (one-shot and restartable sidecars) and overhead.
#include <gtest/gtest.h>

#include "arbiter/model/objects.h"

namespace arbiter::model {
namespace {

Resources Cpu(int64_t milli, int64_t mem = 0) {
  Resources r;
  r.milli_cpu = milli;
  r.memory = mem;
  return r;
}

TEST(EffectivePodRequests, SumsAppContainers) {
  auto r = EffectivePodRequests({{Cpu(100), false, false}, {Cpu(250), false, false}}, {});
  EXPECT_EQ(r.milli_cpu, 350);
}

TEST(EffectivePodRequests, LargestInitContainerWinsWhenBiggerThanTheApps) {
  auto r = EffectivePodRequests({{Cpu(100, 10), false, false}, {Cpu(500, 5), true, false}, {Cpu(300, 50), true, false}}, {});
  EXPECT_EQ(r.milli_cpu, 500);  // the init container
  EXPECT_EQ(r.memory, 50);      // per resource, independently
}

TEST(EffectivePodRequests, SidecarsRunBesideLaterInitContainersAndTheApps) {
  // sidecar 200m, then a one-shot init of 500m (runs next to the sidecar: 700m), then apps 300m
  // (+ sidecar = 500m). The peak is the init phase.
  auto r = EffectivePodRequests(
      {{Cpu(200), true, true}, {Cpu(500), true, false}, {Cpu(300), false, false}}, {});
  EXPECT_EQ(r.milli_cpu, 700);
  // A one-shot init that runs before the sidecar starts does not add to it.
  auto r2 = EffectivePodRequests(
      {{Cpu(500), true, false}, {Cpu(200), true, true}, {Cpu(300), false, false}}, {});
  EXPECT_EQ(r2.milli_cpu, 500);
}

TEST(EffectivePodRequests, OverheadIsAddedOnTop) {
  auto r = EffectivePodRequests({{Cpu(100), false, false}, {Cpu(400), true, false}}, Cpu(50));
  EXPECT_EQ(r.milli_cpu, 450);
}

TEST(Resources, ExtendedResourcesAddAndCompareByName) {
  Resources a;
  a.SetScalar("nvidia.com/gpu", 1);
  Resources b;
  b.SetScalar("example.com/fpga", 2);
  b.SetScalar("nvidia.com/gpu", 3);
  a.Add(b);
  EXPECT_EQ(a.Scalar("nvidia.com/gpu"), 4);
  EXPECT_EQ(a.Scalar("example.com/fpga"), 2);
  ASSERT_EQ(a.scalars.size(), 2u);
  EXPECT_EQ(a.scalars[0].first, "example.com/fpga");  // sorted
  a.Sub(b);
  EXPECT_EQ(a.Scalar("nvidia.com/gpu"), 1);
}

}  // namespace
}  // namespace arbiter::model
