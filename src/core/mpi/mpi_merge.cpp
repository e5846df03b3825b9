#include "mpi_merge.hpp"

#include <dlfcn.h>
#include <unistd.h>
#include <vector>

#include "mpi/mpi_part.h"
#include "mpi_parts.hpp" // generated: the parts built, and their MPI
#include "report/job.hpp"

namespace cunumpy::Impl {
namespace {

using MpiFlag = int (*)(int*);

/// The process' MPI_Initialized: the program's (linked, or loaded
/// RTLD_GLOBAL), else that of an MPI library a part was built for, loaded
/// locally (mpi4py with MPICH).
MpiFlag find_initialized() {
  if (void* symbol = ::dlsym(RTLD_DEFAULT, "MPI_Initialized"))
    return reinterpret_cast<MpiFlag>(symbol);
  for (const MpiPart& part : mpi_parts)
    if (part.file == nullptr)
      continue;
    else if (void* library =
                 ::dlopen(part.mpi_library, RTLD_NOLOAD | RTLD_LAZY))
      if (void* symbol = ::dlsym(library, "MPI_Initialized"))
        return reinterpret_cast<MpiFlag>(symbol);
  return nullptr;
}

/// The first line of MPI_Get_library_version of the MPI that defines
/// `initialized`.
std::string library_version(MpiFlag initialized) {
  Dl_info info{};
  void* library = nullptr;
  if (::dladdr(reinterpret_cast<void*>(initialized), &info) != 0 &&
      info.dli_fname != nullptr)
    library = ::dlopen(info.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
  void* symbol = library != nullptr
                     ? ::dlsym(library, "MPI_Get_library_version")
                     : ::dlsym(RTLD_DEFAULT, "MPI_Get_library_version");
  std::string text = "an MPI";
  if (symbol != nullptr) {
    std::vector<char> version(8192, '\0');
    int length = 0;
    reinterpret_cast<int (*)(char*, int*)>(symbol)(version.data(), &length);
    text.assign(version.data());
    text = text.substr(0, text.find_first_of("\n,"));
  }
  if (info.dli_fname != nullptr)
    text += " (" + std::string(info.dli_fname) + ")";
  return text;
}

/// Where the part `file` is: beside the library that holds this code
/// (libcunumpy_core, or the plugin or program a static core is linked
/// into), else in the install's library directory.
std::string part_path(const char* file) {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&part_path), &info) != 0 &&
      info.dli_fname != nullptr) {
    const std::string library = info.dli_fname;
    const auto slash = library.rfind('/');
    const std::string beside =
        (slash == std::string::npos ? std::string(".")
                                    : library.substr(0, slash)) +
        "/" + file;
    if (::access(beside.c_str(), F_OK) == 0)
      return beside;
  }
  return std::string(mpi_parts_installed_in) + "/" + file;
}

/// What the part calls back: this rank's report, with the children's
/// merged into it.
struct Context {
  Report job;
  std::string text;
  std::vector<int> missing;

  static void start(void* self, int rank, int size) noexcept {
    auto& context = *static_cast<Context*>(self);
    context.job.rank = rank;
    context.job.rank_known = true;
    context.job.size = size;
    try {
      start_job(context.job);
    } catch (...) {
    }
  }

  static int add(void* self, const char* text, std::size_t size) noexcept {
    try {
      auto& context = *static_cast<Context*>(self);
      merge_reports(context.job,
                    read_json_report(std::string_view(text, size)));
      return 0;
    } catch (...) {
      return 1;
    }
  }
  static const char* json(void* self, std::size_t* size) noexcept {
    auto& context = *static_cast<Context*>(self);
    try {
      context.text = format_json(context.job);
    } catch (...) {
      context.text.clear();
    }
    *size = context.text.size();
    return context.text.data();
  }
  static void note_missing(void*, int, int) noexcept {
    // The job's report names them: their ranks are not in it.
  }
  static int verdict(void* self, const int** missing,
                     std::size_t* pairs) noexcept {
    auto& context = *static_cast<Context*>(self);
    context.missing.clear();
    try {
      const RankSet missing = missing_ranks(context.job);
      for (const auto& [first, last] : missing.ranges()) {
        context.missing.push_back(first);
        context.missing.push_back(last);
      }
    } catch (...) {
    }
    *missing = context.missing.data();
    *pairs = context.missing.size() / 2;
    return context.job.failed() ? 1 : 0;
  }
};

} // namespace

JobMerge merge_over_mpi(const Report& report, int deadline) {
  JobMerge merge;
  try {
    const MpiFlag initialized = find_initialized();
    if (initialized == nullptr)
      return merge; // no MPI in the process
    int flag = 0;
    initialized(&flag);
    if (flag == 0)
      return merge; // MPI loaded, not used
    merge.mpi = true;
    if (deadline <= 0) {
      merge.message = "CUNUMPY_MPI_DEADLINE=0 turns the merge over MPI off";
      return merge;
    }
    // The part whose MPI library is the process' own.
    const MpiPart* found = nullptr;
    for (const MpiPart& part : mpi_parts)
      if (part.file == nullptr)
        continue;
      else if (void* library =
                   ::dlopen(part.mpi_library, RTLD_NOLOAD | RTLD_LAZY))
        if (::dlsym(library, "MPI_Initialized") ==
            reinterpret_cast<void*>(initialized))
          found = &part;
    if (found == nullptr) {
      std::string built;
      for (const MpiPart& part : mpi_parts)
        if (part.file != nullptr)
          built += (built.empty() ? "" : ", ") + std::string(part.mpi_library) +
                   " (" + part.built_for + ")";
      merge.message = "the program's MPI, " + library_version(initialized) +
                      ", is not one cunumpy's MPI part was built for (" +
                      (built.empty() ? std::string("none: no MPI was found "
                                                   "when cunumpy was built")
                                     : built) +
                      "): the ranks' reports are not merged";
      return merge;
    }
    const std::string path = part_path(found->file);
    void* part = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    const auto run = part == nullptr
                         ? nullptr
                         : reinterpret_cast<decltype(&cunumpy_mpi_merge)>(
                               ::dlsym(part, "cunumpy_mpi_merge"));
    if (run == nullptr) {
      const char* error = ::dlerror();
      merge.message = "cunumpy's MPI part " + path + " cannot be loaded (" +
                      (error != nullptr ? error : "no cunumpy_mpi_merge") +
                      "): the ranks' reports are not merged";
      return merge;
    }
    Context context;
    context.job = report;
    cunumpy_mpi_job job{CUNUMPY_MPI_PART_VERSION,
                        static_cast<double>(deadline),
                        &context,
                        &Context::start,
                        &Context::add,
                        &Context::json,
                        &Context::note_missing,
                        &Context::verdict};
    cunumpy_mpi_outcome outcome{};
    const int status = run(&job, &outcome);
    merge.message = outcome.message;
    if (status != 0)
      return merge;
    merge.ran = true;
    merge.rank = outcome.rank;
    merge.size = outcome.size;
    if (outcome.failed >= 0)
      merge.failed = outcome.failed != 0;
    merge.included = outcome.included != 0;
    if (outcome.rank == 0)
      merge.job = std::move(context.job);
  } catch (const std::exception& error) {
    merge.message = std::string("internal error merging the ranks' reports (") +
                    error.what() + ")";
  }
  return merge;
}

} // namespace cunumpy::Impl
