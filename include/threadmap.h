/*
 * threadmap.h -- the public C API of threadmap: measures, models and removes
 * control-flow divergence in CUDA kernels by regrouping threads (Liang et
 * al., TCAD 2016).  This header includes the API's parts, one per stage of
 * the data flow:
 *
 *   kernel.cu --NVRTC--> PTX --parse--> CFG --counter pass--> instrumented PTX
 *     --profiling launch--> BBV[thread][block] --regression--> predictor
 *   new input --> predicted BBVs --> candidate regroupings --> model scores
 *     --> apply the winner (layout transform or redirection) or leave it alone
 *
 * Conventions, true of every function of the API: functions that can fail
 * return a tmap_status and take a last argument `tmap_error *err` (may be
 * NULL), whose message then names the problem and the place (file, PTX
 * line, CUDA call); objects come from tmap_X_create/load/... and go with
 * tmap_X_free (which accepts NULL); arrays the library allocates are freed
 * with free(); there is no global mutable state, so distinct objects may be
 * used from distinct threads at once (one object, one thread at a time).
 */
#ifndef THREADMAP_H
#define THREADMAP_H

#include "threadmap/core.h"     /* errors, BBVs, NVRTC, PTX, CFG, counter pass,
                                   redirection, safety, CUDA driver, profiling,
                                   manifests, layout transform               */
#include "threadmap/model.h"    /* .npy and BBV files, latency tables, metrics,
                                   scheduling, regression and predictors     */
#include "threadmap/regroup.h"  /* Sorting, Greedy, Greedy-Max, sort by key  */
#include "threadmap/plan.h"     /* choosing a regrouping before a launch     */
#include "threadmap/evaluate.h" /* regroup() before a launch; the measured
                                   pipeline on a manifest's input           */
#include "threadmap/report.h"   /* the performance-estimate report           */

#endif /* THREADMAP_H */
