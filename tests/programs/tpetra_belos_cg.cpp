// Conjugate gradients on a 1-D Laplacian with Trilinos' Tpetra and Belos
// (Debian's trilinos-all-dev), under MPI, for the plugin's tests
// (tests/plugin/test_trilinos.py). Its phases: "setup" assembles the matrix
// and uploads the right-hand side to the device, "solve" runs Belos, and
// "output" downloads the solution. Tpetra 13.2 with its regions on
// (TPETRA_USE_KOKKOS_PROFILING=1) pops more regions than it pushes inside
// fillComplete: "setup" closes early, and the upload after it counts
// outside it. Trilinos' Kokkos here has no device: a logical memory space
// named "FakeDevice" stands in for one (CUNUMPY_DEVICE_SPACES=FakeDevice).

#include <BelosLinearProblem.hpp>
#include <BelosPseudoBlockCGSolMgr.hpp>
#include <BelosTpetraAdapter.hpp>
#include <Teuchos_ParameterList.hpp>
#include <Tpetra_Core.hpp>
#include <Tpetra_CrsMatrix.hpp>
#include <Tpetra_MultiVector.hpp>
#include <cstdio>
#include <vector>

namespace tpetra_belos_cg {
struct FakeDeviceNamer {
  static constexpr const char* get_name() { return "FakeDevice"; }
};
using FakeDevice = Kokkos::Experimental::LogicalMemorySpace<
    Kokkos::HostSpace, Kokkos::DefaultHostExecutionSpace, FakeDeviceNamer,
    Kokkos::Experimental::LogicalSpaceSharesAccess::shared_access>;
} // namespace tpetra_belos_cg

// Kokkos 3's logical spaces and AnonymousSpace both specialize
// MemorySpaceAccess for "any other space": say it for the pair (as
// examples/legacy_app does).
namespace Kokkos::Impl {
template <>
struct MemorySpaceAccess<Kokkos::AnonymousSpace, tpetra_belos_cg::FakeDevice> {
  enum : bool { assignable = true };
  enum : bool { accessible = true };
  enum : bool { deepcopy = true };
};
template <>
struct MemorySpaceAccess<tpetra_belos_cg::FakeDevice, Kokkos::AnonymousSpace> {
  enum : bool { assignable = true };
  enum : bool { accessible = true };
  enum : bool { deepcopy = true };
};
} // namespace Kokkos::Impl

namespace {

using tpetra_belos_cg::FakeDevice;
using Scalar = double;
using Map = Tpetra::Map<>;
using GO = Map::global_ordinal_type;
using MV = Tpetra::MultiVector<Scalar>;
using OP = Tpetra::Operator<Scalar>;
using Matrix = Tpetra::CrsMatrix<Scalar>;

Teuchos::RCP<Matrix> laplacian(const Teuchos::RCP<const Map>& map) {
  auto matrix = Teuchos::rcp(new Matrix(map, 3));
  const GO n = static_cast<GO>(map->getGlobalNumElements());
  for (std::size_t i = 0; i < map->getNodeNumElements(); ++i) {
    const GO row = map->getGlobalElement(i);
    std::vector<GO> columns;
    std::vector<Scalar> values;
    if (row > 0) {
      columns.push_back(row - 1);
      values.push_back(-1.0);
    }
    columns.push_back(row);
    values.push_back(2.0);
    if (row < n - 1) {
      columns.push_back(row + 1);
      values.push_back(-1.0);
    }
    matrix->insertGlobalValues(row, Teuchos::ArrayView<const GO>(columns),
                               Teuchos::ArrayView<const Scalar>(values));
  }
  matrix->fillComplete(); // Tpetra's unbalanced pops
  return matrix;
}

} // namespace

int main(int argc, char* argv[]) {
  Tpetra::ScopeGuard scope(&argc, &argv);
  const auto comm = Tpetra::getDefaultComm();
  const GO n = 1000;

  Kokkos::Profiling::pushRegion("setup");
  const auto map = Teuchos::rcp(new Map(n, 0, comm));
  const auto matrix = laplacian(map);
  const auto x = Teuchos::rcp(new MV(map, 1));
  const auto b = Teuchos::rcp(new MV(map, 1));
  b->putScalar(1.0);
  const std::size_t rows = map->getNodeNumElements();
  Kokkos::View<Scalar*, Kokkos::HostSpace> b_host("b_host", rows);
  Kokkos::deep_copy(b_host, 1.0);
  Kokkos::View<Scalar*, FakeDevice> b_device("b", rows);
  Kokkos::deep_copy(b_device, b_host); // after "setup" closed early
  Kokkos::Profiling::popRegion();

  Kokkos::Profiling::pushRegion("solve");
  const auto problem =
      Teuchos::rcp(new Belos::LinearProblem<Scalar, MV, OP>(matrix, x, b));
  problem->setProblem();
  const auto parameters = Teuchos::rcp(new Teuchos::ParameterList());
  parameters->set("Maximum Iterations", 2000);
  parameters->set("Convergence Tolerance", 1e-8);
  Belos::PseudoBlockCGSolMgr<Scalar, MV, OP> solver(problem, parameters);
  const bool converged = solver.solve() == Belos::Converged;
  Kokkos::Profiling::popRegion();

  Kokkos::Profiling::pushRegion("output");
  Kokkos::View<Scalar*, FakeDevice> x_device("x", rows);
  Kokkos::View<Scalar*, Kokkos::HostSpace> x_host("x_host", rows);
  Kokkos::deep_copy(x_host, x_device);
  Kokkos::Profiling::popRegion();

  if (comm->getRank() == 0)
    std::printf("tpetra_belos_cg: %s after %d iterations\n",
                converged ? "converged" : "not converged",
                solver.getNumIters());
  return converged ? 0 : 1;
}
