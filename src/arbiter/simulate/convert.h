// `arbiter simulate convert`: public cluster traces to the workload file's arrivals.
//
// borg2019 (Google's Borg 2019 trace, as its BigQuery tables export to JSON Lines):
//   collection_events  {"time", "type", "collection_id", "priority", "collection_type", ...}
//   instance_events    {"time", "type", "collection_id", "instance_index",
//                       "resource_request": {"cpus", "memory"}, ...}
//   Times are microseconds from the trace's start; 0 means before it (such a job arrives at the
//   start) and 2^63-1 after it (left out). Event types 0 SUBMIT, 3 SCHEDULE, 4 EVICT, 5 FAIL,
//   6 FINISH, 7 KILL and 8 LOST start or end an instance's run, taken in time order (an export
//   is not sorted): its last SCHEDULE to the first end after it. A job (collection_type 0) becomes a Job arrival at its
//   SUBMIT, of one pod per instance; an alloc set (collection_type 1) a Deployment. Requests are
//   normalised to the largest machine: `machine_cpu` and `machine_memory` turn them into
//   quantities. The run time is the median over the instances of SCHEDULE to their end (or to
//   the trace's end). The band is the priority's tier: free (<= 99), beb (110-115), mid
//   (116-119), production (120-359), monitoring (>= 360); 100-109 count as beb.
//
// alibaba2018 (Alibaba's cluster-trace-v2018, CSV without headers):
//   batch_task.csv     task_name, instance_num, job_name, task_type, status, start_time, end_time,
//                      plan_cpu, plan_mem
//   container_meta.csv container_id, machine_id, time_stamp, app_du, status, cpu_request,
//                      cpu_limit, mem_size
//   Times are seconds. A task becomes a Job arrival of instance_num pods (plan_cpu 100 = one CPU,
//   plan_mem a percentage of `machine_memory`), band batch; an application (app_du) an online
//   Deployment of its containers from its first time_stamp to the trace's end.
//
// Rows the converter cannot use are errors naming the file, the line and the field; unknown
// JSON fields are ignored (the traces' tables carry many columns the workload does not need).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arbiter/base/status.h"
#include "arbiter/simulate/workload.h"

namespace arbiter::simulate {

struct TraceFile {
  std::string name;  // for messages; the kind of table is told by the name (see ConvertTrace)
  std::string content;
};

struct ConvertOptions {
  int64_t machine_milli_cpu = 4000;       // what a normalised 1.0 of CPU is
  int64_t machine_memory = 16LL << 30;    // what a normalised 1.0 (or 100%) of memory is
};

// `format` is borg2019 or alibaba2018. A file is told apart by its name: collection_events or
// instance_events (borg2019), batch_task or container_meta (alibaba2018).
StatusOr<std::vector<Arrival>> ConvertTrace(const std::string& format, const std::vector<TraceFile>& files,
                                            const ConvertOptions& options);

}  // namespace arbiter::simulate
