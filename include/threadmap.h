/*
 * threadmap.h -- the public C API of threadmap: measures, models and removes
 * control-flow divergence in CUDA kernels by regrouping threads (Liang et
 * al., TCAD 2016).  This header includes the API's parts, one per stage of
 * the data flow, each including only the stages before it:
 *
 *   kernel.cu --NVRTC--> PTX --parse--> CFG --counter pass--> instrumented PTX
 *     --profiling launch--> BBV[thread][block] --regression--> predictor
 *   new input --> predicted BBVs --> candidate regroupings --> model scores
 *     --> apply the winner (layout transform or redirection) or leave it alone
 *
 * Stable and experimental.  common, instrument, runtime (but its "applying a
 * regrouping" section), model and regroup are the stable API: they change
 * only with the minor version, and then compatibly where possible.
 * latency_tables, pipeline (regroup() and the GPU path with measured
 * feedback, tmap_regrouper), the bench writers of report, and runtime's
 * "applying a regrouping" (layouts, the GPU regroup path, timers) are
 * experimental: they will change while the regroup path settles on the GPU
 * (docs/design.md, docs/regrouper.md).  So are the parts on memory
 * irregularity (docs/memory.md): the manifest's references, the sector
 * model (tmap_sectors_*, tmap_gpu_sectors) and the data layouts
 * (tmap_memre_*, tmap_gpu_memre_*), the first part of a larger piece.
 *
 * Conventions, true of every function of the API: functions that can fail
 * return a tmap_status and take a last argument `tmap_error *err` (may be
 * NULL), whose message then names the problem and the place (file, PTX
 * line, CUDA call); objects come from tmap_X_create/load/... and go with
 * tmap_X_free (which accepts NULL); arrays the library allocates are freed
 * with free(); there is no global mutable state, so distinct objects may be
 * used from distinct threads at once (one object, one thread at a time).
 * Every header compiles as C11 and as C++ (also from a .cu file with nvcc).
 */
#ifndef THREADMAP_H
#define THREADMAP_H

#include "threadmap/common.h"         /* version, errors, BBVs, .npy and BBV files */
#include "threadmap/instrument.h"     /* NVRTC, PTX, CFG, SASS counts, counter pass,
                                         redirection rewrite, safety              */
#include "threadmap/runtime.h"        /* CUDA driver, launches, profiling,
                                         manifests, applying a regrouping         */
#include "threadmap/model.h"          /* latency tables, metrics, scheduling,
                                         regression and predictors, the sector
                                         model of an irregular reference          */
#include "threadmap/latency_tables.h" /* the latency microbenchmarks              */
#include "threadmap/regroup.h"        /* Sorting, Greedy, Greedy-Max, key,
                                         bin-and-deal; plan; memory layouts      */
#include "threadmap/pipeline.h"       /* regroup() before a launch; the measured
                                         pipeline; the evaluation's numbers       */
#include "threadmap/attach.h"         /* profiling an unmodified application      */
#include "threadmap/report.h"         /* the report; the bench writers            */

#endif /* THREADMAP_H */
