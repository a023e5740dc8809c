/* Every collective the PMPI library intercepts, on several communicators,
 * types, operators, counts, roots, in place and not, MPI_Iallreduce with each
 * completion call, and calls the library must pass through (a user-defined
 * operator, derived datatypes, an inter-communicator). Each result is checked
 * against an exact oracle; rank 0 prints a digest of every rank's result of
 * every case, so runs with and without the library can be compared.
 * Usage: pmpi_collectives [quick|alloc_mem]   (quick: a few calls, for the env
 * tests; alloc_mem: every case's buffers from MPI_Alloc_mem) */
#include "pmpi_check.h"

static int use_alloc_mem = 0; /* main's alloc_mem argument */

/* A case's buffer: malloc's, or MPI_Alloc_mem's. */
static void* buffer_alloc(size_t bytes) {
  if (!use_alloc_mem) return malloc(bytes);
  void* p = NULL;
  if (MPI_Alloc_mem((MPI_Aint)(bytes ? bytes : 1), MPI_INFO_NULL, &p) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 4);
  return p;
}

static void buffer_free(void* p) {
  if (use_alloc_mem)
    MPI_Free_mem(p);
  else
    free(p);
}

static const TypeInfo kInt = {MPI_INT, "int", sizeof(int), 0};
static const TypeInfo kDouble = {MPI_DOUBLE, "double", sizeof(double), 1};
static const TypeInfo kFloat = {MPI_FLOAT, "float", sizeof(float), 1};
static const TypeInfo kLongLong = {MPI_LONG_LONG, "long_long", sizeof(long long), 0};
static const TypeInfo kUChar = {MPI_UNSIGNED_CHAR, "uchar", 1, 0};
static const TypeInfo kShort = {MPI_SHORT, "short", sizeof(short), 0};
static const TypeInfo kUnsigned = {MPI_UNSIGNED, "unsigned", sizeof(unsigned), 0};
static const TypeInfo kByte = {MPI_BYTE, "byte", 1, 0};
static const TypeInfo kChar = {MPI_CHAR, "char", 1, 0};

static const OpInfo kAllOps[] = {{MPI_SUM, "sum"},   {MPI_PROD, "prod"}, {MPI_MIN, "min"}, {MPI_MAX, "max"},
                                 {MPI_LAND, "land"}, {MPI_LOR, "lor"},   {MPI_LXOR, "lxor"}, {MPI_BAND, "band"},
                                 {MPI_BOR, "bor"},   {MPI_BXOR, "bxor"}};
static const size_t kCounts[] = {1, 1000, 9000};

typedef struct {
  MPI_Comm comm;
  const char* name;
  int rank, size;
} Comm;

static Comm describe(MPI_Comm comm, const char* name) {
  Comm c = {comm, name, 0, 1};
  MPI_Comm_rank(comm, &c.rank);
  MPI_Comm_size(comm, &c.size);
  return c;
}

static void fill_input(const TypeInfo* t, MPI_Op op, int rank, void* buf, size_t n) {
  for (size_t i = 0; i < n; ++i) set_elem(t, buf, i, input_value(op, rank, i));
}

static void check_reduced(const char* name, const TypeInfo* t, MPI_Op op, int ranks, const void* buf, size_t n,
                          size_t first_elem) {
  for (size_t i = 0; i < n; ++i) {
    const long long want = oracle(t, op, 0, ranks, first_elem + i), got = get_elem(t, buf, i);
    if (got != want) return fail(name, i, got, want);
  }
}

static void allreduce_case(const Comm* c, const TypeInfo* t, const OpInfo* o, size_t n, int in_place) {
  char name[96];
  snprintf(name, sizeof name, "allreduce %s %s %s n=%zu inplace=%d", c->name, t->name, o->name, n, in_place);
  void* in = buffer_alloc(n * t->size);
  void* out = buffer_alloc(n * t->size);
  fill_input(t, o->op, c->rank, in_place ? out : in, n);
  MPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, (int)n, t->type, o->op, c->comm);
  check_reduced(name, t, o->op, c->size, out, n, 0);
  record(name, out, n * t->size);
  buffer_free(in);
  buffer_free(out);
}

static void reduce_case(const Comm* c, const TypeInfo* t, const OpInfo* o, size_t n, int root, int in_place) {
  char name[96];
  snprintf(name, sizeof name, "reduce %s %s %s n=%zu root=%d inplace=%d", c->name, t->name, o->name, n, root, in_place);
  const int at_root = c->rank == root;
  void* in = buffer_alloc(n * t->size);
  void* out = calloc(n, t->size);
  const int use_in_place = in_place && at_root;
  fill_input(t, o->op, c->rank, use_in_place ? out : in, n);
  MPI_Reduce(use_in_place ? MPI_IN_PLACE : in, at_root ? out : NULL, (int)n, t->type, o->op, root, c->comm);
  if (at_root) check_reduced(name, t, o->op, c->size, out, n, 0);
  record(name, at_root ? out : in, n * t->size);
  buffer_free(in);
  buffer_free(out);
}

