/*
 * test_gpu_memirr_apps.c -- bench_memirr_apps on small inputs of each app
 * (MD, BFS, power-law SpMV and CG, the permuted stencil and CG): every
 * layout's output matches the CPU reference (the program exits 0 only
 * then), a layout is chosen and the targets printed for each, sharing and
 * swapping (built on the GPU) ran, the locality layout (RCM on the GPU for
 * BFS and the matrices) on all six and the symmetric renumbering on the
 * four matrix runs (SpMV and CG, power-law and stencil) with their outputs
 * the CPU's.  Times are not checked.
 */
#include "tests/testutil.h"

static void small_inputs(void **state)
{
    tmap_cuda_close(test_gpu_open());
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/bench_memirr_apps --md 3000 --bfs 11 --spmv 3000 --stencil 10 "
             "--cg-iters 30 --reps 3 > %s/memirr_apps.out 2>&1", TMAP_BINARY_DIR, TMAP_BINARY_DIR);
    int rc = system(cmd);
    if (rc) {
        snprintf(cmd, sizeof cmd, "cat %s/memirr_apps.out", TMAP_BINARY_DIR);
        (void)system(cmd);
        fail_msg("bench_memirr_apps exited %d", rc);
    }
    snprintf(cmd, sizeof cmd, "test $(grep -c 'measured choice:' %s/memirr_apps.out) = 6 && "
             "test $(grep -c '  targets' %s/memirr_apps.out) = 12 && grep -q '^  share ' "
             "%s/memirr_apps.out && grep -q '^  swap ' %s/memirr_apps.out && "
             "test $(grep -c '^  symmetric .* yes$' %s/memirr_apps.out) = 4 && "
             "test $(grep -c '^  locality .* yes$' %s/memirr_apps.out) = 6", TMAP_BINARY_DIR,
             TMAP_BINARY_DIR, TMAP_BINARY_DIR, TMAP_BINARY_DIR, TMAP_BINARY_DIR,
             TMAP_BINARY_DIR);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_inputs),
    };
    return test_gpu_main(tests, NULL, NULL);
}
