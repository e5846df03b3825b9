// Conjugate gradients for the 2-D Poisson problem with Kokkos Kernels
// (KokkosSparse::spmv, KokkosBlas::dot, KokkosBlas::axpby), whose
// convergence test reads the residual norm one iteration late with
// cunumpy::to_host_async, so the host never waits for the iteration it has
// just queued. A TransferBudget proves it: in the phase "iterate" the only
// copies allowed are non-blocking to_host copies of at most 8 bytes.
//
// Every scalar of the iteration (alpha, beta, the dot products) stays on the
// device: the dot products write into device views and the coefficients go
// to axpby as device views, so nothing else needs the host.
//
// Where the device is: the device of a Kokkos build with a device backend;
// on a host-only Kokkos 3 build the fake device of cunumpy's tests (real
// Kokkos Kernels kernels on a memory space that is host memory underneath
// but distinct to Kokkos, whose copies fire real Kokkos Tools events), so
// the budget sees the same copies a GPU run makes. On a host-only Kokkos 4
// build there is no device: nothing is copied and the budget holds
// trivially.
//
//   cg_poisson [--n N] [--tol T] [--max-iterations K] [--blocking-read]
//
// --blocking-read reads the norm with a blocking to_host instead: the
// budget is then violated, the report says where, and the exit status is 1.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <KokkosBlas1_axpby.hpp>
#include <KokkosBlas1_dot.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

namespace {

using cunumpy::EventKind;
using cunumpy::profiling::Limits;
using cunumpy::profiling::Rule;
using cunumpy::profiling::TransferBudget;

using MemorySpace = cunumpy::testing::example_device_space;
constexpr bool on_fake_device = !cunumpy::has_device_backend &&
                                !cunumpy::is_host_memory_space_v<MemorySpace>;
using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using Device = Kokkos::Device<ExecutionSpace, MemorySpace>;

using Matrix = KokkosSparse::CrsMatrix<double, int, Device, void, int>;
/// Vectors are n x 1 multivectors, so that axpby takes its coefficients as
/// device views (one per column).
using Vector = Kokkos::View<double**, Kokkos::LayoutLeft, Device>;
using Scalars = Kokkos::View<double*, Device>;

struct Options {
  int n = 64; // grid points per direction
  double tolerance = 1e-8;
  int max_iterations = 1000;
  bool blocking_read = false;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    const bool has_value = i + 1 < argc;
    if (argument == "--n" && has_value)
      options.n = std::atoi(argv[++i]);
    else if (argument == "--tol" && has_value)
      options.tolerance = std::atof(argv[++i]);
    else if (argument == "--max-iterations" && has_value)
      options.max_iterations = std::atoi(argv[++i]);
    else if (argument == "--blocking-read")
      options.blocking_read = true;
  }
  return options;
}

/// The 5-point Laplacian of an n x n grid (Dirichlet boundary), in CRS
/// arrays on the host.
struct HostCrs {
  std::vector<int> row_map{0};
  std::vector<int> entries;
  std::vector<double> values;
};

HostCrs assemble_laplacian(int n) {
  HostCrs crs;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const int row = i * n + j;
      auto add = [&](int column, double value) {
        crs.entries.push_back(column);
        crs.values.push_back(value);
      };
      if (i > 0)
        add(row - n, -1.0);
      if (j > 0)
        add(row - 1, -1.0);
      add(row, 4.0);
      if (j < n - 1)
        add(row + 1, -1.0);
      if (i < n - 1)
        add(row + n, -1.0);
      crs.row_map.push_back(static_cast<int>(crs.entries.size()));
    }
  }
  return crs;
}

/// || b - A x || on the host, to check the answer independently.
double true_residual(const HostCrs& crs, const std::vector<double>& b,
                     const double* x) {
  double sum = 0.0;
  for (std::size_t row = 0; row + 1 < crs.row_map.size(); ++row) {
    double ax = 0.0;
    for (int k = crs.row_map[row]; k < crs.row_map[row + 1]; ++k)
      ax += crs.values[k] * x[crs.entries[k]];
    sum += (b[row] - ax) * (b[row] - ax);
  }
  return std::sqrt(sum);
}

KOKKOS_INLINE_FUNCTION double square_root(double value) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::sqrt(value);
#else
  return Kokkos::Experimental::sqrt(value);
#endif
}

/// Runs one single-threaded kernel on the device (coefficient updates).
template <class F> void on_device(const char* label, const F& f) {
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecutionSpace>(0, 1), f);
}

struct Result {
  int iterations = 0;
  bool converged = false;
  double relative_residual = 0.0;
  double true_relative_residual = 0.0;
};

