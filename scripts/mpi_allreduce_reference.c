/* Raw MPI all-reduce reference for `dtbench allreduce` (scripts/bench_allreduce.sh compiles it with
 * mpicc). float32 sum, in place; same sweep and column definitions as dtbench allreduce:
 * time_us = mean of `iters` all-reduces after `warmup`, max over ranks; algbw = bytes / time (GB/s,
 * 10^9); busbw = algbw * 2(N-1)/N. CALL is `allreduce` (blocking MPI_Allreduce, the default) or
 * `iallreduce` (MPI_Iallreduce completed by polling MPI_Test, the call dtbench's native mpi makes so
 * that it can overlap and give up at a deadline).
 * Usage: mpi_allreduce_reference MIN_BYTES MAX_BYTES FACTOR WARMUP ITERS [CALL] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nonBlocking = 0;

static void allreduce(float* data, int count) {
  if (!nonBlocking) {
    MPI_Allreduce(MPI_IN_PLACE, data, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    return;
  }
  MPI_Request request;
  MPI_Iallreduce(MPI_IN_PLACE, data, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request);
  int done = 0;
  while (!done) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if ((argc != 6 && argc != 7) ||
      (argc == 7 && strcmp(argv[6], "allreduce") != 0 && strcmp(argv[6], "iallreduce") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: %s MIN_BYTES MAX_BYTES FACTOR WARMUP ITERS [allreduce|iallreduce]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  nonBlocking = argc == 7 && strcmp(argv[6], "iallreduce") == 0;
  const long min = atol(argv[1]), max = atol(argv[2]), factor = atol(argv[3]);
  const int warmup = atoi(argv[4]), iters = atoi(argv[5]);
  float* data = malloc((size_t)max);
  if (rank == 0) printf("size,count,time_us,algbw_gbps,busbw_gbps\n");
  for (long bytes = min; bytes <= max; bytes *= factor) {
    const int count = (int)(bytes / 4);
    for (int i = 0; i < count; ++i) data[i] = 1.0f;
    for (int i = 0; i < warmup; ++i) allreduce(data, count);
    MPI_Barrier(MPI_COMM_WORLD);
    double seconds = 0;
    for (int i = 0; i < iters; ++i) {
      for (int j = 0; j < count; ++j) data[j] = 1.0f;
      const double start = MPI_Wtime();
      allreduce(data, count);
      seconds += MPI_Wtime() - start;
    }
    double mean = seconds / iters * 1e6, worst = 0;
    MPI_Allreduce(&mean, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (data[0] != (float)size) {
      fprintf(stderr, "rank %d: wrong sum %f\n", rank, (double)data[0]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const double algbw = (double)bytes / (worst * 1e-6) / 1e9;
    if (rank == 0) printf("%ld,%d,%.1f,%.4f,%.4f\n", bytes, count, worst, algbw, algbw * 2.0 * (size - 1) / size);
  }
  free(data);
  MPI_Finalize();
  return 0;
}
