#ifndef CUNUMPY_PYTHON_MODULE_HPP
#define CUNUMPY_PYTHON_MODULE_HPP

// The compiled core of the Python package, cunumpy._core: one bind_<topic>
// function per source file, called in this order by the module's init.

#include <pybind11/pybind11.h>

namespace cunumpy::python {

namespace py = pybind11;

/// Kokkos initialization and finalization, the device space new arrays go
/// to (the real device or the fake device), the Python call-site provider.
void bind_lifecycle(py::module_& module);
/// DeviceArray: a Kokkos view of bytes with a shape and a dtype.
void bind_device_array(py::module_& module);
/// Copies between NumPy buffers and DeviceArrays, and on the device; copies
/// to the host without waiting (AsyncCopy) and page-locked host buffers.
void bind_conversions(py::module_& module);
/// Finding, FindingSite, the thresholds of advice.
void bind_advice(py::module_& module);
/// TransferCounter, Event, count_transfers, assert_no_transfers, markers.
void bind_profiling(py::module_& module);
/// TransferBudget, Rule, Violation.
void bind_budget(py::module_& module);
/// synchronize(), the wait of an async result, copies made by other
/// libraries (CuPy) announced to Kokkos Tools.
void bind_sync(py::module_& module);

} // namespace cunumpy::python

#endif
