// An MPI that is none the plugin's MPI part was built for: the three calls
// the plugin makes to find out (tests/plugin/test_mpi_job_report.py, with
// LD_PRELOAD).

#include <cstring>

extern "C" {

int MPI_Initialized(int* flag) {
  *flag = 1;
  return 0;
}

int MPI_Finalized(int* flag) {
  *flag = 0;
  return 0;
}

int MPI_Get_library_version(char* version, int* length) {
  const char text[] = "Fake MPI 1.0, of cunumpy's tests";
  std::memcpy(version, text, sizeof text);
  *length = static_cast<int>(sizeof text - 1);
  return 0;
}

} // extern "C"