Result solve(const Options& options, TransferBudget& budget) {
  const int n = options.n;
  const int rows = n * n;
  const HostCrs crs = assemble_laplacian(n);
  // Right-hand side: a unit load, scaled by h^2.
  const double h = 1.0 / (n + 1);
  const std::vector<double> b(rows, h * h);
  double norm_b = 0.0;
  for (double value : b)
    norm_b += value * value;
  norm_b = std::sqrt(norm_b);

  Matrix A;
  Vector x("x", rows, 1), r("r", rows, 1), p("p", rows, 1), Ap("Ap", rows, 1);
  Scalars rr("rr", 1), rr_new("rr_new", 1), pAp("pAp", 1), alpha("alpha", 1),
      minus_alpha("minus_alpha", 1), beta("beta", 1), one;
  Scalars norms("residual_norms", options.max_iterations);
  {
    auto phase = budget.phase("setup");
    auto row_map = cunumpy::to_device<MemorySpace>(crs.row_map);
    auto entries = cunumpy::to_device<MemorySpace>(crs.entries);
    auto values = cunumpy::to_device<MemorySpace>(crs.values);
    A = Matrix("laplacian", rows, rows, static_cast<int>(crs.values.size()),
               values, row_map, entries);
    one = cunumpy::to_device<MemorySpace>(std::vector<double>{1.0});
    auto b_device = cunumpy::to_device<MemorySpace>(b);
    // x = 0, r = b - A x = b, p = r, rr = r.r
    Kokkos::deep_copy(Kokkos::subview(r, Kokkos::ALL, 0), b_device);
    Kokkos::deep_copy(p, r);
    KokkosBlas::dot(rr, r, r);
  }

  Result result;
  const double tolerance = options.tolerance * norm_b;
  std::optional<cunumpy::PendingHost<double>> previous;
  for (int k = 0; k < options.max_iterations; ++k) {
    auto phase = budget.phase("iterate");
    KokkosSparse::spmv("N", 1.0, A, p, 0.0, Ap);
    KokkosBlas::dot(pAp, p, Ap);
    on_device(
        "cg::alpha", KOKKOS_LAMBDA(int) {
          alpha(0) = rr(0) / pAp(0);
          minus_alpha(0) = -alpha(0);
        });
    KokkosBlas::axpby(alpha, p, one, x);        // x += alpha p
    KokkosBlas::axpby(minus_alpha, Ap, one, r); // r -= alpha A p
    KokkosBlas::dot(rr_new, r, r);
    on_device(
        "cg::beta", KOKKOS_LAMBDA(int) {
          beta(0) = rr_new(0) / rr(0);
          rr(0) = rr_new(0);
          norms(k) = square_root(rr_new(0));
        });
    KokkosBlas::axpby(one, r, beta, p); // p = r + beta p

    const auto norm = Kokkos::subview(norms, k);
    if (options.blocking_read) {
      // The host waits for this iteration: what the budget forbids.
      const double value = cunumpy::to_host(norm)();
      if (value <= tolerance) {
        result = {k + 1, true, value / norm_b, 0.0};
        break;
      }
    } else {
      // Queue the read of this iteration's norm, then look at the previous
      // one, which the device has (nearly) finished by now.
      auto current = cunumpy::to_host_async(norm);
      if (previous) {
        const double value = previous->result();
        if (value <= tolerance) {
          result = {k + 1, true, value / norm_b, 0.0};
          break;
        }
      }
      previous.emplace(std::move(current));
    }
    result.iterations = k + 1;
  }

  {
    auto phase = budget.phase("solution");
    const auto x_host = cunumpy::to_host(Kokkos::subview(x, Kokkos::ALL, 0));
    result.true_relative_residual =
        true_residual(crs, b, x_host.data()) / norm_b;
  }
  return result;
}

} // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  if (on_fake_device)
    cunumpy::testing::register_fake_device();
  std::printf("cg_poisson: %d x %d grid on %s (%s)\n", options.n, options.n,
              on_fake_device ? "the fake device" : ExecutionSpace::name(),
              options.blocking_read ? "blocking reads"
                                    : "reads one iteration late");

  cunumpy::profiling::BudgetOptions budget_options;
  budget_options.advice = cunumpy::profiling::AdviceRecording::on;
  TransferBudget budget(budget_options);
  const Result result = solve(options, budget);
  std::printf("%s in %d iterations: relative residual %.3e (recomputed on "
              "the host: %.3e)\n",
              result.converged ? "converged" : "did not converge",
              result.iterations, result.relative_residual,
              result.true_relative_residual);

  budget.require("setup",
                 Rule()
                     .allow(EventKind::to_device)
                     .ignore({EventKind::device_copy, EventKind::sync}));
  budget.require(
      "iterate",
      Rule().allow(EventKind::to_host, Limits().max_nbytes(8).blocking(false)));
  budget.require("solution",
                 Rule().allow(EventKind::to_host, Limits().max_count(1)));
  std::printf("%s", budget.report().c_str());
  // What cunumpy's advice finds in the copies (nothing here: the iteration
  // reads one scalar late, the solution comes home once).
  const auto findings = budget.advice();
  std::printf("advice: %zu finding(s)\n", findings.size());
  for (const auto& finding : findings)
    std::printf("  %s\n", finding.str().c_str());
  int status = 0;
  try {
    budget.check();
    std::printf("budget: ok\n");
  } catch (const cunumpy::TransferError& error) {
    std::printf("budget violated\n");
    status = 1;
  }
  // The recomputed residual is looser than CG's: it includes rounding.
  if (!result.converged ||
      result.true_relative_residual > 100 * options.tolerance)
    status = 1;
  return status;
}
