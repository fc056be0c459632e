/* Raw MPI_Allreduce reference for `dtbench allreduce` (scripts/bench_allreduce.sh compiles it with
 * mpicc). float32 sum, in place, blocking; same sweep and column definitions as dtbench allreduce:
 * time_us = mean of `iters` all-reduces after `warmup`, max over ranks; algbw = bytes / time (GB/s,
 * 10^9); busbw = algbw * 2(N-1)/N. Usage: mpi_allreduce_reference MIN_BYTES MAX_BYTES FACTOR WARMUP ITERS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 6) {
    if (rank == 0) fprintf(stderr, "usage: %s MIN_BYTES MAX_BYTES FACTOR WARMUP ITERS\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const long min = atol(argv[1]), max = atol(argv[2]), factor = atol(argv[3]);
  const int warmup = atoi(argv[4]), iters = atoi(argv[5]);
  float* data = malloc((size_t)max);
  if (rank == 0) printf("size,count,time_us,algbw_gbps,busbw_gbps\n");
  for (long bytes = min; bytes <= max; bytes *= factor) {
    const int count = (int)(bytes / 4);
    for (int i = 0; i < count; ++i) data[i] = 1.0f;
    for (int i = 0; i < warmup; ++i) MPI_Allreduce(MPI_IN_PLACE, data, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double seconds = 0;
    for (int i = 0; i < iters; ++i) {
      for (int j = 0; j < count; ++j) data[j] = 1.0f;
      const double start = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, data, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
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