static void bcast_case(const Comm* c, const TypeInfo* t, size_t n, int root) {
  char name[96];
  snprintf(name, sizeof name, "bcast %s %s n=%zu root=%d", c->name, t->name, n, root);
  void* buf = buffer_alloc(n * t->size);
  fill_input(t, MPI_SUM, c->rank == root ? 100 + root : c->rank, buf, n);
  MPI_Bcast(buf, (int)n, t->type, root, c->comm);
  for (size_t i = 0; i < n; ++i) {
    const long long want = oracle(t, MPI_SUM, 100 + root, 1, i), got = get_elem(t, buf, i);
    if (got != want) {
      fail(name, i, got, want);
      break;
    }
  }
  record(name, buf, n * t->size);
  buffer_free(buf);
}

static void allgather_case(const Comm* c, const TypeInfo* t, size_t n, int in_place) {
  char name[96];
  snprintf(name, sizeof name, "allgather %s %s n=%zu inplace=%d", c->name, t->name, n, in_place);
  const size_t total = n * (size_t)c->size;
  void* in = buffer_alloc(n * t->size);
  char* out = buffer_alloc(total * t->size);
  fill_input(t, MPI_SUM, c->rank, in_place ? out + (size_t)c->rank * n * t->size : in, n);
  MPI_Allgather(in_place ? MPI_IN_PLACE : in, (int)n, t->type, out, (int)n, t->type, c->comm);
  for (size_t i = 0; i < total; ++i) {
    const long long want = oracle(t, MPI_SUM, (int)(i / n), 1, i % n), got = get_elem(t, out, i);
    if (got != want) {
      fail(name, i, got, want);
      break;
    }
  }
  record(name, out, total * t->size);
  buffer_free(in);
  buffer_free(out);
}

/* Rank r's input is element j of block b = input_value(op, r, b * n + j). */
static void reduce_scatter_case(const Comm* c, const TypeInfo* t, const OpInfo* o, size_t n, int in_place) {
  char name[96];
  snprintf(name, sizeof name, "reduce_scatter_block %s %s %s n=%zu inplace=%d", c->name, t->name, o->name, n, in_place);
  const size_t total = n * (size_t)c->size;
  void* in = buffer_alloc(total * t->size);
  void* out = buffer_alloc((in_place ? total : n) * t->size);
  fill_input(t, o->op, c->rank, in_place ? out : in, total);
  MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : in, out, (int)n, t->type, o->op, c->comm);
  check_reduced(name, t, o->op, c->size, out, n, (size_t)c->rank * n);
  record(name, out, n * t->size);
  buffer_free(in);
  buffer_free(out);
}

static void reductions(const Comm* c) {
  const TypeInfo* types[] = {&kInt, &kDouble, &kFloat, &kLongLong, &kUChar, &kShort, &kUnsigned};
  for (size_t k = 0; k < sizeof kCounts / sizeof kCounts[0]; ++k)
    for (int in_place = 0; in_place < 2; ++in_place) {
      for (size_t o = 0; o < sizeof kAllOps / sizeof kAllOps[0]; ++o)
        allreduce_case(c, &kInt, &kAllOps[o], kCounts[k], in_place);
      for (size_t t = 1; t < sizeof types / sizeof types[0]; ++t)
        for (size_t o = 0; o < 4; ++o)
          if (o != 1 || types[t]->size >= 2) allreduce_case(c, types[t], &kAllOps[o], kCounts[k], in_place);
      allreduce_case(c, &kUChar, &kAllOps[8], kCounts[k], in_place);  /* bor */
      allreduce_case(c, &kLongLong, &kAllOps[6], kCounts[k], in_place); /* lxor */
      const int roots[] = {0, c->size - 1};
      for (int r = 0; r < 2; ++r) {
        reduce_case(c, &kInt, &kAllOps[0], kCounts[k], roots[r], in_place);
        reduce_case(c, &kInt, &kAllOps[3], kCounts[k], roots[r], in_place);
        reduce_case(c, &kDouble, &kAllOps[0], kCounts[k], roots[r], in_place);
        reduce_case(c, &kUChar, &kAllOps[9], kCounts[k], roots[r], in_place);
      }
    }
}

