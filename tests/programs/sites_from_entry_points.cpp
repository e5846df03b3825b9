// Drives libkp_cunumpy through its C entry points as Kokkos does, with no
// Kokkos at all, and checks that the JSON report names this file and the
// line of every copy: the call-site capture and the line lookup, on any
// architecture the core builds for (scripts/test-aarch64 runs it under
// qemu-aarch64). Copies are made from named functions, a loop, two lines
// of one function and a std::thread's lambda.
//
//   test_sites_from_entry_points <libkp_cunumpy.so> <report.json>
//   test_sites_from_entry_points <libkp_cunumpy.so> <report.json> --time <n>
//
// With --time, <n> copies more from one line, and the processor time a
// copy took on average printed: with CUNUMPY_BACKTRACE=0 and without, the
// difference is what the capture of call sites costs.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>

#include "tools/kokkosp.hpp"

namespace {

namespace kokkosp = cunumpy::Impl::kokkosp;

template <class Function>
Function entry_point(void* library, const char* name) {
  auto* function = reinterpret_cast<Function>(::dlsym(library, name));
  if (function == nullptr) {
    std::fprintf(stderr, "sites_from_entry_points: %s is not exported\n", name);
    std::exit(2);
  }
  return function;
}

kokkosp::SpaceHandle space(const char* name) {
  kokkosp::SpaceHandle handle{};
  std::strncpy(handle.name, name, sizeof handle.name - 1);
  return handle;
}

/// The plugin's entry points this program calls, as Kokkos finds them.
struct Plugin {
  explicit Plugin(void* library)
      : init(entry_point<kokkosp::InitFunction>(library,
                                                "kokkosp_init_library")),
        finalize(entry_point<kokkosp::FinalizeFunction>(
            library, "kokkosp_finalize_library")),
        allocate(entry_point<kokkosp::AllocateDataFunction>(
            library, "kokkosp_allocate_data")),
        deallocate(entry_point<kokkosp::DeallocateDataFunction>(
            library, "kokkosp_deallocate_data")),
        push(entry_point<kokkosp::PushFunction>(library,
                                                "kokkosp_push_profile_region")),
        pop(entry_point<kokkosp::PopFunction>(library,
                                              "kokkosp_pop_profile_region")),
        begin_copy(entry_point<kokkosp::BeginDeepCopyFunction>(
            library, "kokkosp_begin_deep_copy")),
        end_copy(entry_point<kokkosp::EndDeepCopyFunction>(
            library, "kokkosp_end_deep_copy")) {}

