#ifndef CUNUMPY_SRC_MPI_MPI_PART_H
#define CUNUMPY_SRC_MPI_MPI_PART_H

/* The interface between cunumpy's core (mpi_merge.cpp) and its MPI part,
   libkp_cunumpy_mpi_*.so: a small library built against one MPI, which the
   core loads (dlopen) only into a process that has that MPI loaded. Plain
   C, no MPI type: the core links no MPI, and the part links no cunumpy: it
   moves the JSON texts of the ranks' reports over MPI_COMM_WORLD, and the
   core merges them with its callbacks. */

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUNUMPY_MPI_PART_VERSION 1
#define CUNUMPY_MPI_PART_EXPORT __attribute__((visibility("default")))

/* What the core hands the part. */
struct cunumpy_mpi_job {
  int version; /* CUNUMPY_MPI_PART_VERSION */
  /* Seconds a rank waits for the others, each step of the tree a quarter
     more (the deadline rule of docs/plugin.md). */
  double deadline_seconds;
  void* context;
  /* This rank and the job's size, as MPI_COMM_WORLD has them: before any
     other call. */
  void (*start)(void* context, int rank, int size);
  /* Adds the JSON report of the ranks below a child to this rank's; 0 when
     it was merged. */
  int (*add)(void* context, const char* text, size_t size);
  /* This rank's report, with what it merged, as JSON text (valid until
     the next call). */
  const char* (*text)(void* context, size_t* size);
  /* The ranks first to last sent nothing in time (or what they sent could
     not be merged). */
  void (*missing)(void* context, int first, int last);
  /* On rank 0, once every child sent or timed out: whether the job's
     budget failed (1) or not (0), and the ranks missing from the job's
     report, `*pairs` pairs of first and last rank (valid until the next
     call). */
  int (*verdict)(void* context, const int** missing, size_t* pairs);
};

/* What the part tells the core. */
struct cunumpy_mpi_outcome {
  int rank;
  int size;
  /* The job's verdict, as rank 0 decided it: 1 failed, 0 not, -1 unknown
     (this rank did not hear it in time). */
  int failed;
  /* This rank's report is in the job's report (rank 0 says which are
     missing); 0 when not, or not known. */
  int included;
  /* Why not, one line ("" when all went well). */
  char message[512];
};

/* The MPI the part was built for, as MPI_Get_library_version begins:
   "Open MPI v4.1.4" or "MPICH Version: 4.0.2". */
CUNUMPY_MPI_PART_EXPORT const char* cunumpy_mpi_part_built_for(void);

/* Merges the ranks' reports over MPI_COMM_WORLD in a tree (log2(size)
   rounds, each rank sends once) within the deadline, and tells every rank
   the job's verdict. Returns 0 when it ran (the outcome says how it went),
   else nonzero with the outcome's message saying why not (MPI not
   initialized, or finalized, or a thread MPI does not allow to call it). */
CUNUMPY_MPI_PART_EXPORT int
cunumpy_mpi_merge(const struct cunumpy_mpi_job* job,
                  struct cunumpy_mpi_outcome* outcome);

#ifdef __cplusplus
}
#endif

#endif