static void data_movement(const Comm* c) {
  const TypeInfo* types[] = {&kInt, &kDouble, &kChar, &kByte};
  const size_t counts[] = {1, 100, 3000};
  for (size_t k = 0; k < 3; ++k)
    for (size_t t = 0; t < 4; ++t) {
      const int roots[] = {0, c->size - 1, c->size / 2};
      for (int r = 0; r < 3; ++r) bcast_case(c, types[t], counts[k] * 3, roots[r]);
      for (int in_place = 0; in_place < 2; ++in_place) allgather_case(c, types[t], counts[k], in_place);
    }
  for (size_t k = 0; k < 3; ++k)
    for (int in_place = 0; in_place < 2; ++in_place) {
      reduce_scatter_case(c, &kInt, &kAllOps[0], counts[k], in_place);
      reduce_scatter_case(c, &kInt, &kAllOps[3], counts[k], in_place);
      reduce_scatter_case(c, &kInt, &kAllOps[9], counts[k], in_place);
      reduce_scatter_case(c, &kDouble, &kAllOps[0], counts[k], in_place);
      reduce_scatter_case(c, &kFloat, &kAllOps[2], counts[k], in_place);
    }
}

/* MPI_Iallreduce completed by every completion call. */
enum Completion { kWait, kTest, kWaitall, kTestall, kWaitany, kTestany, kWaitsome, kCompletions };
static const char* kCompletionNames[] = {"wait", "test", "waitall", "testall", "waitany", "testany", "waitsome"};

static void complete(MPI_Request* requests, int n, enum Completion how) {
  int done = 0, flag = 0, index = 0, outcount = 0, indices[8];
  switch (how) {
    case kWait: for (int k = 0; k < n; ++k) MPI_Wait(&requests[k], MPI_STATUS_IGNORE); break;
    case kTest:
      for (int k = 0; k < n; ++k)
        for (flag = 0; !flag;) MPI_Test(&requests[k], &flag, MPI_STATUS_IGNORE);
      break;
    case kWaitall: MPI_Waitall(n, requests, MPI_STATUSES_IGNORE); break;
    case kTestall: for (flag = 0; !flag;) MPI_Testall(n, requests, &flag, MPI_STATUSES_IGNORE); break;
    case kWaitany: for (done = 0; done < n; ++done) MPI_Waitany(n, requests, &index, MPI_STATUS_IGNORE); break;
    case kTestany:
      while (done < n) {
        MPI_Testany(n, requests, &index, &flag, MPI_STATUS_IGNORE);
        if (flag && index != MPI_UNDEFINED) ++done;
      }
      break;
    case kWaitsome:
      while (done < n) {
        MPI_Waitsome(n, requests, &outcount, indices, MPI_STATUSES_IGNORE);
        done += outcount;
      }
      break;
    default: break;
  }
  for (int k = 0; k < n; ++k)
    if (requests[k] != MPI_REQUEST_NULL) fail("request not freed after completion", (size_t)k, 1, 0);
}

static void iallreduce_cases(const Comm* c) {
  enum { kRequests = 3 };
  for (int how = 0; how < kCompletions; ++how) {
    const size_t n = 1000u << how % 4;
    const TypeInfo* types[kRequests] = {&kInt, &kDouble, &kInt};
    void* bufs[kRequests][2];
    MPI_Request requests[kRequests];
    for (int k = 0; k < kRequests; ++k) {
      bufs[k][0] = buffer_alloc(n * types[k]->size);
      bufs[k][1] = buffer_alloc(n * types[k]->size);
      const int in_place = k == 2;
      fill_input(types[k], MPI_SUM, c->rank, in_place ? bufs[k][1] : bufs[k][0], n);
      MPI_Iallreduce(in_place ? MPI_IN_PLACE : bufs[k][0], bufs[k][1], (int)n, types[k]->type, MPI_SUM, c->comm,
                     &requests[k]);
    }
    complete(requests, kRequests, (enum Completion)how);
    for (int k = 0; k < kRequests; ++k) {
      char name[96];
      snprintf(name, sizeof name, "iallreduce %s %s n=%zu request=%d completed-by=%s", c->name, types[k]->name, n, k,
               kCompletionNames[how]);
      check_reduced(name, types[k], MPI_SUM, c->size, bufs[k][1], n, 0);
      record(name, bufs[k][1], n * types[k]->size);
      buffer_free(bufs[k][0]);
      buffer_free(bufs[k][1]);
    }
  }
}

/* A user-defined sum over MPI_INT or pairs of ints (Open MPI accepts no
 * predefined operator on a derived datatype). */
