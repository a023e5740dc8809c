/* Shared helpers of the PMPI test programs: element access for the types the
 * tests use, the exact inputs and oracle, a digest of every result, and the
 * watchdog. Plain C, written for this project: the programs must be ordinary
 * MPI programs that know nothing of earlybird. */
#ifndef PMPI_CHECK_H
#define PMPI_CHECK_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  MPI_Datatype type;
  const char* name;
  size_t size;
  int is_float; /* only MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX apply */
} TypeInfo;

typedef struct {
  MPI_Op op;
  const char* name;
} OpInfo;

/* Any hang becomes a failure: SIGALRM's default action ends the process. */
static void start_watchdog(unsigned seconds) { alarm(seconds); }

static void set_elem(const TypeInfo* t, void* buf, size_t i, long long v) {
  if (t->type == MPI_INT) ((int*)buf)[i] = (int)v;
  else if (t->type == MPI_DOUBLE) ((double*)buf)[i] = (double)v;
  else if (t->type == MPI_FLOAT) ((float*)buf)[i] = (float)v;
  else if (t->type == MPI_LONG_LONG) ((long long*)buf)[i] = v;
  else if (t->type == MPI_UNSIGNED_CHAR) ((unsigned char*)buf)[i] = (unsigned char)v;
  else if (t->type == MPI_SHORT) ((short*)buf)[i] = (short)v;
  else if (t->type == MPI_UNSIGNED) ((unsigned*)buf)[i] = (unsigned)v;
  else ((unsigned char*)buf)[i] = (unsigned char)v; /* MPI_BYTE, MPI_CHAR */
}

static long long get_elem(const TypeInfo* t, const void* buf, size_t i) {
  if (t->type == MPI_INT) return ((const int*)buf)[i];
  if (t->type == MPI_DOUBLE) return (long long)((const double*)buf)[i];
  if (t->type == MPI_FLOAT) return (long long)((const float*)buf)[i];
  if (t->type == MPI_LONG_LONG) return ((const long long*)buf)[i];
  if (t->type == MPI_UNSIGNED_CHAR) return ((const unsigned char*)buf)[i];
  if (t->type == MPI_SHORT) return ((const short*)buf)[i];
  if (t->type == MPI_UNSIGNED) return ((const unsigned*)buf)[i];
  return ((const unsigned char*)buf)[i];
}

/* Rank r's input element i for operator `op`: small integers, so every
 * result is exact in every type (products stay within 2^P). */
static long long input_value(MPI_Op op, int r, size_t i) {
  if (op == MPI_PROD) return 1 + (long long)((r + i) % 2);
  if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) return (long long)((r * 3 + i) % 4 == 0 ? 0 : (r + i) % 3);
  return (long long)((r * 7 + i * 3) % 11);
}

static long long combine(MPI_Op op, long long a, long long b) {
  if (op == MPI_SUM) return a + b;
  if (op == MPI_PROD) return a * b;
  if (op == MPI_MIN) return a < b ? a : b;
  if (op == MPI_MAX) return a > b ? a : b;
  if (op == MPI_LAND) return (a && b) ? 1 : 0;
  if (op == MPI_LOR) return (a || b) ? 1 : 0;
  if (op == MPI_LXOR) return (!a != !b) ? 1 : 0;
  if (op == MPI_BAND) return a & b;
  if (op == MPI_BOR) return a | b;
  return a ^ b; /* MPI_BXOR */
}

/* The reduction over ranks first..first+count-1 of input element i, as `t`
 * would hold it (wrapped like the type wraps). */
static long long oracle(const TypeInfo* t, MPI_Op op, int first, int count, size_t i) {
  long long acc = input_value(op, first, i);
  for (int r = first + 1; r < first + count; ++r) acc = combine(op, acc, input_value(op, r, i));
  unsigned char scratch[16];
  set_elem(t, scratch, 0, acc);
  return get_elem(t, scratch, 0);
}

/* Per-case digests (FNV-1a of the result bytes); rank 0 prints them all. */
#define MAX_CASES 4096
static uint64_t digests[MAX_CASES];
static char case_names[MAX_CASES][96];
static int case_count = 0;
static int failures = 0;

static void record(const char* name, const void* buf, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  for (size_t k = 0; k < bytes; ++k) h = (h ^ ((const unsigned char*)buf)[k]) * 1099511628211ull;
  if (case_count >= MAX_CASES) {
    fprintf(stderr, "too many cases\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  snprintf(case_names[case_count], sizeof case_names[0], "%s", name);
  digests[case_count++] = h;
}

static void fail(const char* name, size_t i, long long got, long long want) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (failures++ < 20)
    fprintf(stderr, "FAIL rank %d: %s: element %zu is %lld, expected %lld\n", rank, name, i, got, want);
}

/* Prints every rank's digest of every case from rank 0, in rank order. */
static void print_digests(void) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  uint64_t* all = rank == 0 ? malloc(sizeof(uint64_t) * (size_t)case_count * (size_t)size) : NULL;
  MPI_Gather(digests, case_count, MPI_UINT64_T, all, case_count, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int c = 0; c < case_count; ++c)
      for (int r = 0; r < size; ++r)
        printf("%s rank %d %016llx\n", case_names[c], r, (unsigned long long)all[(size_t)r * (size_t)case_count + (size_t)c]);
    free(all);
  }
}

#endif
