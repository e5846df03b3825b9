#include "call_site.hpp"

#include <Python.h>
#include <dlfcn.h>
#include <frameobject.h>
#include <utility>

#include <cunumpy/impl/api_scope.hpp>

namespace cunumpy::python {
namespace {

/// The directory of the cunumpy package: that of this extension module
/// (cunumpy/_core*.so), found from the address of one of its functions, so
/// no caller has to tell it.
const std::string& package_directory() {
  static const std::string directory = [] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&python_caller), &info) == 0 ||
        info.dli_fname == nullptr)
      return std::string();
    std::string path = info.dli_fname;
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string()
                                      : path.substr(0, slash + 1);
  }();
  return directory;
}

bool in_package(std::string_view file) {
  const std::string& directory = package_directory();
  return !directory.empty() && file.substr(0, directory.size()) == directory;
}

const char* utf8(PyObject* text, Py_ssize_t* size) {
  const char* data = PyUnicode_AsUTF8AndSize(text, size);
  if (data == nullptr)
    PyErr_Clear();
  return data;
}

/// The site provider of the recorder: called on the thread of a copy that no
/// cunumpy call explains. It reads frames only when this thread holds the
/// GIL, and never takes it (the copy may run with the GIL released).
bool provide_site(std::string& file, int& line, std::string& function) {
  if (!Py_IsInitialized() || PyGILState_Check() == 0)
    return false;
  PythonSite site = python_caller();
  if (site.file.empty())
    return false;
  file = std::move(site.file);
  line = site.line;
  function = std::move(site.function);
  return true;
}

} // namespace

PythonSite python_caller() {
  PythonSite site;
  PyFrameObject* frame = PyEval_GetFrame(); // borrowed
  Py_XINCREF(frame);
  while (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    Py_ssize_t size = 0;
    const char* file = utf8(code->co_filename, &size);
    if (file != nullptr && !in_package(std::string_view(file, size))) {
      site.file.assign(file, size);
      site.line = PyFrame_GetLineNumber(frame);
      if (const char* name = utf8(code->co_name, &size))
        site.function.assign(name, size);
      Py_DECREF(code);
      Py_DECREF(frame);
      return site;
    }
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  return site;
}

void install_site_provider() {
  Impl::set_site_provider(&provide_site);
}

void remove_site_provider() {
  if (Impl::site_provider() == &provide_site)
    Impl::set_site_provider(nullptr);
}

std::string describe(std::string_view api, const Impl::ArrayShape& shape) {
  return Impl::describe_call(api, &shape);
}

PythonApiScope::PythonApiScope(std::string_view description, bool async)
    : site_(python_caller()),
      scope_(description, site_.file, site_.line, site_.function, async) {}

} // namespace cunumpy::python