static void int_sum(void* in, void* inout, int* len, MPI_Datatype* type) {
  const int ints = *type == MPI_INT ? *len : 2 * *len;
  for (int i = 0; i < ints; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

/* What the library must hand to MPI unchanged: a user-defined operator,
 * derived datatypes (contiguous pairs and a strided vector). */
static void pass_through_cases(const Comm* c) {
  enum { n = 4000 };
  static int in[2 * n], out[2 * n];
  MPI_Op user_sum;
  MPI_Op_create(int_sum, 1, &user_sum);
  fill_input(&kInt, MPI_SUM, c->rank, in, n);
  MPI_Allreduce(in, out, n, MPI_INT, user_sum, c->comm);
  check_reduced("allreduce user-op", &kInt, MPI_SUM, c->size, out, n, 0);
  record("allreduce user-op", out, sizeof(int) * n);

  MPI_Datatype pair, strided;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Allreduce(in, out, n / 2, pair, user_sum, c->comm);
  check_reduced("allreduce derived pair", &kInt, MPI_SUM, c->size, out, n, 0);
  record("allreduce derived pair", out, sizeof(int) * n);
  MPI_Op_free(&user_sum);
  fill_input(&kInt, MPI_SUM, c->rank, in, 2);
  MPI_Allgather(in, 1, pair, out, 1, pair, c->comm);
  for (int r = 0; r < c->size; ++r)
    for (size_t i = 0; i < 2; ++i)
      if (out[2 * r + (int)i] != input_value(MPI_SUM, r, i)) fail("allgather derived pair", i, out[2 * r + (int)i], input_value(MPI_SUM, r, i));
  record("allgather derived pair", out, sizeof(int) * 2 * (size_t)c->size);
  MPI_Type_free(&pair);

  MPI_Type_vector(n, 1, 2, MPI_INT, &strided); /* every other int of `in` */
  MPI_Type_commit(&strided);
  for (size_t i = 0; i < 2 * n; ++i) in[i] = c->rank != 0 ? 7 : i % 2 ? -1 : (int)i;
  MPI_Bcast(in, 1, strided, 0, c->comm);
  for (size_t i = 0; i < n; ++i)
    if (in[2 * i] != (int)(2 * i)) {
      fail("bcast derived strided", i, in[2 * i], (long long)(2 * i));
      break;
    }
  record("bcast derived strided", in, sizeof in);
  MPI_Type_free(&strided);
}

/* An inter-communicator between the even and odd ranks of `world`: MPI_Allreduce
 * there reduces the other group's inputs, which MPI (not earlybird) does. */
static void intercomm_case(const Comm* world) {
  if (world->size < 2) return;
  MPI_Comm half, inter;
  const int color = world->rank % 2;
  MPI_Comm_split(world->comm, color, world->rank, &half);
  MPI_Intercomm_create(half, 0, world->comm, 1 - color, 7, &inter);
  enum { n = 2000 };
  static int in[n], out[n];
  for (size_t i = 0; i < n; ++i) in[i] = (int)(world->rank * 1000 + i);
  MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, inter);
  for (size_t i = 0; i < n; ++i) {
    long long want = 0;
    for (int r = 1 - color; r < world->size; r += 2) want += r * 1000 + (long long)i;
    if (out[i] != want) {
      fail("allreduce intercomm", i, out[i], want);
      break;
    }
  }
  record("allreduce intercomm", out, sizeof out);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

/* Communicators created and freed repeatedly: the library's per-communicator
 * state must be released by MPI_Comm_free each time. */
static void churn_cases(const Comm* world) {
  for (int round = 0; round < 4; ++round) {
    MPI_Comm part;
    MPI_Comm_split(world->comm, world->rank % (round + 1), world->rank, &part);
    const Comm c = describe(part, round % 2 ? "churn-odd" : "churn-even");
    allreduce_case(&c, &kInt, &kAllOps[0], 5000, round % 2);
    MPI_Comm_free(&part);
  }
}

int main(int argc, char** argv) {
  start_watchdog(170);
  MPI_Init(&argc, &argv);
  const int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
  use_alloc_mem = argc > 1 && strcmp(argv[1], "alloc_mem") == 0;
  const Comm world = describe(MPI_COMM_WORLD, "world");
  if (quick) {
    allreduce_case(&world, &kInt, &kAllOps[0], 1000, 0);
    allreduce_case(&world, &kDouble, &kAllOps[0], 100000, 1);
    bcast_case(&world, &kInt, 20000, 0);
  } else {
    MPI_Comm split_comm, dup_comm;
    /* Reversed order within each half: comm ranks differ from world ranks. */
    MPI_Comm_split(MPI_COMM_WORLD, world.rank % 2, -world.rank, &split_comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup_comm);
    const Comm comms[] = {world, describe(split_comm, world.rank % 2 ? "split-odd" : "split-even"),
                          describe(dup_comm, "dup")};
    for (int k = 0; k < 3; ++k) {
      reductions(&comms[k]);
      data_movement(&comms[k]);
      iallreduce_cases(&comms[k]);
    }
    pass_through_cases(&world);
    intercomm_case(&world);
    churn_cases(&world);
    MPI_Comm_free(&dup_comm);
    MPI_Comm_free(&split_comm);
  }
  print_digests();
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (world.rank == 0) fprintf(stderr, "pmpi_collectives: %d cases per rank, %d failures\n", case_count, all_failures);
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
