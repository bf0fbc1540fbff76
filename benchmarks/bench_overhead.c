/*
 * bench_overhead.c -- profiling overhead of the BBV counter pass: for each
 * manifest, the median time of the original kernel and of its instrumented
 * version over the same launch, and their ratio (target: median <= 1.5x).
 *
 *   bench_overhead [--reps N] [--warmup N] [--sample S] [MANIFEST.json...]
 *
 * Without manifests it runs every .json file in benchmarks/manifests.
 */
#include <getopt.h>

#include "benchmarks/benchutil.h"
#include "common/base.h"

typedef struct row {
    char name[64];
    size_t threads, blocks;
    tmap_kernel_stats orig, inst;
    float ms_orig, ms_inst;
} row;

static tmap_status time_kernel(tmap_kernel *k, tmap_manifest *m, tmap_cuda *c, int warmup,
                               int reps, float *median, tmap_error *err)
{
    tmap_launch l;
    float *ms = calloc((size_t)reps, sizeof *ms);
    if (!ms)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    tmap_status st = tmap_manifest_bind(m, c, &l, err); /* same inputs for both */
    if (st == TMAP_OK)
        st = tmap_kernel_time(k, &l, warmup, reps, ms, err);
    if (st == TMAP_OK)
        *median = bench_median(ms, reps);
    free(ms);
    return st;
}

static tmap_status measure(const char *path, tmap_cuda *c, const char *arch, int warmup,
                           int reps, uint32_t sample, row *r, tmap_error *err)
{
    tmap_manifest *m = NULL;
    char *ptx = NULL, *entry = NULL;
    tmap_kernel *orig = NULL;
    tmap_counting *inst = NULL;
    tmap_launch l;
    tmap_status st = tmap_manifest_load(path, &m, err);
    if (st == TMAP_OK) st = tmap_manifest_ptx(m, arch, &ptx, &entry, err);
    if (st == TMAP_OK) st = tmap_manifest_generate(m, 1, err);
    if (st == TMAP_OK) st = tmap_manifest_bind(m, c, &l, err);
    if (st == TMAP_OK) st = tmap_kernel_load(c, ptx, entry, &orig, err);
    if (st == TMAP_OK) st = tmap_counting_load(c, ptx, entry, &l, sample, &inst, err);
    if (st == TMAP_OK) st = tmap_kernel_stats_get(orig, &l, &r->orig, err);
    if (st == TMAP_OK) st = tmap_kernel_stats_get(tmap_counting_kernel(inst), &l, &r->inst, err);
    if (st == TMAP_OK) st = time_kernel(orig, m, c, warmup, reps, &r->ms_orig, err);
    if (st == TMAP_OK)
        st = time_kernel(tmap_counting_kernel(inst), m, c, warmup, reps, &r->ms_inst, err);
    if (st == TMAP_OK) {
        snprintf(r->name, sizeof r->name, "%s", tmap_manifest_name(m));
        r->threads = tmap_launch_threads(&l);
        r->blocks = tmap_counting_cfg(inst)->nblocks;
    }
    tmap_counting_free(inst);
    tmap_kernel_free(orig);
    tmap_manifest_free(m);
    free(ptx);
    free(entry);
    return st;
}

int main(int argc, char **argv)
{
    int reps = 20, warmup = 3;
    unsigned sample = 1;
    static const struct option opts[] = {{"reps", 1, 0, 'r'}, {"warmup", 1, 0, 'w'},
                                         {"sample", 1, 0, 's'}, {"help", 0, 0, 'h'}, {0}};
    for (int o; (o = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        if (o == 'r') reps = atoi(optarg);
        else if (o == 'w') warmup = atoi(optarg);
        else if (o == 's') sample = (unsigned)atoi(optarg);
        else {
            printf("usage: bench_overhead [--reps N] [--warmup N] [--sample S] [MANIFEST...]\n");
            return o == 'h' ? 0 : 2;
        }
    }
    if (reps < 1 || warmup < 0 || sample < 1) {
        fprintf(stderr, "bench_overhead: --reps >= 1, --warmup >= 0, --sample >= 1\n");
        return 2;
    }
    tmap_error err = {0};
    tmap_cuda *c = NULL;
    tmap_device_info d;
    if (tmap_cuda_open(0, &c, &err) != TMAP_OK || tmap_cuda_info(c, &d, &err) != TMAP_OK) {
        fprintf(stderr, "bench_overhead: %s\n", err.message);
        return 3;
    }
    char arch[32];
    tmap_cuda_arch(&d, arch, sizeof arch);
    size_t n;
    char **files = bench_manifests(argc, argv, optind, TMAP_SOURCE_DIR "/benchmarks/manifests", &n);
    printf("# Profiling overhead of the BBV counter pass\n\n");
    bench_banner(stdout, &d, "- ");
    printf("- timing: CUDA events, %d warm-up launches, median of %d, sample every %u-th block\n\n",
           warmup, reps, sample);
    printf("| kernel | threads | BBV blocks | regs orig -> instr | blocks/SM orig -> instr "
           "| original us | instrumented us | overhead |\n|---|---|---|---|---|---|---|---|\n");
    double *ratios = calloc(n ? n : 1, sizeof *ratios);
    size_t ok = 0;
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        row r = {0};
        if (measure(files[i], c, arch, warmup, reps, sample, &r, &err) != TMAP_OK) {
            printf("| %s | failed: %s |\n", files[i], err.message);
            failed = 1;
            continue;
        }
        ratios[ok++] = r.ms_inst / r.ms_orig;
        printf("| %s | %zu | %zu | %d -> %d | %d -> %d | %.1f | %.1f | %.2fx |\n", r.name,
               r.threads, r.blocks, r.orig.registers, r.inst.registers, r.orig.blocks_per_sm,
               r.inst.blocks_per_sm, r.ms_orig * 1e3, r.ms_inst * 1e3, ratios[ok - 1]);
        fflush(stdout);
    }
    if (ok) {
        double med = tmap_median(ratios, ok); /* sorts ratios */
        printf("\nmedian overhead over %zu kernels: %.2fx (target <= 1.5x: %s); range %.2fx to %.2fx\n",
               ok, med, med <= 1.5 ? "met" : "MISSED", ratios[0], ratios[ok - 1]);
    }
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    free(ratios);
    tmap_cuda_close(c);
    return failed;
}
