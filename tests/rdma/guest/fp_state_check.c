/* Keeps a value in an AVX register across thousands of system calls and
 * context switches, then checks it. Under UML every system call saves the
 * process's XSAVE area from the host and puts it back
 * (tests/rdma/lab/patches/uml-xstate-host-size.patch): a restore that lost
 * or mixed the upper halves of the ymm registers shows here.
 * Usage: fp_state_check SEED; exit 0 when the sums are right. */
#include <immintrin.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 200000L

__attribute__((target("avx"))) static int check(double seed)
{
    __m256d step = _mm256_set_pd(seed, seed + 1, seed + 2, seed + 3);
    __m256d sum = _mm256_setzero_pd();
    double out[4];

    for (long i = 0; i < ROUNDS; i++) {
        sum = _mm256_add_pd(sum, step);
        if (i % 50 == 0)
            sched_yield();   /* a system call, and a switch when others run */
    }
    _mm256_storeu_pd(out, sum);
    for (int k = 0; k < 4; k++) {
        double want = ROUNDS * (seed + 3 - k);
        if (out[k] != want) {
            printf("lane %d: %f, want %f\n", k, out[k], want);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fp_state_check SEED\n");
        return 2;
    }
    if (!__builtin_cpu_supports("avx")) {
        fprintf(stderr, "fp_state_check: this CPU has no AVX\n");
        return 2;
    }
    return check(atof(argv[1]));
}
