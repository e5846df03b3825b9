// cunumpy's MPI part: the ranks' reports merged over MPI_COMM_WORLD in a
// binomial tree (in round k a rank whose bit k is set sends its report, with
// what it merged, to the rank 2^k below it: log2(P) rounds, one send per
// rank, as Caliper's aggregate_over_mpi), then the job's verdict sent down
// the same tree. Only point-to-point calls, nonblocking, polled against a
// clock: a rank that never comes (no plugin, dead, stuck before
// Kokkos::finalize) costs its subtree's place in the job's report and the
// deadline, never a hang. No collective call: a rank without the plugin
// would match it with the program's next one.

#include "mpi_part.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <mpi.h>
#include <string>
#include <thread>
#include <vector>

namespace {

// Tags of cunumpy's messages on MPI_COMM_WORLD. A report (tens of KiB)
// goes only to a parent that asked for it: a child says it is ready (an
// empty message), the parent answers go, and the child sends. A send to a
// rank that never receives (no plugin, gone) would stay pending, and some
// MPIs (MPICH) wait for it in MPI_Finalize: only empty and small messages
// (the verdict, at most `max_missing_pairs` ranges) go unasked, which MPI
// sends at once.
// Each merge of the process (TransferBudget::job_report, job_check, the
// plugin's at Kokkos::finalize: every rank makes the same ones, in the same
// order) has tags of its own, 16 merges in turn, so a message a rank sent
// too late for one merge is never taken for one of the next.
int tag_ready = 0x6374;
int tag_report = 0x6375;
int tag_verdict = 0x6376;
int tag_go = 0x6377;
int merges = 0;
constexpr std::size_t max_missing_pairs = 400;

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Sleeps a little more each idle round (oversubscribed ranks share cores
/// with those they wait for), at most a millisecond.
class Backoff {
public:
  void idle() {
    if (rounds_ < 50) {
      ++rounds_;
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(
        std::chrono::microseconds(std::min(1000, 10 * (rounds_++ - 49))));
  }
  void busy() { rounds_ = 0; }

private:
  int rounds_ = 0;
};

struct Child {
  int rank;
  int last; ///< the last rank of its subtree
  double deadline;
  bool done = false;
  bool ready = false; ///< it said so, and was told to send
  bool receiving = false;
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<char> data;
};

void say(cunumpy_mpi_outcome& outcome, const std::string& text) {
  if (outcome.message[0] != '\0')
    return; // the first problem
  std::snprintf(outcome.message, sizeof outcome.message, "%s", text.c_str());
}

/// Waits for `request` until `deadline`; false when it did not complete
/// (the request is then freed, its buffer left to MPI).
bool complete(MPI_Request& request, double deadline) {
  Backoff backoff;
  while (true) {
    int done = 0;
    if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return false;
    if (done)
      return true;
    if (now() > deadline) {
      MPI_Request_free(&request);
      return false;
    }
    backoff.idle();
  }
}

/// Receives one message of `tag` from `source` into `data` before
/// `deadline`.
bool receive(int source, int tag, double deadline, std::vector<char>& data) {
  Backoff backoff;
  while (true) {
    int found = 0;
    MPI_Status status;
    if (MPI_Iprobe(source, tag, MPI_COMM_WORLD, &found, &status) != MPI_SUCCESS)
      return false;
    if (found) {
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      data.resize(static_cast<std::size_t>(std::max(count, 0)));
      MPI_Request request;
      if (MPI_Irecv(data.data(), count, MPI_BYTE, source, tag, MPI_COMM_WORLD,
                    &request) != MPI_SUCCESS)
        return false;
      return complete(request, deadline + 1.0);
    }
    if (now() > deadline)
      return false;
    backoff.idle();
  }
}

/// Sends `data` to `destination` before `deadline`. The buffer must stay
/// until MPI is done with it: a send that did not complete keeps it.
bool send(std::vector<char>* data, int destination, int tag, double deadline) {
  MPI_Request request;
  if (MPI_Isend(data->data(), static_cast<int>(data->size()), MPI_BYTE,
                destination, tag, MPI_COMM_WORLD, &request) != MPI_SUCCESS)
    return false;
  if (complete(request, deadline)) {
    delete data;
    return true;
  }
  return false; // data stays: MPI may still read it
}

std::string ranks_text(int first, int last) {
  return first == last ? std::to_string(first)
                       : std::to_string(first) + "-" + std::to_string(last);
}

int run(const cunumpy_mpi_job& job, cunumpy_mpi_outcome& outcome) {
  const double start = now();
  const int rank = outcome.rank, size = outcome.size;
  const double deadline = job.deadline_seconds;
  const double step = deadline / 4.0;
  int levels = 0;
  while ((1LL << levels) < size)
    ++levels;

  // The tree: the children 2^k above for each k below this rank's lowest
  // set bit, the parent 2^k below it.
  std::vector<Child> children;
  int parent = -1, parent_level = 0;
  for (int level = 0; level < levels; ++level) {
    const long long bit = 1LL << level;
    if (rank & bit) {
      parent = static_cast<int>(rank - bit);
      parent_level = level;
      break;
    }
    if (rank + bit < size)
      children.push_back(
          Child{static_cast<int>(rank + bit),
                static_cast<int>(std::min<long long>(rank + 2 * bit, size) - 1),
                start + deadline + level * step,
                false,
                false,
                false,
                MPI_REQUEST_NULL,
                {}});
  }

  // Up: each child's report, merged as it comes.
  Backoff backoff;
  std::size_t pending = children.size();
  while (pending > 0) {
    bool progress = false;
    for (Child& child : children) {
      if (child.done)
        continue;
      if (!child.ready) {
        int found = 0;
        MPI_Status status;
        if (MPI_Iprobe(child.rank, tag_ready, MPI_COMM_WORLD, &found,
                       &status) != MPI_SUCCESS)
          found = 0;
        if (found) {
          char none = 0;
          MPI_Recv(&none, 0, MPI_BYTE, child.rank, tag_ready, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
          MPI_Request go;
          if (MPI_Isend(&none, 0, MPI_BYTE, child.rank, tag_go, MPI_COMM_WORLD,
                        &go) == MPI_SUCCESS)
            complete(go, now() + step);
          child.ready = true;
          // Asked, the report is this rank's to take.
          child.deadline = std::max(child.deadline, now() + step);
          progress = true;
        }
      }
      if (child.ready && !child.receiving) {
        int found = 0;
        MPI_Status status;
        if (MPI_Iprobe(child.rank, tag_report, MPI_COMM_WORLD, &found,
                       &status) != MPI_SUCCESS)
          found = 0;
        if (found) {
          int count = 0;
          MPI_Get_count(&status, MPI_BYTE, &count);
          child.data.resize(static_cast<std::size_t>(std::max(count, 0)));
          child.receiving = MPI_Irecv(child.data.data(), count, MPI_BYTE,
                                      child.rank, tag_report, MPI_COMM_WORLD,
                                      &child.request) == MPI_SUCCESS;
          progress = true;
        }
      }
      if (child.receiving) {
        int done = 0;
        MPI_Test(&child.request, &done, MPI_STATUS_IGNORE);
        if (done) {
          child.done = true;
          --pending;
          progress = true;
          if (child.data.empty() ||
              job.add(job.context, child.data.data(), child.data.size()) != 0) {
            job.missing(job.context, child.rank, child.last);
            say(outcome, "the report of rank(s) " +
                             ranks_text(child.rank, child.last) +
                             " could not be merged");
          }
          std::vector<char>().swap(child.data);
          continue;
        }
      }
      if (now() > child.deadline) {
        if (child.receiving) {
          MPI_Cancel(&child.request);
          MPI_Request_free(&child.request);
          new std::vector<char>(std::move(child.data)); // MPI may write it
        }
        child.done = true;
        --pending;
        job.missing(job.context, child.rank, child.last);
        say(outcome, "rank(s) " + ranks_text(child.rank, child.last) +
                         " sent no report within CUNUMPY_MPI_DEADLINE=" +
                         std::to_string(static_cast<int>(deadline)) + " s");
      }
    }
    if (progress)
      backoff.busy();
    else if (pending > 0)
      backoff.idle();
  }
  if (parent >= 0) {
    const double until = start + deadline + (parent_level + 1) * step;
    char none = 0;
    MPI_Request ready;
    std::vector<char> go;
    const bool asked = MPI_Isend(&none, 0, MPI_BYTE, parent, tag_ready,
                                 MPI_COMM_WORLD, &ready) == MPI_SUCCESS &&
                       complete(ready, until) &&
                       receive(parent, tag_go, until, go);
    if (asked) {
      std::size_t length = 0;
      const char* text = job.text(job.context, &length);
      // An empty report tells the parent this rank's could not come.
      auto* data = new std::vector<char>();
      if (text != nullptr && length <= static_cast<std::size_t>(INT_MAX))
        data->assign(text, text + length);
      if (!send(data, parent, tag_report, now() + deadline))
        say(outcome, "rank " + std::to_string(parent) +
                         " did not take this rank's report");
    } else {
      say(outcome, "rank " + std::to_string(parent) +
                       " did not ask for this rank's report within "
                       "CUNUMPY_MPI_DEADLINE=" +
                       std::to_string(static_cast<int>(deadline)) + " s");
    }
  }

  // Down: the verdict and the ranks missing from the job's report.
  std::vector<char> verdict;
  if (parent < 0) {
    const int* missing = nullptr;
    std::size_t pairs = 0;
    int head[2] = {job.verdict(job.context, &missing, &pairs), 0};
    // Too many ranges to list: the ranks beyond them cannot know whether
    // they are in the job's report, and say they may not be.
    head[1] = pairs > max_missing_pairs ? 1 : 0;
    pairs = std::min(pairs, max_missing_pairs);
    verdict.resize(sizeof head + sizeof(int) * 2 * pairs);
    std::memcpy(verdict.data(), head, sizeof head);
    if (pairs > 0)
      std::memcpy(verdict.data() + sizeof head, missing,
                  sizeof(int) * 2 * pairs);
  } else if (!receive(parent, tag_verdict,
                      start + 2 * deadline + (levels + 2) * step, verdict) ||
             verdict.size() < 2 * sizeof(int)) {
    say(outcome, "the job's verdict did not come from rank " +
                     std::to_string(parent) + " within CUNUMPY_MPI_DEADLINE");
    return 0;
  }
  int head[2];
  std::memcpy(head, verdict.data(), sizeof head);
  outcome.failed = head[0];
  // After the verdict, the missing ranks' ranges (first, last).
  outcome.included = head[1] == 0 ? 1 : 0;
  const std::size_t count = (verdict.size() - sizeof head) / (2 * sizeof(int));
  for (std::size_t i = 0; i < count; ++i) {
    int range[2];
    std::memcpy(range, verdict.data() + sizeof head + 2 * sizeof(int) * i,
                sizeof range);
    if (range[0] <= rank && rank <= range[1])
      outcome.included = 0;
  }
  for (Child& child : children) {
    auto* copy = new std::vector<char>(verdict);
    send(copy, child.rank, tag_verdict,
         start + 2 * deadline + (levels + 2) * step);
  }
  return 0;
}

} // namespace

extern "C" {

const char* cunumpy_mpi_part_built_for(void) {
#if defined(OPEN_MPI)
  static const std::string text = "Open MPI v" +
                                  std::to_string(OMPI_MAJOR_VERSION) + "." +
                                  std::to_string(OMPI_MINOR_VERSION) + "." +
                                  std::to_string(OMPI_RELEASE_VERSION);
  return text.c_str();
#elif defined(MPICH_VERSION)
  return "MPICH Version: " MPICH_VERSION;
#else
  return "an MPI";
#endif
}

int cunumpy_mpi_merge(const struct cunumpy_mpi_job* job,
                      struct cunumpy_mpi_outcome* outcome) {
  outcome->rank = 0;
  outcome->size = 1;
  outcome->failed = -1;
  outcome->included = 0;
  outcome->message[0] = '\0';
  if (job == nullptr || job->version != CUNUMPY_MPI_PART_VERSION) {
    say(*outcome, "cunumpy and its MPI part are of different versions");
    return 1;
  }
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    say(*outcome, finalized ? "MPI was finalized before the ranks' reports "
                              "could be merged"
                            : "MPI is not initialized");
    return 1;
  }
  int provided = MPI_THREAD_SINGLE, main_thread = 0;
  MPI_Query_thread(&provided);
  MPI_Is_thread_main(&main_thread);
  if (!main_thread && provided < MPI_THREAD_SERIALIZED) {
    say(*outcome, "the reports are merged on a thread that MPI does not "
                  "let call it (initialized with a thread level below "
                  "MPI_THREAD_SERIALIZED)");
    return 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &outcome->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &outcome->size);
  // An error of cunumpy's calls must not end the program.
  MPI_Errhandler handler;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int base = 0x6374 + 4 * (merges++ % 16);
  tag_ready = base;
  tag_report = base + 1;
  tag_verdict = base + 2;
  tag_go = base + 3;
  int status = 1;
  try {
    job->start(job->context, outcome->rank, outcome->size);
    status = run(*job, *outcome);
  } catch (...) {
    say(*outcome, "internal error in cunumpy's MPI part");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler);
  MPI_Errhandler_free(&handler);
  return status;
}

} // extern "C"