  kokkosp::InitFunction init;
  kokkosp::FinalizeFunction finalize;
  kokkosp::AllocateDataFunction allocate;
  kokkosp::DeallocateDataFunction deallocate;
  kokkosp::PushFunction push;
  kokkosp::PopFunction pop;
  kokkosp::BeginDeepCopyFunction begin_copy;
  kokkosp::EndDeepCopyFunction end_copy;
};

const Plugin* kp = nullptr;
const kokkosp::SpaceHandle cuda = space("Cuda");
const kokkosp::SpaceHandle host = space("Host");
char host_data[4096];
char device_data[4096];

/// The lines that made copies, and how many each made.
std::map<int, int> expected;

// Each copy's begin is on the line after the one that notes it: the line
// its site must name.

__attribute__((noinline)) void upload_state() {
  expected[__LINE__ + 1] += 1;
  kp->begin_copy(cuda, "state", device_data, host, "state", host_data, 800);
  kp->end_copy();
}

__attribute__((noinline)) void download_result() {
  expected[__LINE__ + 1] += 1;
  kp->begin_copy(host, "result", host_data, cuda, "result", device_data, 64);
  kp->end_copy();
}

/// Two lines of one function: two sites.
__attribute__((noinline)) void exchange_halo() {
  expected[__LINE__ + 1] += 1;
  kp->begin_copy(host, "halo", host_data, cuda, "halo", device_data, 32);
  kp->end_copy();
  expected[__LINE__ + 1] += 1;
  kp->begin_copy(cuda, "halo", device_data, host, "halo", host_data, 32);
  kp->end_copy();
}

/// One line, called again and again inside a region.
__attribute__((noinline)) void time_step(int steps) {
  expected[__LINE__ + 3] += steps;
  for (int step = 0; step < steps; ++step) {
    kp->push("step");
    kp->begin_copy(host, "norm", host_data, cuda, "norm", device_data, 8);
    kp->end_copy();
    kp->pop();
  }
}

__attribute__((noinline)) void copy_from_a_thread() {
  std::thread worker([] {
    expected[__LINE__ + 1] += 1;
    kp->begin_copy(host, "worker", host_data, cuda, "worker", device_data, 16);
    kp->end_copy();
  });
  worker.join();
}

/// The calling thread's processor time in nanoseconds: what other
/// processes take of the machine is not counted.
double thread_nanoseconds() {
  timespec time{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time);
  return double(time.tv_sec) * 1e9 + double(time.tv_nsec);
}

/// `copies` copies from one line; the nanoseconds one took.
__attribute__((noinline)) double timed_copies(int copies) {
  expected[__LINE__ + 3] += copies;
  const double start = thread_nanoseconds();
  for (int copy = 0; copy < copies; ++copy) {
    kp->begin_copy(cuda, "timed", device_data, host, "timed", host_data, 8);
    kp->end_copy();
  }
  return (thread_nanoseconds() - start) / copies;
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() &&
         text.compare(text.size() - end.size(), end.size(), end) == 0;
}

/// Checks that the report's sites are this file's expected lines, each with
/// its count of copies; returns the number of failures.
int check_sites(const nlohmann::json& report) {
  int failures = 0;
  const auto fail = [&failures](const std::string& what) {
    std::fprintf(stderr, "sites_from_entry_points: FAILED: %s\n", what.c_str());
    ++failures;
  };
  if (!report["device"]["present"].get<bool>())
    fail("the report has no device: " + report["device"].dump());
  int copies = 0;
  for (const auto& [line, count] : expected)
    copies += count;
  const nlohmann::json& total = report["total"];
  if (total["transfers"].get<int>() != copies)
    fail(std::to_string(copies) + " copies made, the report counts " +
         total["transfers"].dump());
  std::map<int, int> found;
  for (const nlohmann::json& site : total["top_sites"]) {
    const std::string file = site["file"].get<std::string>();
    const int line = site["line"].get<int>();
    const int count = site["count"].get<int>();
    const std::string text = site["site"].get<std::string>() + " (in " +
                             site["function"].get<std::string>() + ")";
    if (!ends_with(file, __FILE__)) {
      fail(std::to_string(count) + " copies at " + text + ", not in " +
           __FILE__ + " (unresolved, or another frame taken for the site)");
      continue;
    }
    if (expected.count(line) == 0)
      fail(std::to_string(count) + " copies at " + text +
           ", a line that made none");
    found[line] += count;
  }
  for (const auto& [line, count] : expected)
    if (found[line] != count)
      fail(std::string(__FILE__) + ":" + std::to_string(line) + " made " +
           std::to_string(count) + " copies, the report has " +
           std::to_string(found[line]));
  return failures;
}

} // namespace

int main(int argc, char* argv[]) {
  if (argc != 3 && !(argc == 5 && std::strcmp(argv[3], "--time") == 0)) {
    std::fprintf(stderr,
                 "usage: %s <libkp_cunumpy.so> <report.json> [--time <n>]\n",
                 argv[0]);
    return 2;
  }
  const std::string report_path = argv[2];
  const int timed = argc == 5 ? std::atoi(argv[4]) : 0;
  ::unlink(report_path.c_str()); // an old report must not pass
  ::setenv("CUNUMPY_REPORT", report_path.c_str(), 1);
  void* library = ::dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) {
    std::fprintf(stderr, "sites_from_entry_points: %s\n", ::dlerror());
    return 2;
  }
  const Plugin plugin(library);
  kp = &plugin;

  plugin.init(0, kokkosp::interface_4_5, 0, nullptr);
  // A device allocation first, as a program with a device makes.
  plugin.allocate(cuda, "state", device_data, sizeof device_data);
  upload_state();
  time_step(3);
  exchange_halo();
  copy_from_a_thread();
  download_result();
  if (timed > 0) {
    timed_copies(1); // the first walk, and the site's first lookup
    std::printf("%.1f ns per copy\n", timed_copies(timed));
  }
  plugin.deallocate(cuda, "state", device_data, sizeof device_data);
  plugin.finalize();

  std::ifstream file(report_path);
  if (!file) {
    std::fprintf(stderr, "sites_from_entry_points: no report %s\n",
                 report_path.c_str());
    return 1;
  }
  const nlohmann::json report = nlohmann::json::parse(file, nullptr, false);
  if (report.is_discarded()) {
    std::fprintf(stderr, "sites_from_entry_points: %s is not JSON\n",
                 report_path.c_str());
    return 1;
  }
  const char* depth = std::getenv("CUNUMPY_BACKTRACE");
  if (depth != nullptr && std::strcmp(depth, "0") == 0) {
    std::printf("sites_from_entry_points: CUNUMPY_BACKTRACE=0, no sites to "
                "check\n");
    return 0;
  }
  if (check_sites(report) != 0)
    return 1;
  std::printf("sites_from_entry_points: every site resolves (%zu lines)\n",
              expected.size());
  return 0;
}
